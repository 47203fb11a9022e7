// `kq run`: flags -> RunnerConfig, signals -> Runner (cli/run/runner.h).

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "cli/command.h"
#include "cli/commands/commands.h"
#include "cli/run/interrupts.h"
#include "cli/run/runner.h"

namespace kq::cli {
namespace {

// A positive duration such as "30s" or "2m" (Go's syntax, as kubectl's
// duration flags).
absl::StatusOr<absl::Duration> ParsePositiveDuration(const std::string& flag,
                                                     const std::string& text) {
  absl::Duration d;
  if (!absl::ParseDuration(text, &d)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid ", flag, " \"", text,
                     "\": want a duration such as 30s or 2m"));
  }
  if (d <= absl::ZeroDuration() || d == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid ", flag, " \"", text, "\": must be positive"));
  }
  return d;
}

}  // namespace

int RunRun(const RunOptions& options, CommandContext& ctx) {
  if (options.command.empty()) {
    return ReportUsage(
        absl::InvalidArgumentError("kq run needs a command: kq run [flags] -- "
                                   "COMMAND [ARGS...]"),
        ctx.err);
  }
  if (!options.workload.name.empty() &&
      !options.workload.generate_name.empty()) {
    return ReportUsage(
        absl::InvalidArgumentError("--name and --generate-name are mutually "
                                   "exclusive"),
        ctx.err);
  }
  if (options.workload.count < 1) {
    return ReportUsage(absl::InvalidArgumentError(absl::StrCat(
                           "invalid --count ", options.workload.count,
                           ": must be at least 1")),
                       ctx.err);
  }
  if (options.requests.empty()) {
    return ReportUsage(
        absl::InvalidArgumentError("at least one --request is required, e.g. "
                                   "--request cpu=4 --request memory=8Gi"),
        ctx.err);
  }
  absl::StatusOr<std::map<std::string, std::string>> requests =
      ParseRequests(absl::StrJoin(options.requests, ","));
  if (!requests.ok()) {
    return ReportUsage(requests.status(), ctx.err);
  }
  absl::StatusOr<absl::Duration> lease =
      ParsePositiveDuration("--lease", options.lease);
  if (!lease.ok()) {
    return ReportUsage(lease.status(), ctx.err);
  }
  absl::StatusOr<absl::Duration> grace =
      ParsePositiveDuration("--grace", options.grace);
  if (!grace.ok()) {
    return ReportUsage(grace.status(), ctx.err);
  }

  WorkloadFlags flags = options.workload;
  flags.requests = *std::move(requests);
  if (flags.name.empty() && flags.generate_name.empty()) {
    flags.generate_name = "run-";
  }
  RunnerConfig config{
      .workload = BuildWorkload(flags),
      .command = options.command,
      .runner_id =
          options.runner_id.empty() ? DefaultRunnerId() : options.runner_id,
      .lease = *lease,
      .grace = *grace,
      .poll = options.poll,
  };
  Runner runner(ctx.client, std::move(config), ctx.err);
  // Declared after the runner: the watcher (and its thread) goes first.
  std::optional<InterruptWatcher> watcher;
  std::atomic<int> interrupts{0};
  if (options.handle_signals) {
    watcher.emplace([&runner, &interrupts](int signal) {
      if (interrupts.fetch_add(1) == 0) {
        runner.Interrupt(signal);
        return;
      }
      // A second interrupt: the user wants out now. The lease lapses on
      // its own.
      runner.KillCommand();
      static constexpr char kMessage[] = "kq: killed\n";
      [[maybe_unused]] ssize_t n = write(2, kMessage, sizeof(kMessage) - 1);
      std::_Exit(128 + signal);
    });
    if (!watcher->status().ok()) {
      return ReportError(watcher->status(), ctx.err);
    }
  }
  return runner.Run();
}

}  // namespace kq::cli
