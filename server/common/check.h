#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace kq::internal {

// Collects a message, prints it and aborts when destroyed. Used only by
// KQ_CHECK for broken invariants, never for client input or I/O results.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition) {
    stream_ << file << ":" << line << ": check failed: " << condition << " ";
  }
  [[noreturn]] ~CheckFailure() {
    std::fprintf(stderr, "%s\n", stream_.str().c_str());
    std::abort();
  }
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

}  // namespace kq::internal

// Aborts with a message when `cond` is false: KQ_CHECK(x > 0) << "x=" << x;
#define KQ_CHECK(cond) \
  if (cond) {          \
  } else               \
    ::kq::internal::CheckFailure(__FILE__, __LINE__, #cond).stream()
