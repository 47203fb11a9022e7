#pragma once

// What `kq` says about a command or flag it does not know: the name, and
// the registered names the user probably meant, as kubectl (cobra) does:
//
//   error: unknown command "lsit" for "kq"
//
//   Did you mean this?
//           list
//
//   Run 'kq --help' for usage.

#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/string_view.h"

namespace kq::cli {

// The Levenshtein distance of `a` and `b` (insertions, deletions and
// substitutions of one character each), ignoring ASCII case.
int EditDistance(absl::string_view a, absl::string_view b);

// The names among `candidates` that someone who typed `typed` probably
// meant: those within edit distance 2 of it (cobra's default
// SuggestionsMinimumDistance) and those it is a prefix of, nearest first,
// ties in the order of `candidates`. Empty when none is close.
std::vector<std::string> Suggestions(
    absl::string_view typed, const std::vector<std::string>& candidates);

// Called with the `app` whose parse of `args` (args[0] is the program) just
// failed. When the reason is a command `app` has not registered, or a flag
// none of the parsed commands has, prints kubectl's message naming it, with
// the suggestions drawn from the registered commands or flags, and returns
// true; otherwise prints nothing and returns false, and CLI11's own message
// is the one to print.
bool ReportUnknownCommandOrFlag(const CLI::App& app,
                                const std::vector<std::string>& args,
                                std::ostream& err);

}  // namespace kq::cli
