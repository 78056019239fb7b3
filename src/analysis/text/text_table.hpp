// A plain-text table for terminal reports: columns padded to their widest
// cell (counting UTF-8 characters, so "µs" is two columns wide, not three),
// numbers right-aligned, the last column left-aligned and never truncated so
// long operation signatures stay intact.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace sonde::analysis {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header);
  void add_row(std::vector<std::string> cells);
  void write(std::ostream& out, const std::string& indent = "  ") const;

 private:
  std::vector<std::vector<std::string>> rows_;  // rows_[0] is the header
};

// Number of characters (code points) in UTF-8 text.
size_t display_width(const std::string& text);

}  // namespace sonde::analysis
