#pragma once

// kq-bench: measurements of kq beside Kueue's own performance test, the
// machine's limits and (bench/slurm/compare.sh) Slurm. Nothing here asserts
// a figure: every benchmark returns tables, and main.cc prints them and
// appends them to bench/RESULTS.md.
//
// Thread-compatible helpers unless said otherwise.

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "kq/client/client.h"

namespace kq::bench {

// ---- Results ---------------------------------------------------------------

// One Markdown table with notes under it (the same text goes to stdout and
// to RESULTS.md).
struct Table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // Printed as a bullet list below the table: how a figure was measured,
  // where the time went.
  std::vector<std::string> notes;

  void Print(std::ostream& out) const;
};

// The machine's limits, measured by `limits` in the same invocation. A
// figure of 0 is unknown (the benchmark ran on its own); fractions are then
// left out.
struct Limits {
  // No-op unary gRPC calls per second over loopback TCP, by calls in
  // flight, and their median latency in microseconds.
  std::map<int, double> grpc_calls_per_second;
  std::map<int, double> grpc_p50_us;
  // SQLite WAL, synchronous=FULL: rows per second with 1,000 rows per
  // transaction, and transactions per second with one row each (the
  // fsync-bound rate of durable commits).
  double sqlite_rows_per_second = 0;
  double sqlite_commits_per_second = 0;
  // SQLite read back of workload-sized rows (rows per second), the floor of
  // a cold start's load.
  double sqlite_read_rows_per_second = 0;
};

// What every benchmark gets.
struct Context {
  // build/bin/kqd.
  std::string kqd_path;
  // Measured limits (all zero unless `limits` ran first).
  Limits limits;
};

// "12.3% of <what>", or "" when the limit is unknown.
std::string Fraction(double value, double limit, const std::string& what);

// ---- Statistics ------------------------------------------------------------

struct Percentiles {
  size_t count = 0;
  double mean = 0;
  double p50 = 0;
  double p99 = 0;
  double p999 = 0;
  double max = 0;
};
// Nearest-rank percentiles of `samples` (sorted in place).
Percentiles ComputePercentiles(std::vector<double>& samples);

// Formatting: "1,234,567", "12.3", "4.56 ms".
std::string FormatCount(double value);
std::string FormatFixed(double value, int decimals);
std::string FormatMicros(double us);

// ---- Machine ---------------------------------------------------------------

// "2 cores, Intel(R) Xeon(R) ..., 23.4 GiB RAM, Linux 6.1".
std::string MachineDescription();
// VmRSS of a process (self when pid is 0), in bytes; 0 when unreadable.
int64_t RssBytes(pid_t pid = 0);
// User+system CPU time a process has used so far (self when pid is 0).
absl::Duration CpuTime(pid_t pid = 0);

// Sends `count` SubmitWorkloadAsync calls through `client` from this
// thread, up to `in_flight` outstanding. Closed loop (`rate` <= 0): an
// answer sends the next call. Open loop: call i is sent at
// start + i / rate, once fewer than `in_flight` are out. No call is sent
// at or after `stop_at`. `request(i)` builds call i; `answered(i, sent,
// result)` gets each answer on a client thread and must not block. Returns
// once every call sent is answered.
using SubmitAnswered = std::function<void(
    int64_t i, absl::Time sent, absl::StatusOr<v1::SubmitWorkloadResponse>)>;
void SubmitPaced(
    client::Client& client, int64_t count, double rate, int in_flight,
    absl::Time start, absl::Time stop_at,
    const std::function<v1::SubmitWorkloadRequest(int64_t)>& request,
    const SubmitAnswered& answered);

// ---- Processes and files ---------------------------------------------------

// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "kq-bench");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// One kqd child process on 127.0.0.1 with a port file, logging to
// <data_dir>/kqd.log. Stopped (SIGTERM, then SIGKILL after 10 s) on
// destruction.
class Kqd {
 public:
  Kqd(std::string kqd_path, std::string data_dir);
  ~Kqd();
  Kqd(const Kqd&) = delete;
  Kqd& operator=(const Kqd&) = delete;

  // Starts kqd and waits (up to `timeout`) until the port file appears,
  // which kqd writes once it has loaded its state, run its first
  // scheduling batch and started serving.
  absl::Status Start(const std::vector<std::string>& extra_args = {},
                     absl::Duration timeout = absl::Minutes(5));
  // When Start() was called and when the port file appeared.
  absl::Time started_at() const { return started_at_; }
  absl::Time serving_at() const { return serving_at_; }
  // SIGTERM and wait; returns how long the shutdown took.
  absl::Duration Stop();
  void Kill();

  pid_t pid() const { return pid_; }
  // host:port; the host is 127.0.0.1 unless set (a TLS kqd is named as
  // its certificate names it).
  std::string target() const;
  void set_target_host(std::string host) { host_ = std::move(host); }
  std::string log_path() const;
  // A client of target(), with the credentials of set_client_options.
  std::unique_ptr<client::Client> NewClient() const;
  void set_client_options(client::ClientOptions options) {
    client_options_ = std::move(options);
  }

 private:
  std::string kqd_path_;
  std::string data_dir_;
  std::string host_ = "127.0.0.1";
  client::ClientOptions client_options_;
  pid_t pid_ = -1;
  int port_ = 0;
  absl::Time started_at_;
  absl::Time serving_at_;
};

// ---- Benchmarks ------------------------------------------------------------

struct LimitsOptions {
  absl::Duration per_measurement = absl::Seconds(3);
  std::vector<int> in_flight = {1, 8, 64};
};
absl::StatusOr<std::vector<Table>> RunLimits(const LimitsOptions& options,
                                             Context& context);

