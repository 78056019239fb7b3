#include "analysis/text/text_table.hpp"

#include <algorithm>

namespace sonde::analysis {

size_t display_width(const std::string& text) {
  size_t n = 0;
  for (unsigned char c : text) {
    if ((c & 0xc0u) != 0x80u) ++n;  // count every byte that starts a character
  }
  return n;
}

TextTable::TextTable(std::vector<std::string> header) { rows_.push_back(std::move(header)); }

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(rows_.front().size());
  rows_.push_back(std::move(cells));
}

void TextTable::write(std::ostream& out, const std::string& indent) const {
  const size_t columns = rows_.front().size();
  std::vector<size_t> width(columns, 0);
  for (const auto& row : rows_) {
    for (size_t c = 0; c < columns; ++c) width[c] = std::max(width[c], display_width(row[c]));
  }
  for (const auto& row : rows_) {
    std::string line = indent;
    for (size_t c = 0; c < columns; ++c) {
      const std::string& cell = row[c];
      if (c + 1 == columns) {
        line += cell;
      } else {
        line.append(width[c] - display_width(cell), ' ');
        line += cell;
        line += "  ";
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
}

}  // namespace sonde::analysis
