// kq's logging as a log pipeline and a person read it: Init's text and
// JSON lines on the real stderr (redirected to a file), the fields of
// With, and JSON's escaping.

#include "server/logging/logging.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/spdlog.h"

#include "tests/testing/temp_dir.h"

namespace kq::logging {
namespace {

using ::testing::ElementsAre;
using ::testing::MatchesRegex;

// What `log` writes to stderr (file descriptor 2, where Init's sinks
// write), one string a line.
std::vector<std::string> StderrLines(const std::function<void()>& log) {
  kq::testing::ScopedTempDir dir("logging");
  const std::string path = dir.File("stderr");
  std::fflush(stderr);
  const int file = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const int saved = dup(STDERR_FILENO);
  EXPECT_GE(file, 0);
  EXPECT_GE(saved, 0);
  dup2(file, STDERR_FILENO);
  close(file);
  log();
  std::fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::string> lines = absl::StrSplit(text.str(), '\n');
  // The text ends with a newline: no line after it.
  EXPECT_EQ(lines.back(), "") << text.str();
  lines.pop_back();
  return lines;
}

nlohmann::ordered_json ParseLine(const std::string& line) {
  nlohmann::ordered_json parsed =
      nlohmann::ordered_json::parse(line, nullptr,
                                    /*allow_exceptions=*/false);
  EXPECT_TRUE(parsed.is_object()) << line;
  return parsed;
}

constexpr char kTimestamp[] =
    "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z";

TEST(ParseFormatTest, TextAndJson) {
  EXPECT_EQ(*ParseFormat("text"), Format::kText);
  EXPECT_EQ(*ParseFormat("json"), Format::kJson);
  EXPECT_EQ(ParseFormat("JSON").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseFormat("logfmt").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(InitTest, UnknownLevelIsInvalidArgument) {
  EXPECT_EQ(Init({.level = "loud"}).code(), absl::StatusCode::kInvalidArgument);
}

TEST(JsonFormatTest, EveryLineIsAnObjectWithTheStandardKeysFirst) {
  ASSERT_TRUE(Init({.level = "debug", .format = Format::kJson}).ok());
  const std::vector<std::string> lines = StderrLines([] {
    spdlog::info("kqd serving on {}", "127.0.0.1:7070");
    spdlog::debug("a detail");
    spdlog::warn("a warning");
    spdlog::error("an error");
    spdlog::trace("below the level");
  });
  ASSERT_EQ(lines.size(), 4u);
  const char* want_levels[] = {"info", "debug", "warn", "error"};
  for (size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE(lines[i]);
    const nlohmann::ordered_json line = ParseLine(lines[i]);
    std::vector<std::string> keys;
    for (const auto& [key, value] : line.items()) keys.push_back(key);
    EXPECT_THAT(keys, ElementsAre("ts", "level", "logger", "msg"));
    EXPECT_THAT(line["ts"].get<std::string>(), MatchesRegex(kTimestamp));
    EXPECT_EQ(line["level"], want_levels[i]);
    EXPECT_EQ(line["logger"], "kqd");
  }
  EXPECT_EQ(ParseLine(lines[0])["msg"], "kqd serving on 127.0.0.1:7070");
}

TEST(JsonFormatTest, EscapesWhatJsonCannotHoldAsIs) {
  ASSERT_TRUE(Init({.format = Format::kJson, .name = "kq-k8s-shim"}).ok());
  const std::string tricky =
      "say \"hi\"\nthen\ta back\\slash, a bell \a and \xc3\xa9";
  const std::vector<std::string> lines = StderrLines([&] {
    spdlog::info("{}", tricky);
    With({{"path", "/data/\"q\"\n"}}).info("invalid UTF-8: \xff\xfe end");
  });
  // One record, one line: the newlines are escaped.
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(ParseLine(lines[0])["msg"], tricky);
  EXPECT_EQ(ParseLine(lines[0])["logger"], "kq-k8s-shim");
  const nlohmann::ordered_json second = ParseLine(lines[1]);
  EXPECT_EQ(second["msg"], "invalid UTF-8: \xef\xbf\xbd\xef\xbf\xbd end");
  EXPECT_EQ(second["path"], "/data/\"q\"\n");
}

TEST(JsonFormatTest, FieldsFollowTheStandardKeys) {
  ASSERT_TRUE(Init({.format = Format::kJson}).ok());
  const std::string workload = "team-a/job-1";
  const std::vector<std::string> lines = StderrLines([&] {
    With({{"workload", workload},
          {"cluster_queue", "cq"},
          {"local_queue", ""},
          {"msg", "not the message"}})
        .info("workload {}", "evicted");
    spdlog::info("no fields");
  });
  ASSERT_EQ(lines.size(), 2u);
  const nlohmann::ordered_json line = ParseLine(lines[0]);
  std::vector<std::string> keys;
  for (const auto& [key, value] : line.items()) keys.push_back(key);
  // An empty field is left out; a standard key keeps its value.
  EXPECT_THAT(keys, ElementsAre("ts", "level", "logger", "msg", "workload",
                                "cluster_queue"));
  EXPECT_EQ(line["msg"], "workload evicted");
  EXPECT_EQ(line["workload"], "team-a/job-1");
  EXPECT_EQ(line["cluster_queue"], "cq");
  // The fields were the line's own, not the next one's.
  EXPECT_FALSE(ParseLine(lines[1]).contains("workload"));
}

TEST(JsonFormatTest, WithBelowTheLevelWritesNothing) {
  ASSERT_TRUE(Init({.level = "warn", .format = Format::kJson}).ok());
  const std::vector<std::string> lines = StderrLines([] {
    With({{"workload", "a/b"}}).info("not written");
    With({{"workload", "a/b"}}).warn("written");
  });
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(ParseLine(lines[0])["msg"], "written");
}

TEST(TextFormatTest, LinesAsBeforeWithFieldsAfterTheMessage) {
  const std::vector<std::string> lines = StderrLines([] {
    // Made while stderr is the file: the colour sink looks whether it is a
    // terminal when it is made.
    ASSERT_TRUE(Init({.level = "info"}).ok());
    spdlog::info("loaded revision {}", 7);
    spdlog::warn("careful");
    With({{"workload", "team-a/job-1"},
          {"cluster_queue", ""},
          {"message", "Preempted to accommodate \"b\""},
          {"reason", "Preempted"}})
        .info("workload evicted");
  });
  ASSERT_EQ(lines.size(), 3u);
  const std::string ts = kTimestamp;
  EXPECT_THAT(lines[0], MatchesRegex(ts + " info loaded revision 7"));
  EXPECT_THAT(lines[1], MatchesRegex(ts + " warning careful"));
  EXPECT_EQ(lines[2].substr(lines[2].find(' ') + 1),
            "info workload evicted workload=team-a/job-1 "
            "message=\"Preempted to accommodate \\\"b\\\"\" reason=Preempted");
}

TEST(WithTest, ALoggerInitDidNotMakeGetsTheFieldsInTheMessage) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  sink->set_pattern("%l %v");
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink));
  With({{"workload", "ns/a"}, {"reason", "two words"}}).info("evicted");
  EXPECT_EQ(out.str(), "info evicted workload=ns/a reason=\"two words\"\n");
}

}  // namespace
}  // namespace kq::logging
