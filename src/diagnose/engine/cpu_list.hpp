// CPU lists as Linux writes them ("0-1,3"): which CPUs the system under
// test and the engine's database server may run on (config keys sut.cpus
// and database.cpus), so that on one machine they behave like separate
// machines instead of taking each other's CPU time.
#pragma once

#include <string>
#include <vector>

namespace sonde::diagnose::engine {

// "0-1,3" -> {0, 1, 3}. Throws std::invalid_argument saying what is wrong.
std::vector<int> parse_cpu_list(const std::string& text);
// {0, 1, 3} -> "0,1,3".
std::string cpu_list_text(const std::vector<int>& cpus);

}  // namespace sonde::diagnose::engine
