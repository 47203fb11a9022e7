#include "tests/shim/testing/fake_apiserver_process.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

#include "shim/kube/transport.h"
#include "tests/testing/child_process.h"

namespace kq::testing {
namespace {

constexpr char kDefaultToken[] = "kq-test-token";
constexpr absl::Duration kStartTimeout = absl::Seconds(60);

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Tail(const std::string& text, size_t max = 2000) {
  return text.size() <= max ? text : text.substr(text.size() - max);
}

std::string FormatDouble(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

absl::StatusOr<std::unique_ptr<FakeApiServer>> FakeApiServer::Start(
    FakeApiServerOptions options) {
  std::unique_ptr<FakeApiServer> server(new FakeApiServer());
  std::string pattern =
      (std::filesystem::temp_directory_path() / "kq-fake-apiserver-XXXXXX")
          .string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError("mkdtemp failed");
  }
  server->dir_ = pattern;
  server->token_ = options.token.empty() ? kDefaultToken : options.token;

  const std::string script = KQ_SOURCE_DIR "/tests/k8s/fake_apiserver.py";
  std::vector<std::string> args = {KQ_PYTHON,    script,   "--dir",
                                   server->dir_, "--port", "0"};
  if (!options.token.empty()) {
    args.insert(args.end(), {"--token", options.token});
  }
  if (options.job_runtime_seconds >= 0) {
    args.insert(args.end(),
                {"--job-runtime", FormatDouble(options.job_runtime_seconds)});
  }
  if (options.pod_stop_seconds >= 0) {
    args.insert(args.end(),
                {"--pod-stop-seconds", FormatDouble(options.pod_stop_seconds)});
  }
  if (options.watch_window > 0) {
    args.insert(args.end(),
                {"--watch-window", absl::StrCat(options.watch_window)});
  }
  args.insert(args.end(), options.extra_args.begin(), options.extra_args.end());

  const std::string out_path = server->dir_ + "/fixture.out";
  const std::string log_path = server->log_path();
  // Everything the child needs is built before fork(): a test process has
  // threads, so the child may not allocate.
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const ForkingParent parent = ThisParent();
  server->pid_ = fork();
  if (server->pid_ < 0) return absl::InternalError("fork failed");
  if (server->pid_ == 0) {
    DieWithParent(parent);
    // Its own process group, so the destructor also ends anything it runs.
    setpgid(0, 0);
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out >= 0) dup2(out, STDOUT_FILENO);
    if (log >= 0) dup2(log, STDERR_FILENO);
    execv(KQ_PYTHON, argv.data());
    _exit(127);
  }
  setpgid(server->pid_, server->pid_);

  const absl::Time deadline = absl::Now() + kStartTimeout;
  while (absl::Now() < deadline) {
    const std::string out = ReadFile(out_path);
    const size_t ready = out.find("READY ");
    if (ready != std::string::npos) {
      const size_t end = out.find('\n', ready);
      if (end != std::string::npos) {
        server->url_ = out.substr(ready + 6, end - ready - 6);
        return server;
      }
    }
    int status = 0;
    if (waitpid(server->pid_, &status, WNOHANG) == server->pid_) {
      server->pid_ = -1;
      return absl::InternalError(
          absl::StrCat("fake_apiserver.py exited (status ", status,
                       ") before READY:\n", Tail(ReadFile(log_path))));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "fake_apiserver.py printed no READY line in ",
      absl::FormatDuration(kStartTimeout), ":\n", Tail(ReadFile(log_path))));
}

FakeApiServer::~FakeApiServer() {
  if (pid_ > 0) {
    kill(-pid_, SIGTERM);
    // A short grace period for a clean exit, then no more.
    const absl::Time deadline = absl::Now() + absl::Seconds(3);
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) != pid_) {
      if (absl::Now() >= deadline) {
        kill(-pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
    pid_ = -1;
  }
  if (!dir_.empty() && getenv("KQ_KEEP_FIXTURE_DIR") == nullptr) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

void FakeApiServer::Kill() {
  if (pid_ <= 0) return;
  kill(-pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

absl::StatusOr<shim::kube::Config> FakeApiServer::LoadConfig() const {
  return shim::kube::LoadKubeconfig(kubeconfig_path());
}

absl::StatusOr<nlohmann::json> FakeApiServer::Control(const std::string& method,
                                                      const std::string& path) {
  shim::kube::Config config;
  config.server = url_;
  config.certificate_authority_file = ca_path();
  config.bearer_token = token_;
  absl::StatusOr<std::unique_ptr<shim::kube::HttpTransport>> transport =
      shim::kube::HttpTransport::Create(config, {.max_attempts = 1});
  if (!transport.ok()) return transport.status();
  absl::StatusOr<shim::kube::HttpResponse> response =
      (*transport)->Send({.method = method, .path = path});
  if (!response.ok()) return response.status();
  nlohmann::json body = nlohmann::json::parse(response->body, nullptr, false);
  if (body.is_discarded()) {
    return absl::InternalError(
        absl::StrCat(method, " ", path, ": not JSON: ", response->body));
  }
  return body;
}

absl::StatusOr<std::string> FakeApiServer::Compact(bool close_watches) {
  absl::StatusOr<nlohmann::json> answer =
      Control("POST", close_watches ? "/fixture/compact?closeWatches=true"
                                    : "/fixture/compact");
  if (!answer.ok()) return answer.status();
  if (!answer->is_object() || !answer->contains("resourceVersion") ||
      !(*answer)["resourceVersion"].is_string()) {
    return absl::InternalError(
        absl::StrCat("/fixture/compact: unexpected answer ", answer->dump()));
  }
  return (*answer)["resourceVersion"].get<std::string>();
}

absl::StatusOr<nlohmann::json> FakeApiServer::Requests() {
  return Control("GET", "/fixture/requests");
}

absl::Status FakeApiServer::ClearRequests() {
  return Control("DELETE", "/fixture/requests").status();
}

}  // namespace kq::testing
