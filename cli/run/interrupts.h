#pragma once

// SIGINT and SIGTERM turned into calls on an ordinary thread, for commands
// that must clean up on Ctrl-C (`kq run`) or end without an error
// (`kq watch`).

#include <functional>
#include <thread>

#include "absl/status/status.h"

namespace kq::cli {

// While an InterruptWatcher lives, SIGINT and SIGTERM no longer terminate
// the process: the signal handler only writes the signal number to a pipe
// (async-signal-safe, and it works whichever thread the kernel picks, gRPC's
// included), and a thread of the watcher reads the pipe and calls
// `on_signal(signal)` once per signal, in order. The callback may block and
// may call anything (RPCs, std::_Exit); it is never called after the
// destructor returns.
//
// The destructor restores the previous handlers. One watcher per process
// at a time. Thread-compatible.
//
// Example:
//   InterruptWatcher watcher([&runner](int signal) { runner.Interrupt(signal);
//   }); if (!watcher.status().ok()) ...
class InterruptWatcher {
 public:
  explicit InterruptWatcher(std::function<void(int signal)> on_signal);
  ~InterruptWatcher();
  InterruptWatcher(const InterruptWatcher&) = delete;
  InterruptWatcher& operator=(const InterruptWatcher&) = delete;

  // Internal when the pipe or the handlers could not be set up; signals
  // then keep their previous behaviour.
  const absl::Status& status() const { return status_; }

 private:
  std::function<void(int)> on_signal_;
  absl::Status status_;
  int read_fd_ = -1;
  int write_fd_ = -1;
  bool installed_ = false;
  std::thread reader_;
};

}  // namespace kq::cli
