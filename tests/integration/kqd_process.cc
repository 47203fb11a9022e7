#include "tests/integration/kqd_process.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"

#include "base/binary.h"
#include "tests/testing/child_process.h"

namespace kq::testing {

KqdProcess::KqdProcess(std::string data_dir) : data_dir_(std::move(data_dir)) {}

KqdProcess::~KqdProcess() {
  if (pid_ > 0) Kill();
}

absl::Status KqdProcess::Start(const std::vector<std::string>& extra_args) {
  const bool fixed_port = std::any_of(
      extra_args.begin(), extra_args.end(), [](const std::string& arg) {
        return arg.rfind("--listen", 0) == 0 && !arg.ends_with(":0");
      });
  absl::Status started = StartOnce(extra_args);
  // A restart on the port of a kqd it killed (a client's reconnection test)
  // can find that port taken for a moment by an outgoing connection of
  // another test: the kernel hands ephemeral ports to both. kqd then exits
  // at once ("cannot listen"); a retry a little later gets the port.
  for (int attempt = 0; fixed_port && attempt < 20 &&
                        started.code() == absl::StatusCode::kInternal;
       ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    started = StartOnce(extra_args);
  }
  return started;
}

absl::Status KqdProcess::StartOnce(const std::vector<std::string>& extra_args) {
  const std::string port_file = data_dir_ + "/port";
  std::filesystem::remove(port_file);
  const ForkingParent parent = ThisParent();
  pid_ = fork();
  if (pid_ < 0) return absl::InternalError("fork failed");
  if (pid_ == 0) {
    DieWithParent(parent);
    std::string data_flag = "--data-dir=" + data_dir_;
    std::string port_flag = "--port-file=" + port_file;
    std::vector<std::string> args = {KQD_PATH, data_flag, port_flag,
                                     "--log-level=warn"};
    const bool listen_given = std::any_of(
        extra_args.begin(), extra_args.end(),
        [](const std::string& arg) { return arg.rfind("--listen", 0) == 0; });
    if (!listen_given) args.push_back("--listen=127.0.0.1:0");
    // Tests run side by side: never the default HTTP port.
    const bool http_given = std::any_of(
        extra_args.begin(), extra_args.end(), [](const std::string& arg) {
          return arg.rfind("--http-listen", 0) == 0;
        });
    if (!http_given) args.push_back("--http-listen=127.0.0.1:0");
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    // Lock-order inversions abort kqd under test (see InitBinary).
    setenv(kMutexDeadlockDetectionEnv, "1", 1);
    execv(KQD_PATH, argv.data());
    _exit(127);
  }
  for (int i = 0; i < 600; ++i) {
    std::ifstream in(port_file);
    if (in >> port_) return absl::OkStatus();
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::InternalError(
          absl::StrCat("kqd exited early with status ", status));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::DeadlineExceededError("kqd did not start serving in 30 s");
}

void KqdProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

int KqdProcess::Terminate() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

std::string KqdProcess::target() const {
  return absl::StrCat("127.0.0.1:", port_);
}

std::unique_ptr<client::Client> KqdProcess::NewClient() const {
  return client::NewGrpcClient(
      {.target = target(), .deadline = absl::Seconds(10)});
}

}  // namespace kq::testing
