#include "cli/run/runner.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/command.h"
#include "cli/printers/format.h"
#include "google/protobuf/duration.pb.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"

extern char** environ;

namespace kq::cli {
namespace {

// Shell conventions for a command that cannot be run.
constexpr int kExitNotExecutable = 126;
constexpr int kExitNotFound = 127;

void SetDuration(absl::Duration d, google::protobuf::Duration* out) {
  const int64_t nanos = absl::ToInt64Nanoseconds(d);
  out->set_seconds(nanos / 1'000'000'000);
  out->set_nanos(static_cast<int32_t>(nanos % 1'000'000'000));
}

// Starts `argv` in a new process group (its id is the returned pid), with
// kq's environment plus `extra_env`, default signal dispositions and an
// empty signal mask: nothing of kq's signal handling leaks into the command.
absl::StatusOr<pid_t> SpawnInOwnGroup(
    const std::vector<std::string>& argv,
    const std::map<std::string, std::string>& extra_env) {
  std::vector<std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text = *entry;
    if (!extra_env.contains(text.substr(0, text.find('=')))) {
      env.push_back(text);
    }
  }
  for (const auto& [key, value] : extra_env) {
    env.push_back(absl::StrCat(key, "=", value));
  }
  std::vector<char*> envp;
  for (std::string& entry : env) {
    envp.push_back(entry.data());
  }
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> args_p;
  for (std::string& arg : args) {
    args_p.push_back(arg.data());
  }
  args_p.push_back(nullptr);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
                                      POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int signal : {SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGPIPE}) {
    sigaddset(&defaults, signal);
  }
  posix_spawnattr_setsigdefault(&attr, &defaults);
  pid_t pid = 0;
  const int rc =
      posix_spawnp(&pid, args_p[0], nullptr, &attr, args_p.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    const std::string message =
        absl::StrCat("cannot run \"", argv[0], "\": ", strerror(rc));
    return rc == ENOENT ? absl::NotFoundError(message)
                        : absl::PermissionDeniedError(message);
  }
  return pid;
}

// The Evicted=True condition's "Reason: message", or `fallback`.
std::string EvictionText(const v1::Workload& workload,
                         const std::string& fallback) {
  const v1::Condition* evicted =
      FindCondition(workload.status().conditions(), "Evicted");
  if (evicted == nullptr || evicted->status() != "True") {
    return fallback;
  }
  if (evicted->message().empty()) {
    return evicted->reason();
  }
  return absl::StrCat(evicted->reason(), ": ", evicted->message());
}

bool IsInactive(const v1::Workload& workload) {
  return workload.spec().has_active() && !workload.spec().active();
}

}  // namespace

std::string CommandLine(const std::vector<std::string>& argv) {
  return absl::StrJoin(argv, " ", [](std::string* out, const std::string& arg) {
    const bool plain =
        !arg.empty() && arg.find_first_not_of(
                            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"
                            "WXYZ0123456789_-./=:,+@%") == std::string::npos;
    if (plain) {
      out->append(arg);
      return;
    }
    out->append("'");
    for (char c : arg) {
      if (c == '\'') {
        out->append("'\\''");
      } else {
        out->push_back(c);
      }
    }
    out->append("'");
  });
}

// The admission the command runs with: on a MultiKueue manager, the winning
// worker's (its flavors), else the workload's own.
const v1::Admission& RunningAdmission(const v1::Workload& workload) {
  const v1::WorkloadStatus& status = workload.status();
  if (status.has_cluster_name() && status.multikueue().has_worker_admission()) {
    return status.multikueue().worker_admission();
  }
  return status.admission();
}

std::string FlavorsEnv(const v1::Workload& workload) {
  std::vector<std::string> pod_sets;
  for (const v1::PodSetAssignment& assignment :
       RunningAdmission(workload).pod_set_assignments()) {
    const std::map<std::string, std::string> flavors(
        assignment.flavors().begin(), assignment.flavors().end());
    pod_sets.push_back(
        absl::StrCat(assignment.name(), ":",
                     absl::StrJoin(flavors, ",", absl::PairFormatter("="))));
  }
  return absl::StrJoin(pod_sets, ";");
}

std::string NodeLabelsEnv(
    const google::protobuf::RepeatedPtrField<v1::PodSetPlacement>& placements) {
  std::map<std::string, std::string> labels;
  for (const v1::PodSetPlacement& placement : placements) {
    for (const v1::FlavorPlacement& flavor : placement.flavors()) {
      labels.insert(flavor.node_labels().begin(), flavor.node_labels().end());
    }
  }
  return absl::StrJoin(labels, ",", absl::PairFormatter("="));
}

std::map<std::string, std::string> CommandEnvironment(
    const v1::AdmitResponse& admitted) {
  const v1::Workload& workload = admitted.workload();
  return {
      {"KQ_WORKLOAD", absl::StrCat(workload.metadata().namespace_(), "/",
                                   workload.metadata().name())},
      {"KQ_CLUSTER_QUEUE", RunningAdmission(workload).cluster_queue()},
      {"KQ_FLAVORS", FlavorsEnv(workload)},
      {"KQ_NODE_LABELS", NodeLabelsEnv(admitted.placements())},
      // The MultiKueue worker it was admitted on; empty without federation.
      {"KQ_CLUSTER", workload.status().cluster_name()},
  };
}

int ExitCodeOf(int wait_status) {
  if (WIFEXITED(wait_status)) {
    return WEXITSTATUS(wait_status);
  }
  if (WIFSIGNALED(wait_status)) {
    return 128 + WTERMSIG(wait_status);
  }
  return kExitError;
}

std::string DescribeWaitStatus(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    const int signal = WTERMSIG(wait_status);
    const char* abbrev = sigabbrev_np(signal);
    if (abbrev == nullptr) {
      return absl::StrCat("killed by signal ", signal);
    }
    return absl::StrCat("killed by signal ", signal, " (SIG", abbrev, ")");
  }
  return absl::StrCat("exit code ", ExitCodeOf(wait_status));
}

std::string DefaultRunnerId() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') {
    snprintf(host, sizeof(host), "localhost");
  }
  return absl::StrCat(host, ":", getpid());
}

