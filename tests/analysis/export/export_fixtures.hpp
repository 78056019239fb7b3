// Hand-built traces for the exporter tests (Chrome, OTLP, flame graph):
// plain traces and stitched ones, with known times, so every expected
// number follows from the numbers written here.
#pragma once

#include <string_view>
#include <vector>

#include "analysis/model/stitched_trace.hpp"
#include "analysis/model/trace_model.hpp"

namespace sonde::analysis::test {

inline Execution exec(std::string_view op, std::string_view component, int64_t tin, int64_t tout,
                      int32_t eoi, int32_t ess, std::string_view host = "h1") {
  Execution e;
  e.operation = op;
  e.component = component;
  e.host = host;
  e.tin = tin;
  e.tout = tout;
  e.eoi = eoi;
  e.ess = ess;
  return e;
}

inline Trace make_trace(int64_t id, int64_t thread, std::vector<Execution> executions,
                        std::string_view host = "h1") {
  Trace t;
  t.trace_id = id;
  t.thread_id = thread;
  t.host = host;
  t.parent_trace_id = id;
  t.executions = std::move(executions);
  return t;
}

// Epoch-like nanoseconds so time origins and precision matter.
constexpr int64_t kT0 = 1'700'000'000'123'456'789;

// main[0,1000] { a.Svc.handle[100,400] { Dao.query[150,250] }  Svc.submit[500,900] }
// plus one failed call: Dao.query in submit fails [600,700].
inline Trace sample_trace(int64_t id = 10, int64_t thread = 7) {
  Execution failed = exec("void a.Dao.query(int)", "a.Dao", kT0 + 600, kT0 + 700, 4, 2);
  failed.failed = true;
  failed.cause = "java.io.IOException: disk";
  return make_trace(id, thread,
                    {exec("void a.Main.main(java.lang.String[])", "a.Main", kT0, kT0 + 1000, 0, 0),
                     exec("int a.Svc.handle(int)", "a.Svc", kT0 + 100, kT0 + 400, 1, 1),
                     exec("void a.Dao.query(int)", "a.Dao", kT0 + 150, kT0 + 250, 2, 2),
                     exec("void a.Svc.submit()", "a.Svc", kT0 + 500, kT0 + 900, 3, 1), failed});
}

// The sample trace as root part; a part on thread 8 continues it from
// Svc.submit (eoi 3): worker[550,850] { step[600,700] }; a part on host h2
// continues it from the worker: remote[610,690].
inline StitchedTrace stitched_sample() {
  StitchedTrace s;
  s.parts.push_back(SubTrace{sample_trace(10, 7), -1, -1});
  Trace worker = make_trace(11, 8,
                            {exec("void a.Worker.run()", "a.Worker", kT0 + 550, kT0 + 850, 0, 0),
                             exec("void a.Worker.step()", "a.Worker", kT0 + 600, kT0 + 700, 1, 1)});
  worker.parent_trace_id = 10;
  worker.parent_order_id = 3;
  s.parts.push_back(SubTrace{worker, 0, 3});
  Trace remote = make_trace(
      12, 3, {exec("void b.Api.serve()", "b.Api", kT0 + 610, kT0 + 690, 0, 0, "h2")}, "h2");
  remote.parent_trace_id = 11;
  remote.parent_order_id = 1;
  s.parts.push_back(SubTrace{remote, 1, 1});
  return s;
}

inline size_t execution_count(const StitchedTrace& s) {
  size_t n = 0;
  for (const SubTrace& p : s.parts) n += p.trace.executions.size();
  return n;
}

}  // namespace sonde::analysis::test
