// Placeholder list; filled in by the system schema work.
#include <vector>

#include "format/builtin_schemas.hpp"

namespace sonde::format {

std::span<const RecordSchema* const> system_schemas() {
  static const std::vector<const RecordSchema*> none;
  return none;
}

}  // namespace sonde::format