Runner::Runner(client::Client& client, RunnerConfig config, std::ostream& err)
    : client_(client), config_(std::move(config)), err_(err) {}

Runner::~Runner() {
  StopHeartbeats();
  if (waiter_.joinable()) {
    waiter_.join();
  }
}

int Runner::Run() {
  // 1. Submit. Knowing the name before waiting lets an interrupt cancel it.
  absl::StatusOr<v1::SubmitWorkloadResponse> submitted =
      client_.SubmitWorkload(config_.workload);
  if (!submitted.ok()) {
    return ReportError(submitted.status(), err_);
  }
  namespace_name_ = submitted->workload().metadata().namespace_();
  name_ = submitted->workload().metadata().name();
  err_ << "workload.kueue.x-k8s.io/" << name_ << " created\n";
  return Loop();
}

int Runner::Loop() {
  for (;;) {
    // 2. Wait for admission.
    int signal = 0;
    {
      absl::MutexLock lock(&mu_);
      signal = interrupted_;
      if (signal == 0) {
        phase_ = Phase::kWaiting;
      }
    }
    if (signal != 0) {
      return EndInterruptedWhileWaiting(signal);
    }
    v1::AdmitRequest request;
    request.set_namespace_(namespace_name_);
    request.set_name(name_);
    request.set_runner_id(config_.runner_id);
    SetDuration(config_.lease, request.mutable_lease());
    // One Admit that answers at once, so where the workload waits is shown
    // right away rather than after a first poll period.
    v1::AdmitRequest now = request;
    SetDuration(absl::Milliseconds(1), now.mutable_timeout());
    absl::StatusOr<v1::AdmitResponse> admitted = client_.Admit(now);
    if (!admitted.ok() || admitted->outcome() == v1::AdmitResponse::PENDING) {
      if (admitted.ok()) {
        PrintPending(*admitted);
      }
      admitted = client_.WaitAdmitted(
          request, absl::InfiniteDuration(),
          [this](const v1::AdmitResponse& pending) { PrintPending(pending); },
          config_.poll);
    }
    {
      absl::MutexLock lock(&mu_);
      phase_ = Phase::kAttaching;
      signal = interrupted_;
    }
    if (signal != 0) {
      return EndInterruptedWhileWaiting(signal);
    }
    if (!admitted.ok()) {
      return ReportError(admitted.status(), err_);
    }
    const std::string who = absl::StrCat(namespace_name_, "/", name_);
    switch (admitted->outcome()) {
      case v1::AdmitResponse::ADMITTED: {
        std::optional<int> code = RunAdmitted(*admitted);
        if (code.has_value()) {
          return *code;
        }
        // Show where it waits again, even if the line is the same as
        // before the admission.
        last_pending_line_.clear();
        break;
      }
      case v1::AdmitResponse::FINISHED:
        err_ << "kq: workload " << who << " finished: " << admitted->reason();
        if (!admitted->message().empty()) {
          err_ << ": " << admitted->message();
        }
        err_ << "\n";
        return kExitError;
      case v1::AdmitResponse::DEACTIVATED:
        err_ << "kq: workload " << who << " was deactivated";
        if (!admitted->message().empty()) {
          err_ << ": " << admitted->message();
        }
        err_ << "\n";
        return kExitError;
      default:
        err_ << "kq: unexpected answer from kqd while waiting for " << who
             << ": " << v1::AdmitResponse::Outcome_Name(admitted->outcome())
             << "\n";
        return kExitError;
    }
  }
}

