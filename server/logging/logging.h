#pragma once

// kq's logs: spdlog's default logger, set up once per process (Init) to
// write text lines for people or JSON objects for log pipelines, and log
// lines that carry structured fields (With), such as the workload and the
// ClusterQueue a line is about.

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "spdlog/spdlog.h"

namespace kq::logging {

// How records are written, one per line, on stderr.
enum class Format {
  // `2024-05-01T12:00:00.123Z info workload admitted workload=ns/a
  // cluster_queue=cq`: UTC time, level, message, then the fields as
  // key=value (the value quoted and C-escaped when it holds a space, a
  // quote, an '=', a backslash or a control character). The default.
  kText,
  // `{"ts":"2024-05-01T12:00:00.123Z","level":"info","logger":"kqd",
  // "msg":"workload admitted","workload":"ns/a","cluster_queue":"cq"}`:
  // RFC 3339 UTC time with milliseconds; level trace, debug, info, warn,
  // error or critical; the program; the message; then the fields, all
  // strings. Invalid UTF-8 becomes U+FFFD, so every line parses.
  kJson,
};

// "text" -> kText, "json" -> kJson; InvalidArgument otherwise.
absl::StatusOr<Format> ParseFormat(absl::string_view name);

struct Options {
  // trace, debug, info, warn, error, critical or off.
  std::string level = "info";
  Format format = Format::kText;
  // The logger's name: JSON's "logger".
  std::string name = "kqd";
};

// Makes spdlog's default logger write `options.format` to stderr from
// `options.level` up. InvalidArgument for an unknown level, Internal when
// spdlog fails to set up. Call before other threads log; calling it again
// replaces the logger (tests do).
absl::Status Init(const Options& options);

// One structured field of a log line: key and value. Keys are snake_case
// and other than ts, level, logger and msg (those keep their value). A
// field whose value is empty is left out, so optional fields (the
// ClusterQueue of a workload not admitted yet) need no second call.
using Field = std::pair<absl::string_view, absl::string_view>;

// A log line with fields, through spdlog's default logger. The fields and
// their strings are borrowed, so With is meant as a temporary, used in the
// expression that makes it. Below the logger's level a line costs a level
// check (the fields' values are still computed: a hot caller that builds
// them checks ShouldLog first). Thread-safe, as spdlog's loggers are.
//
// Example:
//   logging::With({{"workload", "team-a/job-1"}, {"cluster_queue", "cq"}})
//       .info("workload admitted");
class With {
 public:
  With(std::initializer_list<Field> fields) : fields_(fields) {}

  template <typename... Args>
  void log(spdlog::level::level_enum level,
           spdlog::format_string_t<Args...> format, Args&&... args) const {
    Log(level, format, std::forward<Args>(args)...);
  }
  template <typename... Args>
  void trace(spdlog::format_string_t<Args...> format, Args&&... args) const {
    Log(spdlog::level::trace, format, std::forward<Args>(args)...);
  }
  template <typename... Args>
  void debug(spdlog::format_string_t<Args...> format, Args&&... args) const {
    Log(spdlog::level::debug, format, std::forward<Args>(args)...);
  }
  template <typename... Args>
  void info(spdlog::format_string_t<Args...> format, Args&&... args) const {
    Log(spdlog::level::info, format, std::forward<Args>(args)...);
  }
  template <typename... Args>
  void warn(spdlog::format_string_t<Args...> format, Args&&... args) const {
    Log(spdlog::level::warn, format, std::forward<Args>(args)...);
  }
  template <typename... Args>
  void error(spdlog::format_string_t<Args...> format, Args&&... args) const {
    Log(spdlog::level::err, format, std::forward<Args>(args)...);
  }

 private:
  template <typename... Args>
  void Log(spdlog::level::level_enum level,
           spdlog::format_string_t<Args...> format, Args&&... args) const {
    spdlog::logger* logger = spdlog::default_logger_raw();
    if (!logger->should_log(level)) return;
    Emit(*logger, level, fmt::format(format, std::forward<Args>(args)...));
  }
  void Emit(spdlog::logger& logger, spdlog::level::level_enum level,
            std::string_view message) const;

  std::initializer_list<Field> fields_;
};

// Whether the default logger writes `level`: for callers whose fields take
// work to build.
inline bool ShouldLog(spdlog::level::level_enum level) {
  return spdlog::default_logger_raw()->should_log(level);
}

}  // namespace kq::logging
