#pragma once

// Column alignment the way kubectl gets it from Go's text/tabwriter.

#include <string>
#include <vector>

namespace kq::cli {

// Collects lines of cells and renders them with aligned columns, following
// text/tabwriter's rules (which kubectl uses for both `get` tables and
// `describe`): every cell except a line's last is padded to the width of its
// column, where a column's width is computed over the consecutive lines that
// have a padded cell in that column. A line with a single cell therefore
// ends every column block, which is how `describe` sections re-align.
//
// Trailing spaces of each line are trimmed (kubectl leaves them; nothing
// reads them). Widths count UTF-8 code points. Thread-compatible.
class TabWriter {
 public:
  // `min_width`: the smallest width of a padded cell, padding included;
  // `padding`: spaces added after the widest cell of a column.
  TabWriter(int min_width, int padding);

  // Appends a line. An empty vector is an empty line.
  void AddLine(std::vector<std::string> cells);

  // Renders all lines, each ending with '\n'.
  std::string Render() const;

 private:
  int min_width_;
  int padding_;
  std::vector<std::vector<std::string>> lines_;
};

// Aligns lines that must be printed as they come (`kq watch`): each cell
// but a line's last is padded to the widest cell seen so far in its column
// (at least `min_width`, plus `padding`), so columns stay put unless a
// wider value arrives; earlier lines are never revisited. Trailing spaces
// are trimmed. Thread-compatible.
class StreamingTabWriter {
 public:
  StreamingTabWriter(int min_width, int padding);

  // The aligned line for `cells`, ending with '\n'.
  std::string Line(const std::vector<std::string>& cells);
  // Lines printed together (a header with the first rows): the widths
  // grow over all of them first, so they line up with each other.
  std::string Lines(const std::vector<std::vector<std::string>>& lines);

 private:
  int min_width_;
  int padding_;
  std::vector<int> widths_;
};

// Number of UTF-8 code points in `text`.
int DisplayWidth(const std::string& text);

}  // namespace kq::cli
