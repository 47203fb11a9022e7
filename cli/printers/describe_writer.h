#pragma once

// The indented "Key:  value" text of `kubectl describe`.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "cli/printers/tab_writer.h"

namespace kq::cli {

// Builds describe output: fields, nested sections and small tables, with
// two spaces of indentation per level. Values of consecutive fields line up
// (kubectl's tabwriter with padding 2); a section heading or a table starts
// a new alignment block. Thread-compatible.
class DescribeWriter {
 public:
  DescribeWriter();

  // "Key:  value" at `level`.
  void Field(int level, absl::string_view key, absl::string_view value);
  // "Key:  first" followed by one aligned line per further value, as kubectl
  // prints labels; "Key:  <none>" when `values` is empty.
  void MultiField(int level, absl::string_view key,
                  const std::vector<std::string>& values);
  // "Key:" heading a nested section.
  void Section(int level, absl::string_view key);
  // A table at `level`: the header, a line of dashes under each header cell,
  // then the rows, columns aligned.
  void Table(int level, const std::vector<std::string>& header,
             const std::vector<std::vector<std::string>>& rows);
  // Starts a new alignment block: fields after it do not line up with the
  // ones before.
  void Break();
  // A line as is, at `level`.
  void Line(int level, absl::string_view text);

  // Everything written so far.
  std::string Render() const;

 private:
  // The writer of the current alignment block.
  TabWriter& Current();

  std::vector<TabWriter> blocks_;
};

}  // namespace kq::cli
