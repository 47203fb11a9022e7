#include "cli/printers/describe_writer.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "cli/printers/tab_writer.h"

namespace kq::cli {
namespace {

// kubectl describe's tabwriter: no minimum width, padding 2.
constexpr int kDescribePadding = 2;

std::string Indent(int level) { return std::string(2 * level, ' '); }

}  // namespace

DescribeWriter::DescribeWriter() { blocks_.emplace_back(0, kDescribePadding); }

TabWriter& DescribeWriter::Current() { return blocks_.back(); }

void DescribeWriter::Field(int level, absl::string_view key,
                           absl::string_view value) {
  Current().AddLine(
      {absl::StrCat(Indent(level), key, ":"), std::string(value)});
}

void DescribeWriter::MultiField(int level, absl::string_view key,
                                const std::vector<std::string>& values) {
  if (values.empty()) {
    Field(level, key, "<none>");
    return;
  }
  Field(level, key, values.front());
  for (size_t i = 1; i < values.size(); ++i) {
    // An empty first cell keeps the value in the key's column block.
    Current().AddLine({"", values[i]});
  }
}

void DescribeWriter::Section(int level, absl::string_view key) {
  // A single-cell line ends every column block by itself.
  Current().AddLine({absl::StrCat(Indent(level), key, ":")});
}

void DescribeWriter::Table(int level, const std::vector<std::string>& header,
                           const std::vector<std::vector<std::string>>& rows) {
  // A table gets its own block so that its columns never stretch (or get
  // stretched by) the fields around it.
  auto with_indent = [level](std::vector<std::string> cells) {
    if (!cells.empty()) {
      cells.front() = absl::StrCat(Indent(level), cells.front());
    }
    return cells;
  };
  std::vector<std::string> dashes;
  for (const std::string& cell : header) {
    dashes.push_back(std::string(DisplayWidth(cell), '-'));
  }
  Break();
  Current().AddLine(with_indent(header));
  Current().AddLine(with_indent(dashes));
  for (const std::vector<std::string>& row : rows) {
    Current().AddLine(with_indent(row));
  }
  Break();
}

void DescribeWriter::Break() { blocks_.emplace_back(0, kDescribePadding); }

void DescribeWriter::Line(int level, absl::string_view text) {
  Current().AddLine({absl::StrCat(Indent(level), text)});
}

std::string DescribeWriter::Render() const {
  std::string out;
  for (const TabWriter& block : blocks_) {
    out += block.Render();
  }
  return out;
}

}  // namespace kq::cli
