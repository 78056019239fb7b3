// A native log whose operations carry the names libsonde's symbolizer gives
// C++ functions: a return type on a template instance, the standard
// library's spelled-out types, an anonymous namespace, members of a shared
// library, a free function of the executable. Every view of sonde is
// tested on it for names as C++ users write them (format/operation_name.hpp).
#pragma once

#include <string>

#include "format/byte_sink.hpp"
#include "format/native_writer.hpp"

namespace sonde::test {

struct CppNamedOperation {
  const char* recorded;  // as the symbolizer demangled it
  const char* shown;     // as every sonde view shows it
  const char* module;
  bool manual = false;  // a manual probe's name, kept as the program gave it
};

// Called in this order, nested as main's callees (total_area calls area).
inline constexpr CppNamedOperation kCppNames[] = {
    {"main", "main", "/opt/shapes/bin/shapes-app"},
    {"Inventory::add(std::unique_ptr<shapes::Shape, std::default_delete<shapes::Shape> >)",
     "Inventory::add(std::unique_ptr<shapes::Shape>)", "/opt/shapes/bin/shapes-app"},
    {"shapes::total_area(std::vector<std::unique_ptr<shapes::Shape, "
     "std::default_delete<shapes::Shape> >, std::allocator<std::unique_ptr<shapes::Shape, "
     "std::default_delete<shapes::Shape> > > > const&)",
     "shapes::total_area(std::vector<std::unique_ptr<shapes::Shape>> const&)",
     "/opt/shapes/lib/libshapes.so.1"},
    {"shapes::Circle::area() const", "shapes::Circle::area() const",
     "/opt/shapes/lib/libshapes.so.1"},
    {"(anonymous namespace)::report(std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> > const&, double)",
     "(anonymous namespace)::report(std::string const&, double)", "/opt/shapes/bin/shapes-app"},
    {"(anonymous namespace)::Db* std::__get_helper<0ul, (anonymous namespace)::Db*, "
     "std::default_delete<(anonymous namespace)::Db> >(std::_Tuple_impl<0ul, (anonymous "
     "namespace)::Db*, std::default_delete<(anonymous namespace)::Db> >&)",
     "std::__get_helper<0ul, (anonymous namespace)::Db*, std::default_delete<(anonymous "
     "namespace)::Db>>(std::_Tuple_impl<0ul, (anonymous namespace)::Db*, "
     "std::default_delete<(anonymous namespace)::Db>>&)",
     "/opt/shapes/bin/shapes-app"},
    {"GET /shapes", "GET /shapes", "/opt/shapes/bin/shapes-app", true},
};
inline constexpr int kCppNamedTraces = 3;

// main -> {add, total_area -> area, report, __get_helper, GET /shapes}, kCppNamedTraces
// times; false if the file could not be written.
inline bool write_cpp_names_log(const std::string& path) {
  format::FileSink sink(path);
  if (!sink.ok()) return false;
  format::NativeWriter w(sink);
  if (!w.begin()) return false;
  w.meta("host", "shapes-host");
  w.clock(0, 1'700'000'000'000'000'000, 1.0);
  w.thread(0, 4242, "main");
  uint32_t id = 1;
  for (const CppNamedOperation& op : kCppNames)
    w.operation(id++, op.recorded,
                op.manual ? format::native::OperationKind::kManual
                          : format::native::OperationKind::kFunction,
                op.module, 0, "", 0);
  w.begin_events(0, 0);
  uint64_t t = 0;
  for (int trace = 0; trace < kCppNamedTraces; ++trace) {
    w.trace_begin(t, static_cast<uint64_t>(trace + 1), -1, -1);
    w.enter(t += 10, 1);
    w.enter(t += 10, 2);
    w.exit(t += 100, 2);
    w.enter(t += 10, 3);
    w.enter(t += 10, 4);
    w.exit(t += 300, 4);
    w.exit(t += 10, 3);
    w.enter(t += 10, 5);
    w.exit(t += 50, 5);
    w.enter(t += 10, 6);
    w.exit(t += 20, 6);
    w.enter(t += 10, 7);
    w.exit(t += 5, 7);
    w.exit(t += 10, 1);
    t += 1000;
  }
  w.end_events();
  return w.finish(uint64_t{14} * kCppNamedTraces, 0);  // enter and exit events
}

}  // namespace sonde::test
