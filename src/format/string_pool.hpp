// Interns strings so that records can hold std::string_view safely.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <unordered_set>

namespace sonde::format {

class StringPool {
 public:
  // Returns a view that stays valid for the life of the pool. Equal inputs
  // return views of the same storage, so views can be compared by pointer.
  std::string_view intern(std::string_view s);
  size_t size() const { return index_.size(); }

 private:
  std::deque<std::string> storage_;  // deque: growth never moves elements
  std::unordered_set<std::string_view> index_;
};

}  // namespace sonde::format
