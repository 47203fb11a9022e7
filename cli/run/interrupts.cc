#include "cli/run/interrupts.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kq::cli {
namespace {

// The pipe's write end, for the handler: a handler can reach nothing else.
std::atomic<int> g_write_fd{-1};

struct sigaction g_previous_int;
struct sigaction g_previous_term;

void OnSignal(int signal) {
  const int saved_errno = errno;
  const int fd = g_write_fd.load();
  if (fd >= 0) {
    const unsigned char byte = static_cast<unsigned char>(signal);
    // Nothing to do on failure: a full pipe already holds pending signals.
    [[maybe_unused]] ssize_t n = write(fd, &byte, 1);
  }
  errno = saved_errno;
}

}  // namespace

InterruptWatcher::InterruptWatcher(std::function<void(int)> on_signal)
    : on_signal_(std::move(on_signal)) {
  int fds[2];
  // O_CLOEXEC: commands started by `kq run` must not inherit the pipe.
  if (pipe2(fds, O_CLOEXEC) != 0) {
    status_ = absl::InternalError(
        absl::StrCat("cannot create the signal pipe: ", strerror(errno)));
    return;
  }
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  g_write_fd.store(write_fd_);
  reader_ = std::thread([this] {
    for (;;) {
      unsigned char byte = 0;
      const ssize_t n = read(read_fd_, &byte, 1);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      // 0 is the destructor's request to stop (no signal has number 0).
      if (n <= 0 || byte == 0) {
        return;
      }
      on_signal_(byte);
    }
  });
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  // Restart interrupted system calls (gRPC's, waitpid) instead of failing
  // them with EINTR.
  action.sa_flags = SA_RESTART;
  if (sigaction(SIGINT, &action, &g_previous_int) != 0 ||
      sigaction(SIGTERM, &action, &g_previous_term) != 0) {
    status_ = absl::InternalError(
        absl::StrCat("cannot install signal handlers: ", strerror(errno)));
    sigaction(SIGINT, &g_previous_int, nullptr);
    return;
  }
  installed_ = true;
}

InterruptWatcher::~InterruptWatcher() {
  if (installed_) {
    sigaction(SIGINT, &g_previous_int, nullptr);
    sigaction(SIGTERM, &g_previous_term, nullptr);
  }
  g_write_fd.store(-1);
  if (reader_.joinable()) {
    const unsigned char stop = 0;
    [[maybe_unused]] ssize_t n = write(write_fd_, &stop, 1);
    reader_.join();
  }
  if (read_fd_ >= 0) {
    close(read_fd_);
  }
  if (write_fd_ >= 0) {
    close(write_fd_);
  }
}

}  // namespace kq::cli
