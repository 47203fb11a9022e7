#pragma once

// Runs a real kqd binary on a loopback port with a temporary data
// directory, for integration tests.

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"

#include "kq/client/client.h"

namespace kq::testing {

// One kqd process. Not thread-safe; the client it hands out is.
class KqdProcess {
 public:
  // `data_dir` is kept across Start() calls so a restart sees the same
  // database.
  explicit KqdProcess(std::string data_dir);
  ~KqdProcess();

  // Starts kqd on 127.0.0.1 with port 0 and waits until it serves.
  // `extra_args` are added to kqd's command line (e.g. --config=FILE); a
  // --listen=ADDRESS among them replaces the default one (to restart on the
  // same port, so existing clients reconnect).
  absl::Status Start(const std::vector<std::string>& extra_args = {});
  // SIGKILL: no shutdown, no flush beyond what was committed.
  void Kill();
  // SIGTERM and wait; returns the exit status.
  int Terminate();

  int port() const { return port_; }
  // The running kqd's process id, or -1.
  pid_t pid() const { return pid_; }
  std::string target() const;
  std::unique_ptr<client::Client> NewClient() const;

 private:
  // One fork and exec; Internal when kqd exited before serving.
  absl::Status StartOnce(const std::vector<std::string>& extra_args);
  std::string data_dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace kq::testing
