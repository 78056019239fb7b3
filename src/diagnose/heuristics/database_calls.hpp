// The time requests spend in database calls, from the database-call probe
// alone (sonde.record.DatabaseCall): per request, the summed duration of
// the calls its traces made (request_services.hpp), next to its response
// time. This is the database evidence of an embedded database (SQLite),
// which has no server whose CPU or locks a sampler could read: the calls'
// own time is all there is (docs/diagnose/heuristics.md, "Embedded
// databases").
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "diagnose/experiment_data.hpp"

namespace sonde::diagnose::heuristics {

// Whether the database of an experiment runs inside the system under test:
// no database server was sampled (experiment.json has no
// samplers.postgresql) and no call went to a server (no DatabaseCall
// names PostgreSQL as its product or a postgresql:// URL). SQLite's calls,
// and calls the program reported itself, are in-process.
bool database_in_process(const Experiment& e, const LogRecords& calls);

struct RequestDatabaseTime {
  std::string service;
  double response_ms = 0;
  double database_ms = 0;  // all database calls of its traces
  size_t calls = 0;
};

struct DatabaseCallTime {
  // The successful requests that were attributed to a trace, with their
  // database time (0 for a request whose traces made no call).
  std::vector<RequestDatabaseTime> requests;
  size_t total_requests = 0;  // successful requests of the experiment
  // Database time that no attributed request made (background work, or
  // requests whose trace was not found).
  double unattributed_ms = 0;
  double all_calls_ms = 0;
  std::string error;  // the log could not be read
};

// Cached per experiment (the traces and calls are read once).
const DatabaseCallTime& database_call_time(const Experiment& e);

}  // namespace sonde::diagnose::heuristics
