// Factories of the built-in heuristics (one file each); heuristic.cpp
// registers them by name.
#pragma once

#include <memory>

#include "diagnose/heuristic.hpp"

namespace sonde::diagnose::heuristics {

std::unique_ptr<Heuristic> make_performance_problem();
std::unique_ptr<Heuristic> make_application_hiccups();
std::unique_ptr<Heuristic> make_continuously_violated_requirements();
std::unique_ptr<Heuristic> make_the_ramp();
std::unique_ptr<Heuristic> make_traffic_jam();
std::unique_ptr<Heuristic> make_one_lane_bridge();
std::unique_ptr<Heuristic> make_dispensable_synchronization();
std::unique_ptr<Heuristic> make_database_olb();
std::unique_ptr<Heuristic> make_the_stifle();
std::unique_ptr<Heuristic> make_expensive_database_call();
std::unique_ptr<Heuristic> make_excessive_messaging();
std::unique_ptr<Heuristic> make_database_congestion();
std::unique_ptr<Heuristic> make_the_blob();
std::unique_ptr<Heuristic> make_empty_semi_trucks();
std::unique_ptr<Heuristic> make_time_outside_application();

}  // namespace sonde::diagnose::heuristics