void Runner::PrintPending(const v1::AdmitResponse& response) {
  std::string line = absl::StrCat("waiting: ", response.message().empty()
                                                   ? response.reason()
                                                   : response.message());
  if (response.has_position()) {
    if (!pending_cluster_queue_known_) {
      pending_cluster_queue_known_ = true;
      absl::StatusOr<v1::ConfigObject> queue = client_.GetObject(
          "LocalQueue", namespace_name_, config_.workload.spec().queue_name());
      if (queue.ok()) {
        pending_cluster_queue_ = queue->local_queue().spec().cluster_queue();
      }
    }
    absl::StrAppend(&line, " (position ", response.position());
    if (!pending_cluster_queue_.empty()) {
      absl::StrAppend(&line, " in ClusterQueue ", pending_cluster_queue_);
    }
    absl::StrAppend(&line, ")");
  }
  if (line != last_pending_line_) {
    err_ << line << "\n" << std::flush;
    last_pending_line_ = std::move(line);
  }
}

bool Runner::HeldByOtherRunner(std::string* holder) {
  absl::StatusOr<v1::GetWorkloadResponse> current =
      client_.GetWorkload(namespace_name_, name_);
  if (!current.ok()) {
    return false;
  }
  const std::string& id = current->workload().status().runner().id();
  if (id.empty() || id == config_.runner_id) {
    return false;
  }
  *holder = id;
  return true;
}

