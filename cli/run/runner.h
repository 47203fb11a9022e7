#pragma once

// `kq run`: a local command run as a Kueue workload. kq submits the
// workload, waits for its admission, runs the command while it holds the
// quota and keeps the runner lease alive, stops the command when kqd
// evicts the workload and starts it again when the workload is admitted
// again.

#include <sys/types.h>

#include <deque>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"

#include "kq/client/client.h"

namespace kq::cli {

struct RunnerConfig {
  // Submitted as is (metadata.name or metadata.generate_name set).
  v1::Workload workload;
  // argv of the command; argv[0] is looked up in $PATH.
  std::vector<std::string> command;
  // Who runs the workload, as kqd records it (RunnerStatus.id).
  std::string runner_id;
  // The runner lease asked for; renewed every lease / 3.
  absl::Duration lease = absl::Seconds(30);
  // How long the command has after SIGTERM before SIGKILL.
  absl::Duration grace = absl::Seconds(30);
  // How long each Admit call of WaitAdmitted waits before answering
  // PENDING, which is also how often a changed position can be shown.
  absl::Duration poll = absl::Seconds(5);
  // Pause before waiting again when an admission could not be attached to
  // (the quota was gone again), so a flapping workload does not spin.
  absl::Duration reattach_delay = absl::Seconds(1);
};

// Runs one workload to its end. The life of a run:
//   1. SubmitWorkload (ALREADY_EXISTS for a taken --name is an error: kq
//      never adopts someone else's workload).
//   2. An Admit that answers at once, then WaitAdmitted, both with
//      runner_id and lease, so the runner is attached in the commit that
//      admits. Each changed PENDING answer prints
//      "waiting: <message> (position N in ClusterQueue X)".
//   3. A first Heartbeat; the command starts in its own process group with
//      KQ_WORKLOAD=ns/name, KQ_CLUSTER_QUEUE, KQ_FLAVORS
//      ("main:cpu=default,memory=default"), KQ_NODE_LABELS ("k=v,...") and
//      KQ_CLUSTER (the MultiKueue worker it was admitted on, through a
//      manager kqd; the ClusterQueue and flavors are then the worker's).
//      A heartbeat thread renews the lease every lease / 3.
//   4. The command exits on its own: FinishWorkload (succeeded = exit code
//      0, message "exit code N" or "killed by signal N"), and Run() returns
//      the command's exit code (128 + signal when it was killed).
//   5. kqd says stop (Heartbeat stop=true, or FAILED_PRECONDITION: the quota
//      is gone): SIGTERM to the process group, SIGKILL after `grace`, then
//      Heartbeat stopped=true, "evicted: <reason>; waiting to be admitted
//      again", and back to 2. The command starts again from scratch when
//      the workload is admitted again.
//   6. Interrupt(signal) while the command runs: the signal goes to the
//      process group, SIGKILL follows after `grace`, the workload finishes
//      as Failed ("interrupted") and Run() returns 128 + signal. While
//      waiting (no quota), the workload is cancelled instead.
// Whatever is left of the process group once the command exits is killed.
// Messages go to `err`; the command's own output goes to kq's stdout and
// stderr, which it inherits.
//
// Thread-safe: Interrupt() and KillCommand() may be called from any thread
// while Run() runs. Run() is called once.
class Runner {
 public:
  Runner(client::Client& client, RunnerConfig config, std::ostream& err);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Returns kq's exit code: the command's (see above), 128 + signal when
  // interrupted, 1 (kExitError) when the workload could not be submitted,
  // finished or was deactivated before it ran, or kqd failed; 126 / 127
  // when the command could not be started (not executable / not found).
  int Run();

  // Asks Run() to end as described in step 6.
  void Interrupt(int signal);

  // SIGKILL to the command's process group now, if it runs (a second
  // Ctrl-C).
  void KillCommand();

