#pragma once

// Crash points for the federation's kill -9 tests (federation.md 5.6,
// scenario 9): with KQ_FAILPOINT=<name> in its environment, kqd kills
// itself with SIGKILL the first time it reaches the point of that name, as
// an operator's kill -9 or a power cut would at that instant. Without the
// variable (every real deployment) a point costs one comparison.

#include <csignal>
#include <cstdlib>
#include <string_view>

#include "spdlog/spdlog.h"

namespace kq::federation {

inline void Failpoint(std::string_view name) {
  static const char* const armed = std::getenv("KQ_FAILPOINT");
  if (armed == nullptr || name != armed) return;
  spdlog::critical("failpoint {}: killing kqd", name);
  spdlog::default_logger()->flush();
  std::raise(SIGKILL);
}

}  // namespace kq::federation
