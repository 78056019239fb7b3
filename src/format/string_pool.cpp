#include "format/string_pool.hpp"

namespace sonde::format {

std::string_view StringPool::intern(std::string_view s) {
  if (auto it = index_.find(s); it != index_.end()) return *it;
  const std::string& stored = storage_.emplace_back(s);
  std::string_view view = stored;
  index_.insert(view);
  return view;
}

}  // namespace sonde::format
