// kq-bench: prints a table per benchmark and appends them, dated and with
// the machine, to bench/RESULTS.md (see bench.h).

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "spdlog/spdlog.h"

#include "base/binary.h"
#include "bench/bench.h"

namespace kq::bench {
namespace {

std::string DefaultKqdPath() {
  std::error_code ec;
  std::filesystem::path self =
      std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "build/bin/kqd";
  return (self.parent_path() / "kqd").string();
}

// /proc/loadavg's 1, 5 and 15 minute figures: other work on the machine
// while the benchmarks ran.
std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return absl::StrCat(one, " ", five, " ", fifteen);
}

// The figures of one invocation, as one dated section.
std::string Section(const std::string& command,
                    const std::vector<Table>& tables,
                    const std::vector<std::string>& failures) {
  std::ostringstream out;
  out << "## "
      << absl::FormatTime("%Y-%m-%d %H:%M UTC", absl::Now(),
                          absl::UTCTimeZone())
      << ": `" << command << "`\n\n"
      << "Machine: " << MachineDescription() << "; load average at the end "
      << LoadAverage() << ".\n\n";
  for (const Table& table : tables) table.Print(out);
  for (const std::string& failure : failures) {
    out << "- FAILED: " << failure << "\n";
  }
  if (!failures.empty()) out << "\n";
  return out.str();
}

}  // namespace
}  // namespace kq::bench

