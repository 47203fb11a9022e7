#include "cli/printers/tab_writer.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace kq::cli {

TabWriter::TabWriter(int min_width, int padding)
    : min_width_(min_width), padding_(padding) {}

void TabWriter::AddLine(std::vector<std::string> cells) {
  lines_.push_back(std::move(cells));
}

StreamingTabWriter::StreamingTabWriter(int min_width, int padding)
    : min_width_(min_width), padding_(padding) {}

std::string StreamingTabWriter::Line(const std::vector<std::string>& cells) {
  if (widths_.size() < cells.size()) {
    widths_.resize(cells.size(), 0);
  }
  std::string line;
  for (size_t col = 0; col < cells.size(); ++col) {
    line += cells[col];
    if (col + 1 == cells.size()) {
      break;
    }
    const int width = DisplayWidth(cells[col]);
    widths_[col] = std::max({widths_[col], min_width_, width + padding_});
    line.append(widths_[col] - width, ' ');
  }
  while (!line.empty() && line.back() == ' ') {
    line.pop_back();
  }
  line += '\n';
  return line;
}

std::string StreamingTabWriter::Lines(
    const std::vector<std::vector<std::string>>& lines) {
  for (const std::vector<std::string>& cells : lines) {
    if (widths_.size() < cells.size()) {
      widths_.resize(cells.size(), 0);
    }
    for (size_t col = 0; col + 1 < cells.size(); ++col) {
      widths_[col] =
          std::max(widths_[col], DisplayWidth(cells[col]) + padding_);
    }
  }
  std::string out;
  for (const std::vector<std::string>& cells : lines) {
    out += Line(cells);
  }
  return out;
}

int DisplayWidth(const std::string& text) {
  int width = 0;
  for (unsigned char c : text) {
    // Continuation bytes (10xxxxxx) do not start a code point.
    if ((c & 0xC0) != 0x80) {
      ++width;
    }
  }
  return width;
}

std::string TabWriter::Render() const {
  // widths[i][col] is the padded width of cell `col` of line i, or 0 when
  // that cell is the line's last (unpadded) one or absent.
  std::vector<std::vector<int>> widths(lines_.size());
  for (size_t i = 0; i < lines_.size(); ++i) {
    widths[i].assign(lines_[i].size(), 0);
  }
  size_t max_cells = 0;
  for (const auto& line : lines_) {
    max_cells = std::max(max_cells, line.size());
  }
  // A column block is a maximal run of consecutive lines in which the cell
  // at `col` is followed by another cell.
  for (size_t col = 0; col + 1 < max_cells; ++col) {
    size_t i = 0;
    while (i < lines_.size()) {
      if (lines_[i].size() <= col + 1) {
        ++i;
        continue;
      }
      size_t end = i;
      int widest = 0;
      while (end < lines_.size() && lines_[end].size() > col + 1) {
        widest = std::max(widest, DisplayWidth(lines_[end][col]));
        ++end;
      }
      int width = std::max(min_width_, widest + padding_);
      for (size_t j = i; j < end; ++j) {
        widths[j][col] = width;
      }
      i = end;
    }
  }

  std::string out;
  for (size_t i = 0; i < lines_.size(); ++i) {
    std::string line;
    for (size_t col = 0; col < lines_[i].size(); ++col) {
      const std::string& cell = lines_[i][col];
      line += cell;
      if (col + 1 < lines_[i].size()) {
        line.append(widths[i][col] - DisplayWidth(cell), ' ');
      }
    }
    while (!line.empty() && line.back() == ' ') {
      line.pop_back();
    }
    out += line;
    out += '\n';
  }
  return out;
}

}  // namespace kq::cli
