#pragma once

#include <cctype>
#include <string>

namespace kq::federation {

// A Kueue case name as a gtest name: runs of anything but letters and
// digits become one '_', lower-to-upper case changes too, all lower case
// ("stepSize=2, five remotes — first batch is exactly 2" ->
// "step_size_2_five_remotes_first_batch_is_exactly_2").
inline std::string SnakeCase(const std::string& name) {
  std::string out;
  char prev = 0;
  for (char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '\'') continue;
    if (u < 0x80 && std::isalnum(u)) {
      if (std::isupper(u) && prev != 0 &&
          (std::islower(static_cast<unsigned char>(prev)) ||
           std::isdigit(static_cast<unsigned char>(prev)))) {
        out += '_';
      }
      out += static_cast<char>(std::tolower(u));
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
    prev = c;
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

}  // namespace kq::federation
