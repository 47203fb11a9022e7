#pragma once

#include <string>

#include "absl/status/status.h"

namespace kq::logging {

// Configures spdlog's default logger for a kq process: one line per record
// on stderr, at `level` ("trace", "debug", "info", "warn", "error").
// InvalidArgument for an unknown level. Call once, before other threads log.
absl::Status Init(const std::string& level);

}  // namespace kq::logging
