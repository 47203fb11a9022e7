#pragma once

// Reads samples out of Prometheus's text format, for the metrics tests.

#include <limits>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace kq::metrics {

// The value of the one sample of `name` whose labels include `labels`;
// nullopt when none has them. Label values are compared unescaped only for
// the simple values tests use.
inline std::optional<double> Sample(
    absl::string_view text, absl::string_view name,
    const std::map<std::string, std::string>& labels = {}) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    const size_t end_name = line.find_first_of("{ ");
    if (line.substr(0, end_name) != name) continue;
    std::map<std::string, std::string> have;
    absl::string_view rest = line.substr(end_name);
    if (!rest.empty() && rest[0] == '{') {
      const size_t close = rest.find("} ");
      for (absl::string_view pair :
           absl::StrSplit(rest.substr(1, close - 1), "\",")) {
        const size_t eq = pair.find("=\"");
        if (eq == absl::string_view::npos) continue;
        absl::string_view value = pair.substr(eq + 2);
        if (!value.empty() && value.back() == '"') value.remove_suffix(1);
        have[std::string(pair.substr(0, eq))] = std::string(value);
      }
      rest = rest.substr(close + 1);
    }
    bool match = true;
    for (const auto& [k, v] : labels) {
      auto it = have.find(k);
      if (it == have.end() || it->second != v) match = false;
    }
    if (!match) continue;
    double value = 0;
    absl::string_view number = absl::StripAsciiWhitespace(rest);
    if (number == "+Inf") return std::numeric_limits<double>::infinity();
    if (absl::SimpleAtod(number, &value)) return value;
  }
  return std::nullopt;
}

}  // namespace kq::metrics
