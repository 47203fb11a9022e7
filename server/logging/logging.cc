#include "server/logging/logging.h"

#include "absl/strings/str_cat.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace kq::logging {

absl::Status Init(const std::string& level) {
  spdlog::level::level_enum parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown log level \"", level, "\""));
  }
  // spdlog may throw on sink creation; kq code does not let exceptions
  // cross module boundaries.
  try {
    auto logger = spdlog::stderr_color_mt("kq");
    spdlog::set_default_logger(logger);
  } catch (const spdlog::spdlog_ex& e) {
    return absl::InternalError(
        absl::StrCat("logging setup failed: ", e.what()));
  }
  spdlog::set_level(parsed);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v",
                      spdlog::pattern_time_type::utc);
  return absl::OkStatus();
}

}  // namespace kq::logging
