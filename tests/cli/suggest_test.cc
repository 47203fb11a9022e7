// Unknown commands and flags: the edit distance, the suggestions, and the
// message, drawn from whatever commands a CLI::App has registered.

#include "cli/suggest.h"

#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kq::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(EditDistanceTest, CountsEditsIgnoringCase) {
  struct Case {
    const char* a;
    const char* b;
    int want;
  } cases[] = {
      {"", "", 0},          {"list", "list", 0},      {"lsit", "list", 2},
      {"Get", "get", 0},    {"ge", "get", 1},         {"", "get", 3},
      {"wach", "watch", 1}, {"kitten", "sitting", 3},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(std::string(tc.a) + " / " + tc.b);
    EXPECT_EQ(EditDistance(tc.a, tc.b), tc.want);
    EXPECT_EQ(EditDistance(tc.b, tc.a), tc.want);
  }
}

TEST(SuggestionsTest, NearestFirstWithinTwoOrByPrefix) {
  const std::vector<std::string> commands = {"apply",  "get", "list",
                                             "submit", "run", "watch"};
  EXPECT_THAT(Suggestions("lsit", commands), ElementsAre("list"));
  EXPECT_THAT(Suggestions("gte", commands), ElementsAre("get"));
  // A prefix is suggested however far it is; "run" is two edits away.
  EXPECT_THAT(Suggestions("sub", commands), ElementsAre("submit", "run"));
  EXPECT_THAT(Suggestions("frobnicate", commands), IsEmpty());
}

// A `kq` of the test's own: the suggestions come from what it registered,
// "list" included, not from a list of kq's.
class ReportUnknownTest : public ::testing::Test {
 protected:
  ReportUnknownTest() : app_("test", "kq") {
    app_.require_subcommand(1);
    app_.fallthrough();
    app_.add_option("--server", server_);
    CLI::App* get = app_.add_subcommand("get", "");
    get->add_option("kind", kind_);
    get->add_option("-n,--namespace", namespace_);
    app_.add_subcommand("list", "");
    app_.add_subcommand("watch", "");
  }

  // Parses `args` as RunCli does; the message for a parse error.
  std::string Report(std::vector<std::string> args) {
    args.insert(args.begin(), "kq");
    std::vector<const char*> argv;
    for (const std::string& arg : args) argv.push_back(arg.c_str());
    std::ostringstream err;
    try {
      app_.parse(static_cast<int>(argv.size()), argv.data());
      ADD_FAILURE() << "parsed";
    } catch (const CLI::ParseError& e) {
      if (!ReportUnknownCommandOrFlag(app_, args, err)) return "(CLI11's)";
    }
    return err.str();
  }

  CLI::App app_;
  std::string server_;
  std::string kind_;
  std::string namespace_;
};

TEST_F(ReportUnknownTest, UnknownCommandWithSuggestion) {
  EXPECT_EQ(Report({"--server", "h:1", "lsit", "cq"}),
            "error: unknown command \"lsit\" for \"kq\"\n"
            "\n"
            "Did you mean this?\n"
            "\tlist\n"
            "\n"
            "Run 'kq --help' for usage.\n");
}

TEST_F(ReportUnknownTest, UnknownCommandWithoutSuggestion) {
  EXPECT_EQ(Report({"frobnicate"}),
            "error: unknown command \"frobnicate\" for \"kq\"\n"
            "Run 'kq --help' for usage.\n");
}

TEST_F(ReportUnknownTest, UnknownFlagOfACommand) {
  EXPECT_EQ(Report({"get", "cq", "--namspace=a"}),
            "error: unknown flag: --namspace\n"
            "\n"
            "Did you mean this?\n"
            "\t--namespace\n"
            "\n"
            "See 'kq get --help' for usage.\n");
  EXPECT_EQ(Report({"--frob", "get", "cq"}),
            "error: unknown flag: --frob\n"
            "See 'kq get --help' for usage.\n");
}

TEST_F(ReportUnknownTest, OtherErrorsAreCLI11s) {
  EXPECT_EQ(Report({}), "(CLI11's)");
  EXPECT_EQ(Report({"get", "cq", "name", "extra"}), "(CLI11's)");
  EXPECT_EQ(Report({"get", "--namespace"}), "(CLI11's)");
}

}  // namespace
}  // namespace kq::cli
