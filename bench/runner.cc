// `kq-bench runner`: the kq side of bench/slurm/compare.sh's release test —
// one process that watches a namespace, launches a command for each
// admitted workload (as slurmd launches a job) and reports Finish when the
// command exits.

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include "bench/bench.h"
#include "bench/objects.h"
#include "bench/worker_pool.h"
#include "proto/util/workload.h"

namespace kq::bench {
namespace {

// Runs argv to completion; returns its exit code (or 128 + signal).
int RunCommand(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  std::vector<std::string> copy = args;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    execvp(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

}  // namespace

absl::Status RunRunner(const RunnerOptions& options) {
  client::ClientOptions client_options;
  client_options.target = options.server;
  std::unique_ptr<client::Client> client =
      client::NewGrpcClient(client_options);
  const std::vector<std::string> command =
      absl::StrSplit(options.command, ' ', absl::SkipEmpty());
  if (command.empty()) return absl::InvalidArgumentError("--exec is empty");

  std::mutex mu;
  std::condition_variable done_cv;
  std::set<std::string> launched;
  int64_t finished = 0;
  int64_t failures = 0;
  WorkerPool pool(options.parallel);
  auto done = [&] { return finished >= options.count; };
  // Launches each admitted, unfinished workload once.
  auto handle = [&](const v1::Workload& wl) {
    if (!proto_util::IsConditionTrue(wl, "Admitted") ||
        proto_util::IsConditionTrue(wl, "Finished")) {
      return;
    }
    const std::string ns = wl.metadata().namespace_();
    const std::string name = wl.metadata().name();
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!launched.insert(ns + "/" + name).second) return;
    }
    pool.Post([&, ns, name] {
      const int code = RunCommand(command);
      absl::StatusOr<v1::Workload> r = client->FinishWorkload(
          ns, name, code == 0, absl::StrCat("exit code ", code));
      std::lock_guard<std::mutex> lock(mu);
      ++finished;
      if (!r.ok()) ++failures;
      if (done()) done_cv.notify_all();
    });
  };

  v1::ListWorkloadsRequest list;
  list.set_namespace_(options.namespace_name);
  absl::StatusOr<v1::ListWorkloadsResponse> listed =
      client->ListWorkloads(list);
  if (!listed.ok()) return listed.status();
  for (const v1::Workload& wl : listed->workloads()) handle(wl);
  if (!options.ready_file.empty()) {
    std::ofstream(options.ready_file) << "ready\n";
  }
  v1::WatchRequest request;
  request.set_from_revision(listed->revision());
  request.add_kinds("Workload");
  request.set_namespace_(options.namespace_name);
  std::thread watcher([&] {
    absl::Status s = client->Watch(request, [&](const v1::WatchEvent& ev) {
      handle(ev.workload());
      std::lock_guard<std::mutex> lock(mu);
      return !done();
    });
    if (!s.ok())
      std::fprintf(stderr, "runner: watch: %s\n", s.ToString().c_str());
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    done_cv.wait(lock, done);
  }
  pool.Join();
  // The watch ends at the next event, which may never come if the last
  // Finished event arrived before its FinishWorkload returned: the caller
  // exits the process without waiting for it (the Client has no cancel).
  watcher.detach();
  std::printf("runner: %lld workloads ran and finished (%lld finish errors)\n",
              static_cast<long long>(finished),
              static_cast<long long>(failures));
  return failures == 0 ? absl::OkStatus()
                       : absl::InternalError("some finishes failed");
}

}  // namespace kq::bench