 private:
  // What the supervising loop of a running command reacts to.
  struct Event {
    enum class Kind {
      // The command (the group leader) exited; `wait_status`.
      kExited,
      // kqd evicted the workload or its quota is gone; `workload`.
      kStop,
      // Interrupt(); `signal`.
      kInterrupted,
      // The workload finished or vanished behind kq's back; `status`.
      kGone,
      // A heartbeat failed for a reason that does not stop the command
      // (kqd unreachable); `status`, reported once per streak.
      kWarning,
    };
    Kind kind;
    int wait_status = 0;
    int signal = 0;
    v1::Workload workload;
    absl::Status status;
  };
  // Where Run() is, for Interrupt().
  enum class Phase { kSubmitting, kWaiting, kAttaching, kRunning, kDone };
  // Steps 2-6 once the workload exists; returns Run()'s result.
  int Loop();
  void PrintPending(const v1::AdmitResponse& response);
  // Steps 3-6 for one admission; nullopt: wait for admission again.
  std::optional<int> RunAdmitted(const v1::AdmitResponse& admitted);
  // Sends `first_signal` to the command's process group, SIGKILL after
  // `grace`; returns once the command exited (not yet reaped). Other
  // events meanwhile are dropped: the command is stopping already.
  void StopCommand(pid_t pid, int first_signal);
  // Blocks for the next event, or until `deadline`.
  std::optional<Event> NextEvent(absl::Time deadline);
  void Push(Event event);
  void StartHeartbeats();
  void StopHeartbeats();
  void HeartbeatLoop();
  // Cancels the workload after an interrupt before the command ran (or
  // while it waits to be admitted again); returns 128 + signal.
  int EndInterruptedWhileWaiting(int signal);
  // Whether another runner holds the workload; sets `holder`.
  bool HeldByOtherRunner(std::string* holder);

  client::Client& client_;
  const RunnerConfig config_;
  std::ostream& err_;
  // Set by Run() before the phase leaves kSubmitting; read-only after.
  std::string namespace_name_;
  std::string name_;
  // Main thread only: the last "waiting: ..." line, and the ClusterQueue of
  // the workload's LocalQueue ("" when unknown), looked up once.
  std::string last_pending_line_;
  std::string pending_cluster_queue_;
  bool pending_cluster_queue_known_ = false;

  absl::Mutex mu_;
  absl::CondVar changed_;
  Phase phase_ ABSL_GUARDED_BY(mu_) = Phase::kSubmitting;
  // The first interrupt's signal, 0 while none.
  int interrupted_ ABSL_GUARDED_BY(mu_) = 0;
  bool cancel_sent_ ABSL_GUARDED_BY(mu_) = false;
  pid_t child_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<Event> events_ ABSL_GUARDED_BY(mu_);
  bool heartbeats_stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread heartbeats_;
  std::thread waiter_;
};

// "main:cpu=default,memory=default;workers:cpu=spot" from an admitted
// workload's status.admission, resources sorted by name; "" when none.
std::string FlavorsEnv(const v1::Workload& workload);

// "k=v,k2=v2": the node labels of every flavor of every placement, sorted
// by key; "" when none.
std::string NodeLabelsEnv(
    const google::protobuf::RepeatedPtrField<v1::PodSetPlacement>& placements);

// The environment a run's command gets on top of kq's own.
std::map<std::string, std::string> CommandEnvironment(
    const v1::AdmitResponse& admitted);

// kq's exit code for the command's wait status: its exit code, or 128 +
// the signal that killed it.
int ExitCodeOf(int wait_status);

// "exit code N" or "killed by signal N (Name)", the FinishWorkload message.
std::string DescribeWaitStatus(int wait_status);

// `argv` as one would type it in a POSIX shell: arguments other than
// [A-Za-z0-9_-./=:,+@%]+ are single-quoted ("sh -c 'sleep 30'").
std::string CommandLine(const std::vector<std::string>& argv);

// "<hostname>:<pid>" of this process.
std::string DefaultRunnerId();

}  // namespace kq::cli