int main(int argc, char** argv) {
  kq::InitBinary();
  using namespace kq::bench;
  CLI::App app{
      "kq-bench: kq beside Kueue's performance test, the machine's limits and "
      "its own targets (issue 6). Tables go to stdout and are appended to "
      "bench/RESULTS.md."};
  app.require_subcommand(1);
  Context context;
  context.kqd_path = DefaultKqdPath();
  std::string results = std::string(KQ_SOURCE_DIR) + "/bench/RESULTS.md";
  bool no_results = false;
  app.add_option("--kqd", context.kqd_path, "kqd binary")
      ->capture_default_str();
  app.add_option("--results", results,
                 "Markdown file the figures are appended to")
      ->capture_default_str();
  app.add_flag("--no-results", no_results, "print only; append nothing");

  LimitsOptions limits;
  double limit_seconds = 3;
  CLI::App* limits_cmd = app.add_subcommand(
      "limits", "no-op gRPC calls/s and SQLite durable inserts");
  limits_cmd->add_option("--seconds", limit_seconds, "per measurement")
      ->capture_default_str();

  KueuePerfOptions perf;
  double perf_timeout = 600;
  CLI::App* perf_cmd = app.add_subcommand(
      "kueue-perf", "Kueue's test/performance/scheduler configs against kqd");
  perf_cmd->add_option("--config", perf.config, "baseline or large-scale")
      ->check(CLI::IsMember({"baseline", "large-scale"}))
      ->capture_default_str();
  perf_cmd->add_option("--scale", perf.scale, "multiply workload counts")
      ->capture_default_str();
  perf_cmd->add_option("--submitters", perf.submitters, "submitting threads")
      ->capture_default_str();
  perf_cmd
      ->add_option("--finishers", perf.finishers,
                   "finishing threads (large-scale: 1024)")
      ->capture_default_str();
  perf_cmd
      ->add_option("--submit-mode", perf.submit_mode,
                   "unary or apply (large-scale: apply)")
      ->check(CLI::IsMember({"unary", "apply"}))
      ->capture_default_str();
  perf_cmd->add_option("--timeout", perf_timeout, "seconds")
      ->capture_default_str();

  SubmitOptions submit;
  double submit_seconds = 10;
  CLI::App* submit_cmd =
      app.add_subcommand("submit", "durable submission throughput and latency");
  submit_cmd
      ->add_option("--in-flight", submit.in_flight, "unary calls in flight")
      ->delimiter(',')
      ->capture_default_str();
  submit_cmd
      ->add_option("--count", submit.count, "most workloads per measurement")
      ->capture_default_str();
  submit_cmd
      ->add_option("--seconds", submit_seconds, "most seconds per measurement")
      ->capture_default_str();
  submit_cmd->add_option("--batch", submit.batch, "workloads per Apply")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  submit_cmd->add_option(
      "--paced-rate", submit.paced_rate,
      "open-loop calls/s (default: half the best unary rate)");
  submit_cmd
      ->add_option("--batch-in-flight", submit.batch_in_flight,
                   "Apply calls in flight")
      ->delimiter(',')
      ->capture_default_str();
  submit_cmd
      ->add_option("--templates-as-json", submit.templates_as_json,
                   "send and receive pod templates as JSON text (else as "
                   "Structs)")
      ->capture_default_str();
  submit_cmd
      ->add_option("--struct-rows", submit.struct_rows,
                   "also measure the most calls in flight with Structs")
      ->capture_default_str();
  submit_cmd
      ->add_option("--blocking-row", submit.blocking_row,
                   "also measure the most unary calls in flight with a "
                   "blocking thread per call")
      ->capture_default_str();

  ScaleOptions scale;
  double churn_seconds = 20;
  bool no_durable = false;
  CLI::App* scale_cmd = app.add_subcommand(
      "scale", "the admission core with many pending workloads");
  scale_cmd->add_option("--pending", scale.pending)->capture_default_str();
  scale_cmd->add_option("--cluster-queues", scale.cluster_queues)
      ->capture_default_str();
  scale_cmd->add_option("--cohorts", scale.cohorts)->capture_default_str();
  scale_cmd->add_option("--step", scale.step, "finished and submitted per step")
      ->capture_default_str();
  scale_cmd->add_option("--seconds", churn_seconds, "churn duration, each mode")
      ->capture_default_str();
  scale_cmd->add_flag("--no-durable", no_durable, "skip the SQLite churn");
  scale_cmd
      ->add_option("--offered-rate", scale.offered_rate,
                   "finishes/s of the open-loop durable churn (0: skip)")
      ->capture_default_str();
  scale_cmd
      ->add_option("--no-preemption-rates", scale.no_preemption_rates,
                   "finishes/s of open-loop durable churns on ClusterQueues "
                   "that never preempt (0: skip)")
      ->capture_default_str();

  RestartOptions restart;
  CLI::App* restart_cmd =
      app.add_subcommand("restart", "cold start with a large database");
  restart_cmd->add_option("--pending", restart.pending)->capture_default_str();
  restart_cmd->add_option("--finished", restart.finished)
      ->capture_default_str();
  restart_cmd->add_option("--cluster-queues", restart.cluster_queues)
      ->capture_default_str();
  restart_cmd->add_option("--cohorts", restart.cohorts)->capture_default_str();

  MetricsOptions metrics;
  CLI::App* metrics_cmd = app.add_subcommand(
      "metrics", "/metrics of a large kqd: scrape time, size, engine hold");
  metrics_cmd->add_option("--pending", metrics.pending)->capture_default_str();
  metrics_cmd->add_option("--cluster-queues", metrics.cluster_queues)
      ->capture_default_str();

  SecurityOptions security;
  CLI::App* security_cmd = app.add_subcommand(
      "security",
      "Submit and Apply with mTLS, RBAC and the audit log beside plain, and "
      "a kq process's handshake");
  security_cmd->add_option("--rounds", security.rounds)->capture_default_str();

  FederationOptions federation;
  double federation_timeout = 300;
  CLI::App* federation_cmd = app.add_subcommand(
      "federation",
      "MultiKueue: one manager and three worker kqds, workloads submitted "
      "to the manager, admitted on one worker and finished");
  federation_cmd->add_option("-n,--workloads", federation.workloads, "per run")
      ->check(CLI::Range(int64_t{1}, int64_t{10000000}))
      ->capture_default_str();
  federation_cmd->add_option("--workers", federation.workers)
      ->check(CLI::Range(1, 20))
      ->capture_default_str();
  federation_cmd
      ->add_option("--repeats", federation.repeats,
                   "runs at full rate, then as many paced")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  federation_cmd
      ->add_option("--in-flight", federation.in_flight, "submits in flight")
      ->capture_default_str();
  federation_cmd->add_option(
      "--paced-rate", federation.paced_rate,
      "paced submissions/s (default: half the full rate)");
  federation_cmd->add_option("--timeout", federation_timeout, "seconds per run")
      ->capture_default_str();

  RunnerOptions runner;
  CLI::App* runner_cmd = app.add_subcommand(
      "runner",
      "run a command per admitted workload and finish it (for "
      "bench/slurm/compare.sh)");
  runner_cmd->add_option("--server", runner.server)->capture_default_str();
  runner_cmd->add_option("-n,--namespace", runner.namespace_name)
      ->capture_default_str();
  runner_cmd->add_option("--count", runner.count, "exit after this many")
      ->required();
  runner_cmd->add_option("--exec", runner.command, "command and arguments")
      ->capture_default_str();
  runner_cmd->add_option("--parallel", runner.parallel)->capture_default_str();
  runner_cmd->add_option("--ready-file", runner.ready_file,
                         "written once watching");

  bool smoke = false;
  CLI::App* all_cmd = app.add_subcommand(
      "all",
      "limits first, then every benchmark (under 15 minutes on 2 cores)");
  all_cmd->add_flag("--smoke", smoke, "tiny sizes: seconds in all (for CI)");

  CLI11_PARSE(app, argc, argv);
  // The in-process store logs through spdlog; keep stdout for the tables.
  spdlog::set_level(spdlog::level::warn);

  if (*runner_cmd) {
    absl::Status status = RunRunner(runner);
    if (!status.ok()) {
      std::fprintf(stderr, "runner: %s\n", status.ToString().c_str());
    }
    std::fflush(stdout);
    std::fflush(stderr);
    // A thread is still blocked in Watch (see RunRunner).
    std::_Exit(status.ok() ? 0 : 1);
  }

  std::vector<std::string> command_words;
  for (int i = 1; i < argc; ++i) command_words.push_back(argv[i]);
  const std::string command =
      absl::StrCat("kq-bench ", absl::StrJoin(command_words, " "));

  std::vector<Table> tables;
  std::vector<std::string> failures;
  auto run = [&](const std::string& name,
                 absl::StatusOr<std::vector<Table>> produced) {
    if (!produced.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(),
                   produced.status().ToString().c_str());
      failures.push_back(
          absl::StrCat(name, ": ", produced.status().ToString()));
      return;
    }
    for (Table& table : *produced) {
      table.Print(std::cout);
      tables.push_back(std::move(table));
    }
  };

  limits.per_measurement = absl::Seconds(limit_seconds);
  perf.timeout = absl::Seconds(perf_timeout);
  submit.per_level = absl::Seconds(submit_seconds);
  scale.churn = absl::Seconds(churn_seconds);
  scale.durable = !no_durable;

  if (*limits_cmd) run("limits", RunLimits(limits, context));
  if (*perf_cmd) {
    // large-scale's creation rate and run count need kq's bulk creation and
    // many runners (see `all` below), unless asked otherwise.
    if (perf.config == "large-scale") {
      if (perf_cmd->get_option("--submit-mode")->count() == 0) {
        perf.submit_mode = "apply";
      }
      if (perf_cmd->get_option("--finishers")->count() == 0) {
        perf.finishers = 1024;
      }
    }
    run("kueue-perf", RunKueuePerf(perf, context));
  }
  if (*submit_cmd) run("submit", RunSubmit(submit, context));
  if (*scale_cmd) run("scale", RunScale(scale, context));
  if (*restart_cmd) run("restart", RunRestart(restart, context));
  if (*metrics_cmd) run("metrics", RunMetrics(metrics, context));
  if (*security_cmd) run("security", RunSecurity(security, context));
  if (*federation_cmd) {
    federation.timeout = absl::Seconds(federation_timeout);
    run("federation", RunFederation(federation, context));
  }
  if (*all_cmd) {
    // Sizes for `make bench` (about 4 minutes on 2 cores) and for the CI
    // smoke (seconds each).
    LimitsOptions l;
    l.per_measurement = smoke ? absl::Milliseconds(300) : absl::Seconds(3);
    run("limits", RunLimits(l, context));
    for (const char* config : {"baseline", "large-scale"}) {
      KueuePerfOptions p;
      p.config = config;
      p.scale = smoke ? 0.02 : 1.0;
      // Kueue's own limit (maxWallMs 425 s) for baseline; 150 s for
      // large-scale, which reports how far it got if it runs out.
      p.timeout = smoke                               ? absl::Seconds(120)
                  : std::string(config) == "baseline" ? absl::Seconds(425)
                                                      : absl::Seconds(150);
      if (std::string(config) == "large-scale") {
        // 15,000 creations a second for its first 3.3 s: what is due at one
        // instant goes in one Apply (kq's bulk path, as Kueue's generator
        // creates through many clients at once), and runs end through 1,024
        // finishers, so that neither the creators nor the runners (blocking
        // calls) are what limits the run (256 finishers: 27.7 s, 1,024:
        // 20.0 s, 4,096: 21.0 s with kqd at 115% of a core).
        p.submit_mode = "apply";
        p.finishers = 1024;
      }
      run(absl::StrCat("kueue-perf ", config), RunKueuePerf(p, context));
    }
    SubmitOptions s;
    s.count = smoke ? 300 : 50000;
    s.per_level = smoke ? absl::Milliseconds(500) : absl::Seconds(10);
    run("submit", RunSubmit(s, context));
    ScaleOptions c;
    c.churn = absl::Seconds(10);
    if (smoke) {
      c.pending = 2000;
      c.cluster_queues = 20;
      c.cohorts = 2;
      c.churn = absl::Milliseconds(500);
    }
    run("scale", RunScale(c, context));
    RestartOptions r;
    // Half the 1M + 1M: writing 2M rows through the store alone
    // takes about 3 minutes here (`kq-bench restart` runs the full size).
    r.pending = 500000;
    r.finished = 500000;
    if (smoke) {
      r.pending = 2000;
      r.finished = 2000;
      r.cluster_queues = 20;
      r.cohorts = 2;
    }
    run("restart", RunRestart(r, context));
    MetricsOptions m;
    if (smoke) {
      m.cluster_queues = 20;
      m.pending = 2000;
      m.scrapes = 3;
      m.rounds = 1;
      m.per_round = absl::Milliseconds(500);
      m.in_flight = 8;
    }
    run("metrics", RunMetrics(m, context));
    SecurityOptions sec;
    if (smoke) {
      sec.rounds = 1;
      sec.per_round = absl::Milliseconds(300);
      sec.in_flight = 8;
      sec.apply_in_flight = 2;
      sec.processes = 3;
    }
    run("security", RunSecurity(sec, context));
    FederationOptions fed;
    if (smoke) {
      fed.workloads = 200;
      fed.repeats = 1;
      fed.warmup = 5;
      fed.timeout = absl::Seconds(120);
    }
    run("federation", RunFederation(fed, context));
  }

  // The smoke test must not rewrite the source tree.
  const bool append =
      !no_results && !(smoke && !app.get_option("--results")->count());
  if (append && !tables.empty()) {
    std::ofstream out(results, std::ios::app);
    out << Section(command, tables, failures);
    std::fprintf(stderr, "appended to %s\n", results.c_str());
  }
  return failures.empty() ? 0 : 1;
}