std::optional<int> Runner::RunAdmitted(const v1::AdmitResponse& admitted) {
  const std::string who = absl::StrCat(namespace_name_, "/", name_);
  // 3. Attach (Admit attached already; this also says whether it is being
  // evicted in the meantime).
  v1::HeartbeatRequest attach;
  attach.set_namespace_(namespace_name_);
  attach.set_name(name_);
  attach.set_runner_id(config_.runner_id);
  SetDuration(config_.lease, attach.mutable_lease());
  absl::StatusOr<v1::HeartbeatResponse> attached = client_.Heartbeat(attach);
  if (!attached.ok()) {
    if (attached.status().code() != absl::StatusCode::kFailedPrecondition) {
      return ReportError(attached.status(), err_);
    }
    std::string holder;
    if (HeldByOtherRunner(&holder)) {
      err_ << "kq: workload " << who << " is run by runner \"" << holder
           << "\"\n";
      return kExitError;
    }
    err_ << "lost the admission before starting: "
         << attached.status().message() << "; waiting to be admitted again\n";
    absl::SleepFor(config_.reattach_delay);
    return std::nullopt;
  }
  if (attached->stop()) {
    v1::HeartbeatRequest confirm = attach;
    confirm.set_stopped(true);
    // Nothing ran: whether kqd still wanted the confirmation changes
    // nothing.
    [[maybe_unused]] absl::StatusOr<v1::HeartbeatResponse> confirmed =
        client_.Heartbeat(confirm);
    err_ << "evicted before starting: "
         << EvictionText(attached->workload(), "stop requested")
         << "; waiting to be admitted again\n";
    return std::nullopt;
  }

  // Start the command.
  const std::map<std::string, std::string> env = CommandEnvironment(admitted);
  int signal = 0;
  {
    absl::MutexLock lock(&mu_);
    signal = interrupted_;
  }
  if (signal != 0) {
    // It never ran: cancelled, as an interrupt while waiting.
    return EndInterruptedWhileWaiting(signal);
  }
  err_ << "admitted by ClusterQueue "
       << admitted.workload().status().admission().cluster_queue()
       << " on flavors " << env.at("KQ_FLAVORS")
       << "; running: " << CommandLine(config_.command) << "\n"
       << std::flush;
  absl::StatusOr<pid_t> pid = SpawnInOwnGroup(config_.command, env);
  if (!pid.ok()) {
    err_ << "kq: " << pid.status().message() << "\n";
    absl::StatusOr<v1::Workload> finished = client_.FinishWorkload(
        namespace_name_, name_, false, std::string(pid.status().message()));
    if (!finished.ok()) {
      ReportError(finished.status(), err_);
    }
    return pid.status().code() == absl::StatusCode::kNotFound
               ? kExitNotFound
               : kExitNotExecutable;
  }
  {
    absl::MutexLock lock(&mu_);
    child_ = *pid;
    phase_ = Phase::kRunning;
    // Leftovers of an earlier admission (repeated stops, warnings).
    events_.clear();
    // An interrupt between the check above and now found no command to
    // tell; deliver it as an event.
    if (interrupted_ != 0) {
      events_.push_back(
          Event{.kind = Event::Kind::kInterrupted, .signal = interrupted_});
      changed_.SignalAll();
    }
  }
  waiter_ = std::thread([this, child = *pid] {
    // WNOWAIT: the command stays a zombie, so its process group id cannot
    // be reused before the stragglers of the group are killed.
    siginfo_t info = {};
    while (waitid(P_PID, child, &info, WEXITED | WNOWAIT) != 0 &&
           errno == EINTR) {
    }
    Push(Event{.kind = Event::Kind::kExited});
  });
  StartHeartbeats();

  // Reaps the command once it exited: kills what is left of its group,
  // collects the wait status.
  auto reap = [this](pid_t child) {
    if (waiter_.joinable()) {
      waiter_.join();
    }
    kill(-child, SIGKILL);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    absl::MutexLock lock(&mu_);
    child_ = 0;
    return status;
  };

  // 4-6. Supervise.
  for (;;) {
    std::optional<Event> event = NextEvent(absl::InfiniteFuture());
    if (!event.has_value()) {
      continue;
    }
    switch (event->kind) {
      case Event::Kind::kExited: {
        StopHeartbeats();
        const int status = reap(*pid);
        {
          absl::MutexLock lock(&mu_);
          phase_ = Phase::kDone;
        }
        const int code = ExitCodeOf(status);
        absl::StatusOr<v1::Workload> finished = client_.FinishWorkload(
            namespace_name_, name_, code == 0, DescribeWaitStatus(status));
        if (!finished.ok()) {
          err_ << "kq: the command ended (" << DescribeWaitStatus(status)
               << ") but kqd did not record it: ";
          ReportError(finished.status(), err_);
        } else {
          err_ << "workload " << who
               << " finished: " << DescribeWaitStatus(status) << "\n";
        }
        return code;
      }
      case Event::Kind::kStop: {
        const std::string why = EvictionText(
            event->workload, event->status.ok()
                                 ? std::string("stop requested")
                                 : std::string(event->status.message()));
        err_ << "stopping: " << why << "\n" << std::flush;
        StopCommand(*pid, SIGTERM);
        reap(*pid);
        StopHeartbeats();
        {
          absl::MutexLock lock(&mu_);
          phase_ = Phase::kAttaching;
          signal = interrupted_;
        }
        v1::HeartbeatRequest confirm = attach;
        confirm.set_stopped(true);
        absl::StatusOr<v1::HeartbeatResponse> confirmed =
            client_.Heartbeat(confirm);
        if (signal != 0) {
          return EndInterruptedWhileWaiting(signal);
        }
        if (!confirmed.ok()) {
          // Finished or taken over meanwhile: waiting again says which.
          err_ << "stopped: " << why << "\n" << std::flush;
          return std::nullopt;
        }
        err_ << "evicted: " << EvictionText(confirmed->workload(), why);
        if (!IsInactive(confirmed->workload())) {
          err_ << "; waiting to be admitted again";
        }
        err_ << "\n" << std::flush;
        return std::nullopt;
      }
      case Event::Kind::kInterrupted: {
        err_ << "interrupted: stopping the command\n" << std::flush;
        StopCommand(*pid, event->signal);
        const int status = reap(*pid);
        StopHeartbeats();
        {
          absl::MutexLock lock(&mu_);
          phase_ = Phase::kDone;
        }
        absl::StatusOr<v1::Workload> finished = client_.FinishWorkload(
            namespace_name_, name_, false, "interrupted");
        if (!finished.ok()) {
          ReportError(finished.status(), err_);
        } else {
          err_ << "workload " << who << " finished as Failed: interrupted ("
               << DescribeWaitStatus(status) << ")\n";
        }
        return 128 + event->signal;
      }
      case Event::Kind::kGone: {
        err_ << "kq: workload " << who << " is gone ("
             << event->status.message() << "); stopping the command\n";
        StopCommand(*pid, SIGTERM);
        reap(*pid);
        StopHeartbeats();
        absl::MutexLock lock(&mu_);
        phase_ = Phase::kDone;
        return kExitError;
      }
      case Event::Kind::kWarning:
        err_ << "warning: cannot renew the lease of workload " << who << ": "
             << event->status << "\n";
        break;
    }
  }
}

