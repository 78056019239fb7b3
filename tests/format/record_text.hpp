// Every field of a record as text, doubles bit-exact (hexfloat), so equal
// strings mean equal records: for tests that compare what two readers saw.
#pragma once

#include <sstream>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "format/record.hpp"

namespace sonde::format::test {

inline std::string describe_record(const Record& r) {
  std::ostringstream s;
  s << r.schema->class_name << "@" << r.logging_timestamp;
  for (const Value& v : r.values) {
    s << "|";
    std::visit(
        [&](const auto& x) {
          using X = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<X, std::vector<std::string_view>>) {
            s << "[";
            for (auto e : x) s << e << ",";
            s << "]";
          } else if constexpr (std::is_same_v<X, double>) {
            s << std::hexfloat << x;
          } else {
            s << x;
          }
        },
        v);
  }
  return s.str();
}

}  // namespace sonde::format::test
