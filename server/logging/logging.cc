#include "server/logging/logging.h"

#include <algorithm>
#include <atomic>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace kq::logging {
namespace {

// The fields of the line being logged on this thread, from With::Emit to
// the formatter. spdlog's loggers here are synchronous: a sink formats on
// the thread that logs, inside logger.log(). (spdlog 1.13's MDC passes its
// fields the same way.)
thread_local const std::initializer_list<Field>* current_fields = nullptr;

// The logger Init made, whose formatters read current_fields. Through any
// other (a test's, or spdlog's own before Init) With writes its fields into
// the message instead, so they are not lost.
std::atomic<const spdlog::logger*> initialized_logger{nullptr};
// Keeps that logger alive after another replaced it as the default, so
// that no other logger can get its address. Written by Init only.
std::shared_ptr<spdlog::logger>* initialized_logger_owner =
    new std::shared_ptr<spdlog::logger>();

constexpr char kTextPattern[] = "%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v%*";

void AppendTextValue(absl::string_view value, std::string& out) {
  const bool plain = std::none_of(value.begin(), value.end(), [](char c) {
    return c == ' ' || c == '"' || c == '=' || c == '\\' ||
           absl::ascii_iscntrl(c);
  });
  if (plain) {
    absl::StrAppend(&out, value);
    return;
  }
  absl::StrAppend(&out, "\"", absl::CEscape(value), "\"");
}

// " key=value" for each field with a value.
std::string TextFields(const std::initializer_list<Field>& fields) {
  std::string out;
  for (const auto& [key, value] : fields) {
    if (value.empty()) continue;
    absl::StrAppend(&out, " ", key, "=");
    AppendTextValue(value, out);
  }
  return out;
}

// %* in kTextPattern: the fields of the line, after the message.
class TextFieldsFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    if (current_fields == nullptr) return;
    const std::string text = TextFields(*current_fields);
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<TextFieldsFlag>();
  }
};

// The --log-level words, "warn" rather than spdlog's "warning".
const char* LevelName(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return "trace";
    case spdlog::level::debug:
      return "debug";
    case spdlog::level::info:
      return "info";
    case spdlog::level::warn:
      return "warn";
    case spdlog::level::err:
      return "error";
    case spdlog::level::critical:
      return "critical";
    default:
      return "off";
  }
}

class JsonFormatter : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg,
              spdlog::memory_buf_t& dest) override {
    // Insertion order: ts, level, logger and msg lead every line.
    nlohmann::ordered_json line = nlohmann::ordered_json::object();
    line["ts"] =
        absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromChrono(msg.time),
                         absl::UTCTimeZone());
    line["level"] = LevelName(msg.level);
    line["logger"] =
        std::string(msg.logger_name.data(), msg.logger_name.size());
    line["msg"] = std::string(msg.payload.data(), msg.payload.size());
    if (current_fields != nullptr) {
      for (const auto& [key, value] : *current_fields) {
        if (value.empty()) continue;
        std::string name(key);
        if (!line.contains(name)) line[name] = std::string(value);
      }
    }
    // `replace`: a message with invalid UTF-8 (a path, an error from below)
    // still makes a line that parses, where the default would throw.
    const std::string text =
        line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(text.data(), text.data() + text.size());
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

}  // namespace

absl::StatusOr<Format> ParseFormat(absl::string_view name) {
  if (name == "text") return Format::kText;
  if (name == "json") return Format::kJson;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown log format \"", name, "\" (want text or json)"));
}

absl::Status Init(const Options& options) {
  const spdlog::level::level_enum level =
      spdlog::level::from_str(options.level);
  if (level == spdlog::level::off && options.level != "off") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown log level \"", options.level, "\""));
  }
  // spdlog may throw on sink creation; kq code does not let exceptions
  // cross module boundaries.
  try {
    std::shared_ptr<spdlog::sinks::sink> sink;
    std::unique_ptr<spdlog::formatter> formatter;
    if (options.format == Format::kJson) {
      // No colours: a pipeline reads these lines, even from a terminal.
      sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
      formatter = std::make_unique<JsonFormatter>();
    } else {
      sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
      auto pattern = std::make_unique<spdlog::pattern_formatter>(
          spdlog::pattern_time_type::utc);
      pattern->add_flag<TextFieldsFlag>('*').set_pattern(kTextPattern);
      formatter = std::move(pattern);
    }
    sink->set_formatter(std::move(formatter));
    // Not through spdlog's registry: a second Init (tests) would find the
    // name taken. set_default_logger replaces the previous default.
    auto logger = std::make_shared<spdlog::logger>(options.name, sink);
    logger->set_level(level);
    *initialized_logger_owner = logger;
    initialized_logger = logger.get();
    spdlog::set_default_logger(std::move(logger));
  } catch (const spdlog::spdlog_ex& e) {
    return absl::InternalError(
        absl::StrCat("logging setup failed: ", e.what()));
  }
  spdlog::set_level(level);
  return absl::OkStatus();
}

void With::Emit(spdlog::logger& logger, spdlog::level::level_enum level,
                std::string_view message) const {
  if (&logger != initialized_logger.load()) {
    logger.log(level, "{}{}", message, TextFields(fields_));
    return;
  }
  // Cleared however log() ends: spdlog reports a failing sink itself.
  struct Scope {
    explicit Scope(const std::initializer_list<Field>* fields) {
      current_fields = fields;
    }
    ~Scope() { current_fields = nullptr; }
  } scope(&fields_);
  logger.log(level, spdlog::string_view_t(message.data(), message.size()));
}

}  // namespace kq::logging