void Runner::StopCommand(pid_t pid, int first_signal) {
  kill(-pid, first_signal);
  const absl::Time deadline = absl::Now() + config_.grace;
  bool killed = false;
  for (;;) {
    std::optional<Event> event =
        NextEvent(killed ? absl::InfiniteFuture() : deadline);
    if (!event.has_value()) {
      // The grace period is over.
      err_ << "the command did not stop within " << config_.grace
           << ": killing it\n";
      kill(-pid, SIGKILL);
      killed = true;
      continue;
    }
    if (event->kind == Event::Kind::kExited) {
      return;
    }
    // Further stops, warnings or a second interrupt change nothing: the
    // command is stopping already.
  }
}

std::optional<Runner::Event> Runner::NextEvent(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  while (events_.empty()) {
    if (changed_.WaitWithDeadline(&mu_, deadline) && events_.empty()) {
      return std::nullopt;
    }
  }
  Event event = std::move(events_.front());
  events_.pop_front();
  return event;
}

void Runner::Push(Event event) {
  absl::MutexLock lock(&mu_);
  events_.push_back(std::move(event));
  changed_.SignalAll();
}

void Runner::StartHeartbeats() {
  {
    absl::MutexLock lock(&mu_);
    heartbeats_stop_ = false;
  }
  heartbeats_ = std::thread([this] { HeartbeatLoop(); });
}

