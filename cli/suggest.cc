#include "cli/suggest.h"

#include <algorithm>
#include <cstddef>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace kq::cli {
namespace {

// cobra's SuggestionsMinimumDistance: "lsit" is 2 from "list".
constexpr int kMaxSuggestionDistance = 2;

// The command word of `args`: the first argument that is neither a flag of
// `app` nor the value of one, or "" when there is none before "--".
std::string CommandWord(const CLI::App& app,
                        const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") return "";
    if (arg.size() < 2 || arg[0] != '-') return arg;
    if (arg.find('=') != std::string::npos) continue;
    const CLI::Option* option = app.get_option_no_throw(arg);
    if (option != nullptr && option->get_items_expected_max() > 0) ++i;
  }
  return "";
}

void PrintSuggestions(const std::vector<std::string>& suggestions,
                      std::ostream& err) {
  if (suggestions.empty()) return;
  err << "\nDid you mean this?\n";
  for (const std::string& s : suggestions) err << "\t" << s << "\n";
  err << "\n";
}

// "--namespace" for each long name of the options of `app`.
void AddLongFlags(const CLI::App& app, std::vector<std::string>& flags) {
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) {
      flags.push_back("--" + name);
    }
  }
}

}  // namespace

int EditDistance(absl::string_view a, absl::string_view b) {
  // One row of the dynamic programme at a time.
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int above = row[j];
      const bool same =
          absl::ascii_tolower(a[i - 1]) == absl::ascii_tolower(b[j - 1]);
      row[j] =
          std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> Suggestions(
    absl::string_view typed, const std::vector<std::string>& candidates) {
  std::vector<std::pair<int, std::string>> close;
  for (const std::string& candidate : candidates) {
    const int distance = EditDistance(typed, candidate);
    const bool prefix =
        !typed.empty() && absl::StartsWithIgnoreCase(candidate, typed);
    if (distance <= kMaxSuggestionDistance || prefix) {
      close.emplace_back(
          prefix ? std::min(distance, kMaxSuggestionDistance) : distance,
          candidate);
    }
  }
  std::stable_sort(
      close.begin(), close.end(),
      [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (auto& [distance, name] : close) {
    if (std::find(out.begin(), out.end(), name) == out.end()) {
      out.push_back(std::move(name));
    }
  }
  return out;
}

bool ReportUnknownCommandOrFlag(const CLI::App& app,
                                const std::vector<std::string>& args,
                                std::ostream& err) {
  const std::string& program = app.get_name();
  // 1. The command, as cobra looks for it before it parses any flag.
  const std::string word = CommandWord(app, args);
  const std::vector<const CLI::App*> commands =
      app.get_subcommands([](const CLI::App*) { return true; });
  if (!word.empty() && std::none_of(commands.begin(), commands.end(),
                                    [&word](const CLI::App* c) {
                                      return c->check_name(word);
                                    })) {
    std::vector<std::string> names;
    for (const CLI::App* command : commands) {
      names.push_back(command->get_name());
      for (const std::string& alias : command->get_aliases()) {
        names.push_back(alias);
      }
    }
    err << "error: unknown command \"" << word << "\" for \"" << program
        << "\"\n";
    PrintSuggestions(Suggestions(word, names), err);
    err << "Run '" << program << " --help' for usage.\n";
    return true;
  }

  // 2. A flag neither the command nor kq itself has (CLI11 leaves it over).
  std::string unknown;
  for (const std::string& arg : app.remaining(/*recurse=*/true)) {
    if (arg.size() >= 2 && arg[0] == '-') {
      unknown = arg.substr(0, arg.find('='));
      break;
    }
  }
  if (unknown.empty()) return false;
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  std::vector<std::string> flags;
  std::string usage = program;
  for (const CLI::App* command : parsed) {
    AddLongFlags(*command, flags);
    usage += " " + command->get_name();
  }
  AddLongFlags(app, flags);
  err << "error: unknown flag: " << unknown << "\n";
  // A one-letter flag is a letter or two from most others: no guess.
  if (absl::StartsWith(unknown, "--")) {
    PrintSuggestions(Suggestions(unknown, flags), err);
  }
  err << "See '" << usage << " --help' for usage.\n";
  return true;
}

}  // namespace kq::cli
