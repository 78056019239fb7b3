// Placeholder list; filled in by the kieker schema work.
#include <vector>

#include "format/builtin_schemas.hpp"

namespace sonde::format {

std::span<const RecordSchema* const> kieker_extra_schemas() {
  static const std::vector<const RecordSchema*> none;
  return none;
}

}  // namespace sonde::format