void Runner::StopHeartbeats() {
  {
    absl::MutexLock lock(&mu_);
    heartbeats_stop_ = true;
    changed_.SignalAll();
  }
  if (heartbeats_.joinable()) {
    heartbeats_.join();
  }
}

void Runner::HeartbeatLoop() {
  v1::HeartbeatRequest renew;
  renew.set_namespace_(namespace_name_);
  renew.set_name(name_);
  renew.set_runner_id(config_.runner_id);
  SetDuration(config_.lease, renew.mutable_lease());
  const absl::Duration interval = config_.lease / 3;
  bool stop_sent = false;
  bool warned = false;
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      const absl::Time next = absl::Now() + interval;
      while (!heartbeats_stop_) {
        if (changed_.WaitWithDeadline(&mu_, next)) {
          break;
        }
      }
      if (heartbeats_stop_) {
        return;
      }
    }
    // Keeps renewing while the command stops: a lapsed lease would release
    // the quota before the command is gone.
    absl::StatusOr<v1::HeartbeatResponse> renewed = client_.Heartbeat(renew);
    if (renewed.ok()) {
      warned = false;
      if (renewed->stop() && !stop_sent) {
        stop_sent = true;
        Push(
            Event{.kind = Event::Kind::kStop, .workload = renewed->workload()});
      }
      continue;
    }
    switch (renewed.status().code()) {
      case absl::StatusCode::kFailedPrecondition:
        // The quota is gone (or the workload finished): stop.
        if (!stop_sent) {
          stop_sent = true;
          Push(Event{.kind = Event::Kind::kStop, .status = renewed.status()});
        }
        break;
      case absl::StatusCode::kNotFound:
        Push(Event{.kind = Event::Kind::kGone, .status = renewed.status()});
        return;
      default:
        if (!warned) {
          warned = true;
          Push(
              Event{.kind = Event::Kind::kWarning, .status = renewed.status()});
        }
        break;
    }
  }
}

int Runner::EndInterruptedWhileWaiting(int signal) {
  bool cancel = false;
  {
    absl::MutexLock lock(&mu_);
    phase_ = Phase::kDone;
    cancel = !cancel_sent_;
    cancel_sent_ = true;
  }
  if (cancel) {
    absl::StatusOr<v1::Workload> cancelled =
        client_.CancelWorkload(namespace_name_, name_);
    if (!cancelled.ok() &&
        cancelled.status().code() != absl::StatusCode::kFailedPrecondition) {
      ReportError(cancelled.status(), err_);
    }
  }
  err_ << "interrupted: workload " << namespace_name_ << "/" << name_
       << " cancelled\n";
  return 128 + signal;
}

void Runner::Interrupt(int signal) {
  bool cancel = false;
  {
    absl::MutexLock lock(&mu_);
    if (interrupted_ != 0) {
      return;
    }
    interrupted_ = signal;
    switch (phase_) {
      case Phase::kWaiting:
        // WaitAdmitted returns FINISHED once the workload is cancelled.
        cancel = !cancel_sent_;
        cancel_sent_ = true;
        break;
      case Phase::kRunning:
        events_.push_back(
            Event{.kind = Event::Kind::kInterrupted, .signal = signal});
        changed_.SignalAll();
        break;
      case Phase::kSubmitting:
      case Phase::kAttaching:
      case Phase::kDone:
        // Run() checks interrupted_ at its next step.
        break;
    }
  }
  if (cancel) {
    // The result is seen by Run() through WaitAdmitted.
    [[maybe_unused]] absl::StatusOr<v1::Workload> cancelled =
        client_.CancelWorkload(namespace_name_, name_);
  }
}

void Runner::KillCommand() {
  absl::MutexLock lock(&mu_);
  if (child_ != 0) {
    kill(-child_, SIGKILL);
  }
}

}  // namespace kq::cli