struct KueuePerfOptions {
  // "baseline" or "large-scale" (Kueue's test/performance/scheduler
  // configs).
  std::string config = "baseline";
  // Multiplies every workload set's count (at least 1 each).
  double scale = 1.0;
  // Threads issuing SubmitWorkload (Kueue's generator runs one goroutine
  // per workload set).
  int submitters = 64;
  // Threads issuing FinishWorkload when a workload's runtime is over.
  int finishers = 32;
  // "unary": one SubmitWorkload per workload, as Kueue creates one object
  // each; "apply": workloads due at the same moment go in one
  // AdminService.Apply.
  std::string submit_mode = "unary";
  absl::Duration timeout = absl::Minutes(10);
};
absl::StatusOr<std::vector<Table>> RunKueuePerf(const KueuePerfOptions& options,
                                                const Context& context);

struct SubmitOptions {
  std::vector<int> in_flight = {1, 8, 64};
  // Most workloads per measurement; each also stops after `per_level`.
  int count = 50000;
  absl::Duration per_level = absl::Seconds(10);
  int batch = 100;
  std::vector<int> batch_in_flight = {1, 8};
  // Also submit open-loop at half the rate reached with the most calls in
  // flight and report that latency (the "p99 at half that rate").
  bool open_loop = true;
  // The open-loop rate in calls/s; 0: half the best unary rate measured.
  double paced_rate = 0;
  // Pod templates travel as JSON text both ways (template_json and
  // TEMPLATE_FORM_JSON), else as Structs.
  bool templates_as_json = true;
  // Also measure the most unary and batched calls in flight with the
  // templates as Structs, for comparison.
  bool struct_rows = true;
  // Also measure the most unary calls in flight with a blocking
  // SubmitWorkload per client thread (the other rows keep their calls in
  // flight from one thread with SubmitWorkloadAsync).
  bool blocking_row = true;
};
absl::StatusOr<std::vector<Table>> RunSubmit(const SubmitOptions& options,
                                             const Context& context);

struct ScaleOptions {
  int pending = 100000;
  int cluster_queues = 1000;
  int cohorts = 10;
  // Workloads finished and submitted per churn step (one engine batch).
  int step = 100;
  absl::Duration churn = absl::Seconds(20);
  // Also churn with every step's changes committed to SQLite
  // (synchronous=FULL), as the engine does.
  bool durable = true;
  // Then churn open-loop: finishes arrive at this rate, and each step takes
  // those that arrived while the one before ran, as kqd's engine batches
  // every command that queued during its last batch (0: skip).
  double offered_rate = 10000;
  // Then, per rate, the same open loop on a fresh state whose ClusterQueues
  // never preempt (the mix and quotas otherwise the same): how many
  // admissions the core sustains when Kueue's one preemption per cohort
  // per pass does not bound them (empty: skip).
  std::vector<double> no_preemption_rates = {10000, 30000};
};
absl::StatusOr<std::vector<Table>> RunScale(const ScaleOptions& options,
                                            const Context& context);

struct RestartOptions {
  int pending = 1000000;
  int finished = 1000000;
  int cluster_queues = 1000;
  int cohorts = 10;
};
absl::StatusOr<std::vector<Table>> RunRestart(const RestartOptions& options,
                                              const Context& context);

struct MetricsOptions {
  int cluster_queues = 1000;
  int pending = 100000;
  // Sequential scrapes timed.
  int scrapes = 20;
  // Submit rounds of each kind (without, with a scrape a second).
  int rounds = 2;
  absl::Duration per_round = absl::Seconds(8);
  int in_flight = 64;
};
absl::StatusOr<std::vector<Table>> RunMetrics(const MetricsOptions& options,
                                              const Context& context);

// Blocking Submits of 1-cpu workloads to LocalQueue bench/submit from
// `threads` threads (one client each) for `duration`; per second. Names
// come from `next`.
double SubmitRate(const Kqd& kqd, int threads, absl::Duration duration,
                  std::atomic<int64_t>& next);

struct SecurityOptions {
  int rounds = 3;
  absl::Duration per_round = absl::Seconds(5);
  int in_flight = 64;
  int apply_batch = 100;
  int apply_in_flight = 8;
  // `kq` processes timed per kind of connection.
  int processes = 30;
};
absl::StatusOr<std::vector<Table>> RunSecurity(const SecurityOptions& options,
                                               const Context& context);

struct FederationOptions {
  // Workloads per run, submitted to the manager.
  int64_t workloads = 10000;
  int workers = 3;
  // Runs at full rate, then as many paced; the tables give medians.
  int repeats = 3;
  // Submissions in flight (SubmitWorkloadAsync).
  int in_flight = 64;
  // The paced runs' submissions/s; 0: half the full runs' median end to
  // end rate.
  double paced_rate = 0;
  // Workloads run through each fresh federation before measuring.
  int warmup = 20;
  // Most time per run, from the first submission to the last Finished.
  absl::Duration timeout = absl::Minutes(5);
};
absl::StatusOr<std::vector<Table>> RunFederation(
    const FederationOptions& options, const Context& context);

// `kq-bench runner` (for bench/slurm/compare.sh): launches `command` for
// every workload admitted in `namespace_name` and finishes it with the
// command's outcome, until `count` have finished. Writes `ready_file` once
// it watches. Leaves a thread blocked in Watch: the caller exits the
// process right after.
struct RunnerOptions {
  std::string server = "127.0.0.1:7070";
  std::string namespace_name = "default";
  int64_t count = 0;
  std::string command = "true";
  // Commands running at once (slurmd runs one job per free CPU).
  int parallel = 64;
  std::string ready_file;
};
absl::Status RunRunner(const RunnerOptions& options);

}  // namespace kq::bench
