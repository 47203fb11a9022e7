// The C++ client against a real kqd: the launcher workflow (Admit, the
// runner handshake, preemption that waits for the runner), lease and grace
// expiry, Admit outcomes and many concurrent waiters, retries and a
// resumable watch across kqd restarts, and watches cancelled from another
// thread. Plus WatchResumable against a fake server that breaks streams in
// the middle of a revision.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "google/protobuf/util/time_util.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kq/v1/queue_service.grpc.pb.h"

#include "manifest/manifest.h"
#include "manifest/quantity.h"
#include "tests/integration/kqd_process.h"
#include "tests/testing/temp_dir.h"

namespace kq::testing {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

constexpr char kNamespace[] = "team-a";

// One ClusterQueue "cq" with `cpu` nominal cpu on one flavor, preempting
// lower priorities within itself; LocalQueue team-a/lq; priority classes
// low (100) and high (1000).
v1::ApplyRequest QueueConfig(const std::string& cpu) {
  const std::string yaml = absl::StrReplaceAll(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default-flavor
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: cq
spec:
  namespaceSelector: {}
  preemption:
    withinClusterQueue: LowerPriority
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: $CPU
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: team-a
  name: lq
spec:
  clusterQueue: cq
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: low
value: 100
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: high
value: 1000
)",
                                               {{"$CPU", cpu}});
  v1::ApplyRequest request;
  auto docs = manifest::ParseManifests(yaml);
  EXPECT_TRUE(docs.ok()) << docs.status();
  if (!docs.ok()) return request;
  for (manifest::Document& doc : *docs) {
    EXPECT_TRUE(doc.status.ok()) << doc.status;
    if (doc.config_object) *request.add_objects() = *doc.config_object;
  }
  return request;
}

// A one-pod workload asking for `cpu` in team-a/lq.
v1::Workload CpuWorkload(const std::string& name, const std::string& cpu,
                         const std::string& priority_class = "") {
  v1::Workload wl;
  wl.mutable_metadata()->set_name(name);
  wl.mutable_metadata()->set_namespace_(kNamespace);
  wl.mutable_spec()->set_queue_name("lq");
  wl.mutable_spec()->set_priority_class_name(priority_class);
  v1::PodSet* ps = wl.mutable_spec()->add_pod_sets();
  ps->set_name("main");
  ps->set_count(1);
  (*ps->mutable_requests())["cpu"] = cpu;
  return wl;
}

// The ResourceFlavor whose event tells a watcher the test is over.
v1::ApplyRequest EndOfWatch() {
  v1::ApplyRequest request;
  request.add_objects()
      ->mutable_resource_flavor()
      ->mutable_metadata()
      ->set_name("end-of-watch");
  return request;
}

bool IsEndOfWatch(const v1::WatchEvent& event) {
  return event.has_config_object() &&
         event.config_object().has_resource_flavor() &&
         event.config_object().resource_flavor().metadata().name() ==
             "end-of-watch";
}

const v1::Condition* FindCondition(const v1::Workload& wl,
                                   const std::string& type) {
  for (const v1::Condition& c : wl.status().conditions()) {
    if (c.type() == type) return &c;
  }
  return nullptr;
}

bool IsTrue(const v1::Workload& wl, const std::string& type) {
  const v1::Condition* c = FindCondition(wl, type);
  return c != nullptr && c->status() == "True";
}

// Charged to its ClusterQueue: a quota reservation of an unfinished
// workload (finished workloads keep status.admission, as in Kueue).
bool HoldsQuota(const v1::Workload& wl) {
  return wl.status().has_admission() &&
         !wl.status().admission().cluster_queue().empty() &&
         IsTrue(wl, "QuotaReserved") && !IsTrue(wl, "Finished");
}

int64_t MilliCpu(const v1::Workload& wl) {
  int64_t total = 0;
  for (const v1::PodSetAssignment& psa :
       wl.status().admission().pod_set_assignments()) {
    auto it = psa.resource_usage().find("cpu");
    if (it == psa.resource_usage().end()) continue;
    auto q = manifest::internal::ParseQuantity(it->second);
    EXPECT_TRUE(q.ok()) << it->second;
    if (q.ok()) total += q->milli;
  }
  return total;
}

absl::Time ToTime(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

google::protobuf::Duration Dur(absl::Duration d) {
  return google::protobuf::util::TimeUtil::MillisecondsToDuration(
      absl::ToInt64Milliseconds(d));
}

// Polls `condition` until it holds or `timeout` passes. Positive
// conditions wait generously: the machine may be loaded.
bool Eventually(const std::function<bool()>& condition,
                absl::Duration timeout = absl::Seconds(20)) {
  const absl::Time end = absl::Now() + timeout;
  while (absl::Now() < end) {
    if (condition()) return true;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return condition();
}

client::ClientOptions FastRetries(const std::string& target) {
  return {.target = target,
          .deadline = absl::Seconds(20),
          .retry_initial_backoff = absl::Milliseconds(50),
          .retry_max_backoff = absl::Milliseconds(500),
          .retry_budget = absl::Seconds(60)};
}

using ObjectKeyT = std::tuple<std::string, std::string, std::string>;

ObjectKeyT KeyOf(const v1::WatchEvent& event) {
  if (event.has_workload()) {
    return {"Workload", event.workload().metadata().namespace_(),
            event.workload().metadata().name()};
  }
  const v1::ConfigObject& o = event.config_object();
  std::string kind = o.GetDescriptor()
                         ->FindFieldByNumber(o.kind_case())
                         ->message_type()
                         ->name();
  const v1::ObjectMeta* meta = nullptr;
  switch (o.kind_case()) {
    case v1::ConfigObject::kResourceFlavor:
      meta = &o.resource_flavor().metadata();
      break;
    case v1::ConfigObject::kClusterQueue:
      meta = &o.cluster_queue().metadata();
      break;
    case v1::ConfigObject::kLocalQueue:
      meta = &o.local_queue().metadata();
      break;
    case v1::ConfigObject::kWorkloadPriorityClass:
      meta = &o.workload_priority_class().metadata();
      break;
    default:
      return {kind, "", ""};
  }
  return {kind, meta->namespace_(), meta->name()};
}

// Consumes WatchResumable from revision 0 on its own thread until the
// end-of-watch event, rebuilding the workloads from the stream and checking
// at every revision boundary that the quota held in ClusterQueue "cq" stays
// within `nominal_milli_cpu`.
class QuotaWatcher {
 public:
  QuotaWatcher(client::Client* client, int64_t nominal_milli_cpu)
      : client_(client), nominal_(nominal_milli_cpu) {}
  ~QuotaWatcher() { Join(); }

  void Start() {
    thread_ = std::thread([this] {
      v1::WatchRequest request;
      request.set_from_revision(0);
      status_ = client_->WatchResumable(
          request,
          [this](const v1::WatchEvent& event) { return OnEvent(event); },
          &progress_);
    });
  }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }

  // After Join().
  const absl::Status& status() const { return status_; }
  const client::WatchProgress& progress() const { return progress_; }

  std::vector<v1::WatchEvent> events() const {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  std::vector<std::string> violations() const {
    absl::MutexLock lock(&mu_);
    return violations_;
  }
  int64_t max_used() const {
    absl::MutexLock lock(&mu_);
    return max_used_;
  }
  int64_t last_revision() const {
    absl::MutexLock lock(&mu_);
    return revision_;
  }
  // The workload as the stream last showed it.
  std::optional<v1::Workload> workload(const std::string& name) const {
    absl::MutexLock lock(&mu_);
    auto it = workloads_.find(name);
    if (it == workloads_.end()) return std::nullopt;
    return it->second;
  }
  // Whether, at some revision, `name` held quota while being evicted and
  // nothing else did: the stream's evidence that a preemptor waited.
  bool saw_evicting_alone(const std::string& name) const {
    absl::MutexLock lock(&mu_);
    return evicting_alone_.count(name) > 0;
  }

 private:
  bool OnEvent(const v1::WatchEvent& event) {
    absl::MutexLock lock(&mu_);
    if (event.revision() < revision_) {
      violations_.push_back(
          absl::StrCat("revision ", event.revision(), " after ", revision_));
    }
    if (!seen_.insert({event.revision(), KeyOf(event)}).second) {
      violations_.push_back(
          absl::StrCat("duplicate event at revision ", event.revision()));
    }
    if (event.revision() > revision_) {
      CheckRevision();
      revision_ = event.revision();
    }
    events_.push_back(event);
    if (event.has_workload()) {
      const std::string& name = event.workload().metadata().name();
      if (event.type() == v1::WatchEvent::DELETED) {
        workloads_.erase(name);
      } else {
        workloads_[name] = event.workload();
      }
    }
    if (IsEndOfWatch(event)) {
      CheckRevision();
      return false;
    }
    return true;
  }

  // The state after every event of revision_ was applied.
  void CheckRevision() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    int64_t used = 0;
    std::vector<std::string> holders;
    for (const auto& [name, wl] : workloads_) {
      if (!HoldsQuota(wl) || wl.status().admission().cluster_queue() != "cq") {
        continue;
      }
      used += MilliCpu(wl);
      holders.push_back(name);
    }
    max_used_ = std::max(max_used_, used);
    if (used > nominal_) {
      violations_.push_back(absl::StrCat("revision ", revision_, ": ", used,
                                         "m cpu held, nominal ", nominal_,
                                         "m"));
    }
    if (holders.size() == 1 && IsTrue(workloads_.at(holders[0]), "Evicted")) {
      evicting_alone_.insert(holders[0]);
    }
  }

  client::Client* client_;
  const int64_t nominal_;
  std::thread thread_;
  absl::Status status_;
  client::WatchProgress progress_;

  mutable absl::Mutex mu_;
  int64_t revision_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<v1::WatchEvent> events_ ABSL_GUARDED_BY(mu_);
  std::set<std::pair<int64_t, ObjectKeyT>> seen_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, v1::Workload> workloads_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> violations_ ABSL_GUARDED_BY(mu_);
  int64_t max_used_ ABSL_GUARDED_BY(mu_) = 0;
  std::set<std::string> evicting_alone_ ABSL_GUARDED_BY(mu_);
};

// A launcher's runner loop: heartbeats `name` every `period` with `lease`
// until told to stop, then keeps heartbeating until Confirm() (or for good
// when `confirm` never comes), then reports stopped=true. Silence() makes
// it stop calling, as a crashed launcher would.
class Runner {
 public:
  Runner(client::Client* client, std::string name, std::string id,
         absl::Duration lease, absl::Duration period = absl::Milliseconds(100))
      : client_(client),
        name_(std::move(name)),
        id_(std::move(id)),
        lease_(lease),
        period_(period) {}
  ~Runner() { Stop(); }

  void Start() {
    thread_ = std::thread([this] { Loop(); });
  }
  void Stop() {
    quit_ = true;
    if (thread_.joinable()) thread_.join();
  }
  void Confirm() { confirm_ = true; }
  void Silence() { silent_ = true; }

  int heartbeats() const { return heartbeats_; }
  bool told_stop() const { return told_stop_; }
  bool confirmed() const { return confirmed_; }
  // The last heartbeat error (OK while all succeeded).
  absl::Status last_error() const {
    absl::MutexLock lock(&mu_);
    return last_error_;
  }
  // The first response that said stop.
  v1::HeartbeatResponse stop_response() const {
    absl::MutexLock lock(&mu_);
    return stop_response_;
  }
  absl::Time told_stop_at() const {
    absl::MutexLock lock(&mu_);
    return told_stop_at_;
  }

 private:
  void Loop() {
    while (!quit_) {
      if (!silent_) Beat();
      if (confirmed_) return;
      absl::SleepFor(period_);
    }
  }

  void Beat() {
    v1::HeartbeatRequest request;
    request.set_namespace_(kNamespace);
    request.set_name(name_);
    request.set_runner_id(id_);
    *request.mutable_lease() = Dur(lease_);
    const bool confirming = told_stop_ && confirm_;
    request.set_stopped(confirming);
    absl::StatusOr<v1::HeartbeatResponse> response =
        client_->Heartbeat(request);
    absl::MutexLock lock(&mu_);
    if (!response.ok()) {
      last_error_ = response.status();
      return;
    }
    ++heartbeats_;
    if (confirming) {
      confirmed_ = true;
      return;
    }
    if (response->stop() && !told_stop_) {
      stop_response_ = *response;
      told_stop_at_ = absl::Now();
      told_stop_ = true;
    }
  }

  client::Client* client_;
  const std::string name_;
  const std::string id_;
  const absl::Duration lease_;
  const absl::Duration period_;
  std::thread thread_;
  std::atomic<bool> quit_{false};
  std::atomic<bool> confirm_{false};
  std::atomic<bool> silent_{false};
  std::atomic<int> heartbeats_{0};
  std::atomic<bool> told_stop_{false};
  std::atomic<bool> confirmed_{false};
  mutable absl::Mutex mu_;
  absl::Status last_error_ ABSL_GUARDED_BY(mu_);
  v1::HeartbeatResponse stop_response_ ABSL_GUARDED_BY(mu_);
  absl::Time told_stop_at_ ABSL_GUARDED_BY(mu_);
};

v1::AdmitRequest AdmitByName(const std::string& name, absl::Duration timeout) {
  v1::AdmitRequest request;
  request.set_namespace_(kNamespace);
  request.set_name(name);
  *request.mutable_timeout() = Dur(timeout);
  return request;
}

// A watch call on its own thread, cancellable from the test's: `call`
// gets the event handler and the cancellation to pass on.
class CancellableWatch {
 public:
  using OnEvent = std::function<bool(const v1::WatchEvent&)>;
  using Call = std::function<absl::Status(const OnEvent&, std::stop_token)>;
  explicit CancellableWatch(Call call) {
    thread_ = std::thread([this, call = std::move(call)] {
      status_ = call(
          [this](const v1::WatchEvent&) {
            if (events_.fetch_add(1) == 0) first_.Notify();
            return true;
          },
          cancel_.get_token());
      returned_.Notify();
    });
  }
  ~CancellableWatch() {
    cancel_.request_stop();
    thread_.join();
  }

  bool WaitForFirstEvent() {
    return first_.WaitForNotificationWithTimeout(absl::Seconds(20));
  }
  // Requests the cancellation; returns how long the call took to return
  // (InfiniteDuration if it did not within 30 s).
  absl::Duration Cancel() {
    const absl::Time start = absl::Now();
    cancel_.request_stop();
    if (!returned_.WaitForNotificationWithTimeout(absl::Seconds(30))) {
      return absl::InfiniteDuration();
    }
    return absl::Now() - start;
  }
  // Once returned.
  const absl::Status& status() const { return status_; }
  int events() const { return events_.load(); }

 private:
  std::stop_source cancel_;
  std::atomic<int> events_{0};
  absl::Notification first_;
  absl::Notification returned_;
  absl::Status status_;
  std::thread thread_;
};

class ClientTest : public ::testing::Test {
 protected:
  // Starts kqd (with `args`) and a client with fast retries.
  void StartKqd(const std::vector<std::string>& args = {}) {
    kqd_ = std::make_unique<KqdProcess>(dir_.path());
    ASSERT_TRUE(kqd_->Start(args).ok());
    client_ = client::NewGrpcClient(FastRetries(kqd_->target()));
  }
  // Restarts kqd on the same port, so client_ reconnects by itself.
  void Restart(bool kill) {
    const int port = kqd_->port();
    if (kill) {
      kqd_->Kill();
    } else {
      EXPECT_EQ(kqd_->Terminate(), 0);
    }
    ASSERT_TRUE(kqd_->Start({absl::StrCat("--listen=127.0.0.1:", port)}).ok());
    ASSERT_EQ(kqd_->port(), port);
    // Reads retry until the channel is back; calls that change state do
    // not, so the test waits for it here.
    ASSERT_TRUE(client_->ListWorkloads({}).ok());
  }
  v1::Workload Get(const std::string& name) {
    auto got = client_->GetWorkload(kNamespace, name);
    EXPECT_TRUE(got.ok()) << name << ": " << got.status();
    return got.ok() ? got->workload() : v1::Workload();
  }

  ScopedTempDir dir_;
  std::unique_ptr<KqdProcess> kqd_;
  std::unique_ptr<client::Client> client_;
};

// Issue 5's launcher: submit and wait, attach as runner, heartbeat; a
// higher-priority workload preempts it, but its quota is held until the
// runner confirms the stop; then the preemptor runs, and the victim is
// admitted again once the preemptor finishes. The watch stream shows the
// ClusterQueue never holding more than its nominal quota.
TEST_F(ClientTest, LauncherWorkflowPreemptionWaitsForRunner) {
  ASSERT_NO_FATAL_FAILURE(StartKqd());
  ASSERT_TRUE(client_->Apply(QueueConfig("4")).ok());
  QuotaWatcher watcher(client_.get(), 4000);
  watcher.Start();

  v1::AdmitRequest submit;
  *submit.mutable_workload() = CpuWorkload("low", "3", "low");
  auto low = client_->WaitAdmitted(submit, absl::Seconds(20), nullptr,
                                   absl::Seconds(5));
  ASSERT_TRUE(low.ok()) << low.status();
  ASSERT_EQ(low->outcome(), v1::AdmitResponse::ADMITTED);
  EXPECT_EQ(low->workload().status().admission().cluster_queue(), "cq");
  ASSERT_EQ(low->placements_size(), 1);
  EXPECT_EQ(low->placements(0).pod_set(), "main");

  Runner runner(client_.get(), "low", "launcher-1", absl::Seconds(10));
  runner.Start();
  ASSERT_TRUE(Eventually([&] { return runner.heartbeats() > 0; }))
      << runner.last_error();
  EXPECT_EQ(Get("low").status().runner().id(), "launcher-1");

  auto high = client_->SubmitWorkload(CpuWorkload("high", "3", "high"));
  ASSERT_TRUE(high.ok()) << high.status();
  EXPECT_FALSE(HoldsQuota(high->workload()));

  ASSERT_TRUE(Eventually([&] { return runner.told_stop(); }))
      << runner.last_error();
  const v1::HeartbeatResponse stop = runner.stop_response();
  EXPECT_TRUE(stop.has_stop_deadline());
  EXPECT_TRUE(IsTrue(stop.workload(), "Evicted"));

  // Until the runner confirms, the victim keeps its quota and the
  // preemptor waits.
  auto waiting = client_->Admit(AdmitByName("high", absl::Seconds(1)));
  ASSERT_TRUE(waiting.ok()) << waiting.status();
  EXPECT_EQ(waiting->outcome(), v1::AdmitResponse::PENDING);
  EXPECT_FALSE(runner.confirmed());
  v1::Workload victim = Get("low");
  EXPECT_TRUE(HoldsQuota(victim));
  EXPECT_TRUE(IsTrue(victim, "Evicted"));
  EXPECT_TRUE(victim.status().has_stop_deadline());
  EXPECT_FALSE(HoldsQuota(Get("high")));

  runner.Confirm();
  ASSERT_TRUE(Eventually([&] { return runner.confirmed(); }))
      << runner.last_error();
  runner.Stop();

  auto admitted =
      client_->WaitAdmitted(AdmitByName("high", absl::Seconds(0)),
                            absl::Seconds(20), nullptr, absl::Seconds(5));
  ASSERT_TRUE(admitted.ok()) << admitted.status();
  EXPECT_EQ(admitted->outcome(), v1::AdmitResponse::ADMITTED);

  // The victim is back in its queue.
  victim = Get("low");
  EXPECT_FALSE(HoldsQuota(victim));
  EXPECT_TRUE(IsTrue(victim, "Requeued"));
  EXPECT_FALSE(victim.status().has_runner());
  std::vector<v1::AdmitResponse> pending;
  auto still = client_->WaitAdmitted(
      AdmitByName("low", absl::Seconds(0)), absl::Seconds(1),
      [&](const v1::AdmitResponse& r) { pending.push_back(r); },
      absl::Milliseconds(500));
  EXPECT_EQ(still.status().code(), absl::StatusCode::kDeadlineExceeded);
  ASSERT_FALSE(pending.empty());
  EXPECT_EQ(pending[0].outcome(), v1::AdmitResponse::PENDING);
  EXPECT_FALSE(pending[0].reason().empty());
  ASSERT_TRUE(pending[0].has_position());
  EXPECT_EQ(pending[0].position(), 0);

  ASSERT_TRUE(client_->FinishWorkload(kNamespace, "high", true, "done").ok());

  // Re-admitted; this time the runner attaches through Admit.
  v1::AdmitRequest again = AdmitByName("low", absl::Seconds(0));
  again.set_runner_id("launcher-2");
  *again.mutable_lease() = Dur(absl::Seconds(10));
  auto readmitted = client_->WaitAdmitted(again, absl::Seconds(20), nullptr,
                                          absl::Seconds(5));
  ASSERT_TRUE(readmitted.ok()) << readmitted.status();
  EXPECT_EQ(readmitted->outcome(), v1::AdmitResponse::ADMITTED);
  EXPECT_EQ(readmitted->workload().status().runner().id(), "launcher-2");
  v1::HeartbeatRequest beat;
  beat.set_namespace_(kNamespace);
  beat.set_name("low");
  beat.set_runner_id("launcher-2");
  auto renewed = client_->Heartbeat(beat);
  ASSERT_TRUE(renewed.ok()) << renewed.status();
  EXPECT_FALSE(renewed->stop());
  // The old runner cannot take it over while launcher-2's lease is live.
  beat.set_runner_id("launcher-1");
  EXPECT_EQ(client_->Heartbeat(beat).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(client_->FinishWorkload(kNamespace, "low", true, "done").ok());

  ASSERT_TRUE(client_->Apply(EndOfWatch()).ok());
  watcher.Join();
  EXPECT_TRUE(watcher.status().ok()) << watcher.status();
  EXPECT_THAT(watcher.violations(), ::testing::IsEmpty());
  EXPECT_EQ(watcher.max_used(), 3000);
  EXPECT_TRUE(watcher.saw_evicting_alone("low"));
  for (const std::string name : {"low", "high"}) {
    std::optional<v1::Workload> streamed = watcher.workload(name);
    ASSERT_TRUE(streamed.has_value()) << name;
    EXPECT_TRUE(IsTrue(*streamed, "Finished")) << name;
    EXPECT_TRUE(MessageDifferencer::Equals(*streamed, Get(name))) << name;
  }
}

// A runner that goes silent: the quota comes back when its lease lapses,
// long before the eviction grace (30 s by default) would end.
TEST_F(ClientTest, LeaseLapseReleasesQuotaWithoutConfirmation) {
  ASSERT_NO_FATAL_FAILURE(StartKqd());
  ASSERT_TRUE(client_->Apply(QueueConfig("4")).ok());
  QuotaWatcher watcher(client_.get(), 4000);
  watcher.Start();
  ASSERT_TRUE(client_->SubmitWorkload(CpuWorkload("low", "3", "low")).ok());
  Runner runner(client_.get(), "low", "launcher-1", absl::Seconds(2));
  runner.Start();
  ASSERT_TRUE(Eventually([&] { return runner.heartbeats() > 0; }))
      << runner.last_error();

  ASSERT_TRUE(client_->SubmitWorkload(CpuWorkload("high", "3", "high")).ok());
  ASSERT_TRUE(Eventually([&] { return runner.told_stop(); }))
      << runner.last_error();
  runner.Silence();
  const absl::Time silent = absl::Now();

  auto admitted =
      client_->WaitAdmitted(AdmitByName("high", absl::Seconds(0)),
                            absl::Seconds(20), nullptr, absl::Seconds(5));
  ASSERT_TRUE(admitted.ok()) << admitted.status();
  EXPECT_EQ(admitted->outcome(), v1::AdmitResponse::ADMITTED);
  EXPECT_LT(absl::Now() - silent, absl::Seconds(25));
  // Released by the lease, not by the grace: before the stop deadline.
  const v1::Condition* reserved =
      FindCondition(admitted->workload(), "QuotaReserved");
  ASSERT_NE(reserved, nullptr);
  EXPECT_LT(ToTime(reserved->last_transition_time()),
            ToTime(runner.stop_response().stop_deadline()));
  runner.Stop();

  // The late runner learns it must stop; its confirmation is accepted.
  v1::HeartbeatRequest beat;
  beat.set_namespace_(kNamespace);
  beat.set_name("low");
  beat.set_runner_id("launcher-1");
  EXPECT_EQ(client_->Heartbeat(beat).status().code(),
            absl::StatusCode::kFailedPrecondition);
  beat.set_stopped(true);
  EXPECT_TRUE(client_->Heartbeat(beat).ok());
  EXPECT_TRUE(IsTrue(Get("low"), "Requeued"));

  ASSERT_TRUE(client_->Apply(EndOfWatch()).ok());
  watcher.Join();
  EXPECT_TRUE(watcher.status().ok()) << watcher.status();
  EXPECT_THAT(watcher.violations(), ::testing::IsEmpty());
  EXPECT_TRUE(watcher.saw_evicting_alone("low"));
}

// A runner that keeps heartbeating but never confirms: the quota comes back
// at the stop deadline (--eviction-grace) and the runner is then told the
// workload holds no quota.
TEST_F(ClientTest, EvictionGraceReleasesQuotaOfUnconfirmedRunner) {
  ASSERT_NO_FATAL_FAILURE(StartKqd({"--eviction-grace=2s"}));
  ASSERT_TRUE(client_->Apply(QueueConfig("4")).ok());
  QuotaWatcher watcher(client_.get(), 4000);
  watcher.Start();
  ASSERT_TRUE(client_->SubmitWorkload(CpuWorkload("low", "3", "low")).ok());
  Runner runner(client_.get(), "low", "launcher-1", absl::Seconds(30));
  runner.Start();
  ASSERT_TRUE(Eventually([&] { return runner.heartbeats() > 0; }))
      << runner.last_error();

  ASSERT_TRUE(client_->SubmitWorkload(CpuWorkload("high", "3", "high")).ok());
  ASSERT_TRUE(Eventually([&] { return runner.told_stop(); }))
      << runner.last_error();
  const v1::HeartbeatResponse stop = runner.stop_response();
  ASSERT_TRUE(stop.has_stop_deadline());
  const v1::Condition* evicted = FindCondition(stop.workload(), "Evicted");
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(ToTime(stop.stop_deadline()),
            ToTime(evicted->last_transition_time()) + absl::Seconds(2));

  auto admitted =
      client_->WaitAdmitted(AdmitByName("high", absl::Seconds(0)),
                            absl::Seconds(20), nullptr, absl::Seconds(5));
  ASSERT_TRUE(admitted.ok()) << admitted.status();
  EXPECT_EQ(admitted->outcome(), v1::AdmitResponse::ADMITTED);
  const v1::Condition* reserved =
      FindCondition(admitted->workload(), "QuotaReserved");
  ASSERT_NE(reserved, nullptr);
  EXPECT_GE(ToTime(reserved->last_transition_time()),
            ToTime(stop.stop_deadline()));
  // The still-heartbeating runner is told its workload holds no quota.
  ASSERT_TRUE(Eventually([&] {
    return runner.last_error().code() == absl::StatusCode::kFailedPrecondition;
  }));
  EXPECT_THAT(runner.last_error().message(), HasSubstr("holds no quota"));
  runner.Stop();

  ASSERT_TRUE(client_->Apply(EndOfWatch()).ok());
  watcher.Join();
  EXPECT_TRUE(watcher.status().ok()) << watcher.status();
  EXPECT_THAT(watcher.violations(), ::testing::IsEmpty());
  EXPECT_TRUE(watcher.saw_evicting_alone("low"));
}

// One resumable watch across a kill -9 and a graceful restart on the same
// port: every event arrives once, in order, as a fresh watch of the whole
// log shows them, and the last state of each workload is what kqd lists.
// WatchBatches carries Watch's events, in Watch's order, several to a
// message when a read of the log finds several; the client's Watch reads
// it and delivers the same events one by one.
TEST_F(ClientTest, WatchBatchesCarriesWatchsEventsSeveralToAMessage) {
  ASSERT_NO_FATAL_FAILURE(StartKqd());
  auto start = client_->ListWorkloads({});
  ASSERT_TRUE(start.ok()) << start.status();
  ASSERT_TRUE(client_->Apply(QueueConfig("3")).ok());
  // One Apply: many events committed together, read together.
  v1::ApplyRequest workloads;
  constexpr int kCount = 20;
  for (int i = 0; i < kCount; ++i) {
    *workloads.add_workloads() = CpuWorkload(absl::StrCat("w", i), "1");
  }
  ASSERT_TRUE(client_->Apply(workloads).ok());
  // Three fit; then nothing changes until the end of the watch.
  ASSERT_TRUE(Eventually([&] {
    auto listed = client_->ListWorkloads({});
    if (!listed.ok()) return false;
    int admitted = 0;
    for (const v1::Workload& wl : listed->workloads()) {
      if (wl.status().has_admission()) ++admitted;
    }
    return admitted == 3;
  }));
  ASSERT_TRUE(client_->Apply(EndOfWatch()).ok());

  v1::WatchRequest request;
  request.set_from_revision(start->revision());
  auto event_string = [](const v1::WatchEvent& e) {
    return absl::StrCat(e.revision(), " ", v1::WatchEvent::Type_Name(e.type()),
                        " ", e.workload().metadata().name(), " ",
                        e.workload().status().conditions_size(), " ",
                        e.config_object().ShortDebugString());
  };
  auto channel =
      grpc::CreateChannel(kqd_->target(), grpc::InsecureChannelCredentials());
  auto stub = v1::QueueService::NewStub(channel);
  std::vector<std::string> batched;
  size_t messages = 0;
  {
    grpc::ClientContext context;
    auto reader = stub->WatchBatches(&context, request);
    v1::WatchBatch batch;
    bool end = false;
    while (!end && reader->Read(&batch)) {
      ++messages;
      ASSERT_GT(batch.events_size(), 0);
      for (const v1::WatchEvent& e : batch.events()) {
        ASSERT_FALSE(end) << "an event after the end: " << e.ShortDebugString();
        batched.push_back(event_string(e));
        end = IsEndOfWatch(e);
      }
    }
    context.TryCancel();
    reader->Finish().IgnoreError();
  }
  std::vector<std::string> single;
  {
    grpc::ClientContext context;
    auto reader = stub->Watch(&context, request);
    v1::WatchEvent e;
    while (reader->Read(&e)) {
      single.push_back(event_string(e));
      if (IsEndOfWatch(e)) break;
    }
    context.TryCancel();
    reader->Finish().IgnoreError();
  }
  std::vector<std::string> delivered;
  ASSERT_TRUE(client_
                  ->Watch(request,
                          [&](const v1::WatchEvent& e) {
                            delivered.push_back(event_string(e));
                            return !IsEndOfWatch(e);
                          })
                  .ok());
  EXPECT_GE(single.size(), static_cast<size_t>(kCount + 3));
  EXPECT_EQ(batched, single);
  EXPECT_EQ(delivered, single);
  EXPECT_LT(messages, batched.size());
}

// A manager that reads its copies from its watch asks the worker to leave
// them out of the answers: the results then carry the copy's revision
// only, the one the watch shows it at.
TEST_F(ClientTest, FederationAnswersLeaveTheCopyOutWhenAsked) {
  ASSERT_NO_FATAL_FAILURE(StartKqd());
  ASSERT_TRUE(client_->Apply(QueueConfig("3")).ok());
  auto key = [](const std::string& name) {
    v1::RemoteKey key;
    key.set_namespace_(kNamespace);
    key.set_name(name);
    key.set_origin("manager-1");
    key.set_origin_uid(absl::StrCat("uid-", name));
    key.set_epoch(1);
    return key;
  };
  auto upsert = [&](const std::string& name, bool omit) {
    v1::UpsertRemoteRequest request;
    request.set_omit_workloads(omit);
    v1::UpsertRemoteItem* item = request.add_items();
    *item->mutable_key() = key(name);
    *item->mutable_workload() = CpuWorkload(name, "1");
    return client_->UpsertRemote(request);
  };
  auto full = upsert("full", false);
  ASSERT_TRUE(full.ok()) << full.status();
  ASSERT_EQ(full->results_size(), 1);
  EXPECT_EQ(full->results(0).code(), 0) << full->results(0).message();
  ASSERT_TRUE(full->results(0).has_workload());
  EXPECT_EQ(full->results(0).workload_revision(),
            full->results(0).workload().metadata().revision());

  auto brief = upsert("brief", true);
  ASSERT_TRUE(brief.ok()) << brief.status();
  ASSERT_EQ(brief->results_size(), 1);
  EXPECT_EQ(brief->results(0).code(), 0) << brief->results(0).message();
  EXPECT_FALSE(brief->results(0).has_workload());
  EXPECT_GT(brief->results(0).workload_revision(), full->revision());
  EXPECT_LE(brief->results(0).workload_revision(), brief->revision());
  // A repeat changes nothing and answers the same revision.
  auto again = upsert("brief", true);
  ASSERT_TRUE(again.ok()) << again.status();
  const v1::Workload stored = Get("brief");
  EXPECT_EQ(again->results(0).workload_revision(),
            stored.metadata().revision());

  ASSERT_TRUE(
      Eventually([&] { return Get("brief").status().has_admission(); }));
  const int64_t admitted_at = Get("brief").metadata().revision();
  v1::RemoteRequest bind;
  bind.set_omit_workloads(true);
  *bind.add_items()->mutable_key() = key("brief");
  auto bound = client_->CallRemote(client::Client::RemoteVerb::kBind, bind);
  ASSERT_TRUE(bound.ok()) << bound.status();
  ASSERT_EQ(bound->results_size(), 1);
  EXPECT_EQ(bound->results(0).code(), 0) << bound->results(0).message();
  EXPECT_FALSE(bound->results(0).has_workload());
  EXPECT_EQ(bound->results(0).workload_revision(),
            Get("brief").metadata().revision());
  EXPECT_GT(bound->results(0).workload_revision(), admitted_at);
}

TEST_F(ClientTest, WatchResumableAcrossRestarts) {
  ASSERT_NO_FATAL_FAILURE(StartKqd());
  ASSERT_TRUE(client_->Apply(QueueConfig("3")).ok());
  QuotaWatcher watcher(client_.get(), 3000);
  watcher.Start();
  auto caught_up = [&] {
    v1::ListWorkloadsRequest list;
    list.set_include_finished(true);
    auto listed = client_->ListWorkloads(list);
    return listed.ok() && watcher.last_revision() >= listed->revision();
  };
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(
        client_->SubmitWorkload(CpuWorkload(absl::StrCat("w", i), "1")).ok());
  }
  ASSERT_TRUE(Eventually(caught_up));

  ASSERT_NO_FATAL_FAILURE(Restart(/*kill=*/true));
  ASSERT_TRUE(client_->FinishWorkload(kNamespace, "w0", true, "").ok());
  ASSERT_TRUE(client_->SubmitWorkload(CpuWorkload("w5", "1")).ok());
  ASSERT_TRUE(Eventually(caught_up));

  // Changes made while nobody watches are delivered after the restart.
  ASSERT_NO_FATAL_FAILURE(Restart(/*kill=*/false));
  ASSERT_TRUE(client_->CancelWorkload(kNamespace, "w1").ok());
  ASSERT_TRUE(client_->SubmitWorkload(CpuWorkload("w6", "1")).ok());
  ASSERT_NO_FATAL_FAILURE(Restart(/*kill=*/true));
  ASSERT_TRUE(client_->FinishWorkload(kNamespace, "w2", false, "oom").ok());
  ASSERT_TRUE(client_->Apply(EndOfWatch()).ok());
  watcher.Join();
  ASSERT_TRUE(watcher.status().ok()) << watcher.status();
  EXPECT_GE(watcher.progress().reconnects, 3);
  EXPECT_THAT(watcher.violations(), ::testing::IsEmpty());

  // The reference: one uninterrupted watch of the whole log.
  std::vector<v1::WatchEvent> reference;
  v1::WatchRequest from_start;
  from_start.set_from_revision(0);
  ASSERT_TRUE(client_
                  ->Watch(from_start,
                          [&](const v1::WatchEvent& event) {
                            reference.push_back(event);
                            return !IsEndOfWatch(event);
                          })
                  .ok());
  const std::vector<v1::WatchEvent> streamed = watcher.events();
  ASSERT_EQ(streamed.size(), reference.size());
  for (size_t i = 0; i < streamed.size(); ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(streamed[i], reference[i]))
        << "event " << i << ":\n"
        << streamed[i].DebugString() << "vs\n"
        << reference[i].DebugString();
  }

  v1::ListWorkloadsRequest list;
  list.set_include_finished(true);
  auto listed = client_->ListWorkloads(list);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->workloads_size(), 7);
  for (const v1::Workload& wl : listed->workloads()) {
    std::optional<v1::Workload> last = watcher.workload(wl.metadata().name());
    ASSERT_TRUE(last.has_value()) << wl.metadata().name();
    EXPECT_TRUE(MessageDifferencer::Equals(*last, wl)) << wl.metadata().name();
  }
}

// Watch and WatchResumable waiting for kqd's next event end with CANCELLED
// as soon as another thread asks, without waiting for that event.
TEST_F(ClientTest, CancelEndsWatchesWaitingForTheNextEvent) {
  ASSERT_NO_FATAL_FAILURE(StartKqd());
  ASSERT_TRUE(client_->Apply(QueueConfig("3")).ok());
  v1::WatchRequest request;
  request.set_from_revision(0);
  client::WatchProgress progress;
  CancellableWatch plain(
      [&](const CancellableWatch::OnEvent& on_event, std::stop_token cancel) {
        return client_->Watch(request, on_event, cancel);
      });
  CancellableWatch resumable(
      [&](const CancellableWatch::OnEvent& on_event, std::stop_token cancel) {
        return client_->WatchResumable(request, on_event, &progress, cancel);
      });
  ASSERT_TRUE(plain.WaitForFirstEvent());
  ASSERT_TRUE(resumable.WaitForFirstEvent());
  // Both have delivered the whole log and wait for the next event.
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_LT(plain.Cancel(), absl::Seconds(2));
  EXPECT_EQ(plain.status().code(), absl::StatusCode::kCancelled)
      << plain.status();
  EXPECT_LT(resumable.Cancel(), absl::Seconds(2));
  EXPECT_EQ(resumable.status().code(), absl::StatusCode::kCancelled)
      << resumable.status();
  EXPECT_EQ(progress.reconnects, 0);
}

// kqd killed: WatchResumable backs off before reconnecting (10 s here), and
// a cancellation ends that wait.
TEST_F(ClientTest, CancelEndsWatchResumableBetweenReconnections) {
  ASSERT_NO_FATAL_FAILURE(StartKqd());
  ASSERT_TRUE(client_->Apply(QueueConfig("3")).ok());
  std::unique_ptr<client::Client> slow =
      client::NewGrpcClient({.target = kqd_->target(),
                             .retry_initial_backoff = absl::Seconds(10),
                             .retry_max_backoff = absl::Seconds(10),
                             .retry_budget = absl::Seconds(120)});
  v1::WatchRequest request;
  request.set_from_revision(0);
  client::WatchProgress progress;
  CancellableWatch watch(
      [&](const CancellableWatch::OnEvent& on_event, std::stop_token cancel) {
        return slow->WatchResumable(request, on_event, &progress, cancel);
      });
  ASSERT_TRUE(watch.WaitForFirstEvent());
  kqd_->Kill();
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_LT(watch.Cancel(), absl::Seconds(2));
  EXPECT_EQ(watch.status().code(), absl::StatusCode::kCancelled)
      << watch.status();
  EXPECT_EQ(progress.reconnects, 0);
}

// Admit's outcomes: PENDING with the reason and position, FINISHED when
// cancelled while waiting, DEACTIVATED, NOT_FOUND; and operator Preempt.
TEST_F(ClientTest, AdmitOutcomes) {
  ASSERT_NO_FATAL_FAILURE(StartKqd());
  ASSERT_TRUE(client_->Apply(QueueConfig("4")).ok());
  auto hold = client_->SubmitWorkload(CpuWorkload("hold", "3"));
  ASSERT_TRUE(hold.ok());
  ASSERT_TRUE(HoldsQuota(hold->workload()));

  v1::AdmitRequest submit = AdmitByName("", absl::Seconds(1));
  *submit.mutable_workload() = CpuWorkload("p1", "3");
  auto p1 = client_->Admit(submit);
  ASSERT_TRUE(p1.ok()) << p1.status();
  EXPECT_EQ(p1->outcome(), v1::AdmitResponse::PENDING);
  EXPECT_EQ(p1->reason(), "WaitingForQuota");
  EXPECT_THAT(p1->message(), HasSubstr("insufficient unused quota for cpu"));
  ASSERT_TRUE(p1->has_position());
  EXPECT_EQ(p1->position(), 0);
  *submit.mutable_workload() = CpuWorkload("p2", "3");
  auto p2 = client_->Admit(submit);
  ASSERT_TRUE(p2.ok()) << p2.status();
  EXPECT_EQ(p2->outcome(), v1::AdmitResponse::PENDING);
  ASSERT_TRUE(p2->has_position());
  EXPECT_EQ(p2->position(), 1);
  // Submitting an existing name again waits for it.
  auto p2_again = client_->Admit(submit);
  ASSERT_TRUE(p2_again.ok()) << p2_again.status();
  EXPECT_EQ(p2_again->outcome(), v1::AdmitResponse::PENDING);

  auto explained = client_->Explain(kNamespace, "p2");
  ASSERT_TRUE(explained.ok()) << explained.status();
  EXPECT_EQ(explained->state(), "Pending");
  EXPECT_EQ(explained->position_in_cluster_queue(), 1);
  v1::SimulateRequest simulate;
  simulate.set_namespace_(kNamespace);
  simulate.set_name("p2");
  auto simulated = client_->Simulate(simulate);
  ASSERT_TRUE(simulated.ok()) << simulated.status();
  EXPECT_FALSE(simulated->admissible());

  // Cancelled while a caller waits.
  absl::StatusOr<v1::AdmitResponse> cancelled_wait;
  std::thread waiter([&] {
    cancelled_wait = client_->Admit(AdmitByName("p1", absl::Seconds(20)));
  });
  ASSERT_TRUE(client_->CancelWorkload(kNamespace, "p1").ok());
  waiter.join();
  ASSERT_TRUE(cancelled_wait.ok()) << cancelled_wait.status();
  EXPECT_EQ(cancelled_wait->outcome(), v1::AdmitResponse::FINISHED);
  EXPECT_EQ(cancelled_wait->reason(), "Cancelled");

  // Deactivated while a caller waits.
  absl::StatusOr<v1::AdmitResponse> deactivated_wait;
  waiter = std::thread([&] {
    deactivated_wait =
        client_->WaitAdmitted(AdmitByName("p2", absl::Seconds(0)),
                              absl::Seconds(20), nullptr, absl::Seconds(5));
  });
  auto inactive = client_->SetWorkloadActive(kNamespace, "p2", false);
  ASSERT_TRUE(inactive.ok()) << inactive.status();
  EXPECT_FALSE(inactive->spec().active());
  waiter.join();
  ASSERT_TRUE(deactivated_wait.ok()) << deactivated_wait.status();
  EXPECT_EQ(deactivated_wait->outcome(), v1::AdmitResponse::DEACTIVATED);

  // Resumed, it waits again; admitted once the quota frees up.
  ASSERT_TRUE(client_->SetWorkloadActive(kNamespace, "p2", true).ok());
  auto resumed = client_->Admit(AdmitByName("p2", absl::Milliseconds(500)));
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->outcome(), v1::AdmitResponse::PENDING);
  ASSERT_TRUE(client_->FinishWorkload(kNamespace, "hold", true, "").ok());
  auto admitted = client_->Admit(AdmitByName("p2", absl::Seconds(20)));
  ASSERT_TRUE(admitted.ok()) << admitted.status();
  ASSERT_EQ(admitted->outcome(), v1::AdmitResponse::ADMITTED)
      << admitted->DebugString();

  // Operator preemption without a runner: released and requeued at once,
  // then admitted again; with deactivate, it stays out.
  v1::PreemptRequest preempt;
  preempt.set_namespace_(kNamespace);
  preempt.set_name("p2");
  preempt.set_message("maintenance");
  preempt.set_actor("alice");
  auto preempted = client_->Preempt(preempt);
  ASSERT_TRUE(preempted.ok()) << preempted.status();
  // Answered after the batch's scheduling, which already admitted it again
  // (Kueue's SetQuotaReservation turns Evicted False); Requeued keeps why.
  const v1::Condition* requeued = FindCondition(*preempted, "Requeued");
  ASSERT_NE(requeued, nullptr);
  EXPECT_EQ(requeued->reason(), "Preempted");
  EXPECT_EQ(requeued->message(), "Preempted by alice: maintenance");
  admitted = client_->Admit(AdmitByName("p2", absl::Seconds(20)));
  ASSERT_TRUE(admitted.ok()) << admitted.status();
  EXPECT_EQ(admitted->outcome(), v1::AdmitResponse::ADMITTED);
  preempt.set_deactivate(true);
  ASSERT_TRUE(client_->Preempt(preempt).ok());
  auto out = client_->Admit(AdmitByName("p2", absl::Seconds(20)));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->outcome(), v1::AdmitResponse::DEACTIVATED);
  EXPECT_EQ(out->reason(), "Deactivated");

  EXPECT_EQ(
      client_->Admit(AdmitByName("nope", absl::Seconds(1))).status().code(),
      absl::StatusCode::kNotFound);
  EXPECT_EQ(client_
                ->WaitAdmitted(AdmitByName("nope", absl::Seconds(0)),
                               absl::Seconds(5), nullptr, absl::Seconds(1))
                .status()
                .code(),
            absl::StatusCode::kNotFound);
}

int ThreadsOf(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

// Thousands of callers blocked in Admit hold no kqd thread each; all are
// answered ADMITTED when the ClusterQueue stops holding.
TEST_F(ClientTest, ThousandsOfAdmitWaitersHoldNoThreads) {
  constexpr int kWaiters = 2000;
  ASSERT_NO_FATAL_FAILURE(StartKqd());
  ASSERT_TRUE(client_->Apply(QueueConfig("1000")).ok());
  v1::SetStopPolicyRequest hold;
  hold.set_kind("ClusterQueue");
  hold.set_name("cq");
  hold.set_stop_policy("Hold");
  ASSERT_TRUE(client_->SetStopPolicy(hold).ok());
  v1::ApplyRequest workloads;
  for (int i = 0; i < kWaiters; ++i) {
    *workloads.add_workloads() = CpuWorkload(absl::StrCat("w", i), "100m");
  }
  ASSERT_TRUE(client_->Apply(workloads).ok());
  const int baseline = ThreadsOf(kqd_->pid());
  ASSERT_GT(baseline, 0);

  // The raw async stub: a few client threads, thousands of open calls.
  auto channel =
      grpc::CreateChannel(kqd_->target(), grpc::InsecureChannelCredentials());
  auto stub = v1::QueueService::NewStub(channel);
  grpc::CompletionQueue cq;
  struct Call {
    grpc::ClientContext context;
    v1::AdmitResponse response;
    grpc::Status status;
    std::unique_ptr<grpc::ClientAsyncResponseReader<v1::AdmitResponse>> rpc;
  };
  std::vector<std::unique_ptr<Call>> calls(kWaiters);
  for (int i = 0; i < kWaiters; ++i) {
    calls[i] = std::make_unique<Call>();
    calls[i]->context.set_deadline(
        absl::ToChronoTime(absl::Now() + absl::Seconds(180)));
    calls[i]->rpc = stub->AsyncAdmit(
        &calls[i]->context,
        AdmitByName(absl::StrCat("w", i), absl::Seconds(120)), &cq);
    calls[i]->rpc->Finish(&calls[i]->response, &calls[i]->status,
                          reinterpret_cast<void*>(static_cast<intptr_t>(i)));
  }
  // While they all wait: nobody is answered, and kqd's threads stay few.
  int most_threads = 0;
  for (int i = 0; i < 10; ++i) {
    void* tag;
    bool ok;
    const auto poll = cq.AsyncNext(
        &tag, &ok, absl::ToChronoTime(absl::Now() + absl::Milliseconds(200)));
    ASSERT_EQ(poll, grpc::CompletionQueue::TIMEOUT)
        << "answered while held: "
        << calls[reinterpret_cast<intptr_t>(tag)]->status.error_message();
    most_threads = std::max(most_threads, ThreadsOf(kqd_->pid()));
  }
  RecordProperty("kqd_threads_before", baseline);
  RecordProperty("kqd_threads_with_waiters", most_threads);
  EXPECT_LT(most_threads, baseline + 50);
  EXPECT_LT(most_threads, kWaiters / 10);

  hold.set_stop_policy("None");
  ASSERT_TRUE(client_->SetStopPolicy(hold).ok());
  int answered = 0;
  int admitted = 0;
  while (answered < kWaiters) {
    void* tag;
    bool ok;
    const auto next = cq.AsyncNext(
        &tag, &ok, absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
    ASSERT_EQ(next, grpc::CompletionQueue::GOT_EVENT)
        << answered << " of " << kWaiters << " answered";
    ASSERT_TRUE(ok);
    const Call& call = *calls[reinterpret_cast<intptr_t>(tag)];
    ++answered;
    EXPECT_TRUE(call.status.ok()) << call.status.error_message();
    if (call.response.outcome() == v1::AdmitResponse::ADMITTED) ++admitted;
  }
  EXPECT_EQ(admitted, kWaiters);
  EXPECT_LT(ThreadsOf(kqd_->pid()), baseline + 50);
  cq.Shutdown();
  void* tag;
  bool ok;
  while (cq.Next(&tag, &ok)) {
  }
}

// Reads retry through a kqd restart within the retry budget; calls that
// change state fail fast instead; WaitAdmitted's submission is retried
// because kqd waits for an existing name rather than submitting it twice.
TEST_F(ClientTest, RetriesWhileKqdIsDown) {
  ASSERT_NO_FATAL_FAILURE(StartKqd());
  ASSERT_TRUE(client_->Apply(QueueConfig("4")).ok());
  ASSERT_TRUE(client_->SubmitWorkload(CpuWorkload("a", "1")).ok());
  const int port = kqd_->port();
  const std::vector<std::string> same_port = {
      absl::StrCat("--listen=127.0.0.1:", port)};

  kqd_->Kill();
  std::thread restart([&] {
    absl::SleepFor(absl::Seconds(1));
    EXPECT_TRUE(kqd_->Start(same_port).ok());
  });
  auto got = client_->GetWorkload(kNamespace, "a");
  restart.join();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(HoldsQuota(got->workload()));

  kqd_->Kill();
  const absl::Time before = absl::Now();
  EXPECT_EQ(client_->SubmitWorkload(CpuWorkload("b", "1")).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(client_->CancelWorkload(kNamespace, "a").status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_LT(absl::Now() - before, absl::Seconds(10));

  restart = std::thread([&] {
    absl::SleepFor(absl::Seconds(1));
    EXPECT_TRUE(kqd_->Start(same_port).ok());
  });
  v1::AdmitRequest submit;
  *submit.mutable_workload() = CpuWorkload("c", "1");
  auto c = client_->WaitAdmitted(submit, absl::Seconds(30), nullptr,
                                 absl::Seconds(5));
  restart.join();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outcome(), v1::AdmitResponse::ADMITTED);
  v1::ListWorkloadsRequest list;
  list.set_namespace_(kNamespace);
  auto listed = client_->ListWorkloads(list);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->workloads_size(), 2);  // a and c, once

  // A budget that runs out reports UNAVAILABLE.
  kqd_->Kill();
  auto impatient =
      client::NewGrpcClient({.target = absl::StrCat("127.0.0.1:", port),
                             .retry_initial_backoff = absl::Milliseconds(50),
                             .retry_max_backoff = absl::Milliseconds(100),
                             .retry_budget = absl::Milliseconds(500)});
  EXPECT_EQ(impatient->GetWorkload(kNamespace, "a").status().code(),
            absl::StatusCode::kUnavailable);
}

TEST_F(ClientTest, ConnectTellsARunningKqdFromAClosedPort) {
  ASSERT_NO_FATAL_FAILURE(StartKqd());
  EXPECT_TRUE(client_->Connect(absl::Seconds(10)).ok());
  const int port = kqd_->port();
  kqd_->Kill();
  // A fresh channel, as a command-line tool has: it never connected, and
  // its first attempt is refused.
  std::unique_ptr<client::Client> fresh =
      client::NewGrpcClient({.target = absl::StrCat("127.0.0.1:", port)});
  const absl::Time start = absl::Now();
  const absl::Status status = fresh->Connect(absl::Seconds(30));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(status.message(), HasSubstr("Connection refused"));
}

// FinishWorkloadAsync answers as FinishWorkload does, on a gRPC thread:
// the finished workload, or kqd's code for one that cannot finish.
TEST_F(ClientTest, FinishWorkloadAsyncAnswersAsFinishWorkload) {
  ASSERT_NO_FATAL_FAILURE(StartKqd());
  ASSERT_TRUE(client_->Apply(QueueConfig("2")).ok());
  const std::string pod =
      R"({"spec":{"containers":[{"image":"i","name":"c"}]}})";
  v1::Workload fits = CpuWorkload("fits", "1");
  fits.mutable_spec()->mutable_pod_sets(0)->set_template_json(pod);
  ASSERT_TRUE(client_->SubmitWorkload(fits).ok());
  ASSERT_TRUE(client_->SubmitWorkload(CpuWorkload("too-big", "5")).ok());
  ASSERT_TRUE(Eventually([&] { return Get("fits").status().has_admission(); }));
  struct Answer {
    absl::Notification done;
    absl::StatusOr<v1::Workload> result;
  };
  auto finish = [&](const std::string& name, bool succeeded) {
    auto answer = std::make_shared<Answer>();
    v1::FinishWorkloadRequest request;
    request.set_namespace_(kNamespace);
    request.set_name(name);
    request.set_succeeded(succeeded);
    request.set_message("exit 3");
    // The answer's templates as text, as asked.
    request.set_template_form(v1::TEMPLATE_FORM_JSON);
    client_->FinishWorkloadAsync(std::move(request),
                                 [answer](absl::StatusOr<v1::Workload> r) {
                                   answer->result = std::move(r);
                                   answer->done.Notify();
                                 });
    EXPECT_TRUE(answer->done.WaitForNotificationWithTimeout(absl::Seconds(20)));
    return answer->result;
  };
  absl::StatusOr<v1::Workload> finished = finish("fits", false);
  ASSERT_TRUE(finished.ok()) << finished.status();
  EXPECT_EQ(finished->metadata().name(), "fits");
  EXPECT_EQ(finished->spec().pod_sets(0).template_json(), pod);
  EXPECT_FALSE(finished->spec().pod_sets(0).has_template_());
  bool failed = false;
  for (const v1::Condition& c : finished->status().conditions()) {
    if (c.type() == "Finished") {
      failed = c.status() == "True" && c.reason() == "Failed" &&
               c.message() == "exit 3";
    }
  }
  EXPECT_TRUE(failed) << finished->ShortDebugString();
  EXPECT_EQ(finish("too-big", true).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(finish("nobody", true).status().code(),
            absl::StatusCode::kNotFound);
}

// Many submissions in flight from one thread: each is answered once, with
// kqd's code, and every acknowledged one survives a kill -9.
TEST_F(ClientTest, SubmitWorkloadAsyncAnswersEachOnceAndDurably) {
  ASSERT_NO_FATAL_FAILURE(StartKqd());
  ASSERT_TRUE(client_->Apply(QueueConfig("4")).ok());
  constexpr int kCount = 300;
  // Shared with the callbacks, which may outlive a failed wait below.
  struct Answers {
    absl::Mutex mu;
    std::map<std::string, absl::StatusCode> codes;
    int answered = 0;
  };
  auto shared = std::make_shared<Answers>();
  absl::Mutex& mu = shared->mu;
  std::map<std::string, absl::StatusCode>& answers = shared->codes;
  int& answered = shared->answered;
  // `label` names the call; the workload's own name may repeat.
  auto submit = [&](const std::string& label, v1::Workload workload) {
    const std::string name = workload.metadata().name();
    v1::SubmitWorkloadRequest request;
    *request.mutable_workload() = std::move(workload);
    client_->SubmitWorkloadAsync(
        std::move(request),
        [shared, label, name](absl::StatusOr<v1::SubmitWorkloadResponse> r) {
          absl::MutexLock lock(&shared->mu);
          EXPECT_TRUE(shared->codes.emplace(label, r.status().code()).second)
              << label << " answered twice";
          if (r.ok()) {
            EXPECT_EQ(r->workload().metadata().name(), name);
          }
          ++shared->answered;
        });
  };
  for (int i = 0; i < kCount; ++i) {
    submit(absl::StrCat("w", i), CpuWorkload(absl::StrCat("w", i), "1"));
  }
  // Refusals keep their codes: a name taken, a bad request.
  submit("w0-again", CpuWorkload("w0", "1"));
  v1::Workload no_queue = CpuWorkload("no-queue", "1");
  no_queue.mutable_spec()->clear_queue_name();
  submit("no-queue", no_queue);
  {
    absl::MutexLock lock(&mu);
    ASSERT_TRUE(mu.AwaitWithTimeout(
        absl::Condition(
            +[](int* n) { return *n == kCount + 2; }, &answered),
        absl::Seconds(60)));
  }
  for (int i = 1; i < kCount; ++i) {
    EXPECT_EQ(answers[absl::StrCat("w", i)], absl::StatusCode::kOk) << i;
  }
  // The calls may reach the engine in any order: whichever of the two w0
  // came second is refused.
  EXPECT_THAT(
      (std::vector<absl::StatusCode>{answers["w0"], answers["w0-again"]}),
      ::testing::UnorderedElementsAre(absl::StatusCode::kOk,
                                      absl::StatusCode::kAlreadyExists));
  EXPECT_EQ(answers["no-queue"], absl::StatusCode::kInvalidArgument);

  ASSERT_NO_FATAL_FAILURE(Restart(/*kill=*/true));
  v1::ListWorkloadsRequest list;
  list.set_namespace_(kNamespace);
  auto listed = client_->ListWorkloads(list);
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(listed->workloads_size(), kCount);
}

// A caller waiting in WaitAdmitted rides out a graceful kqd restart and a
// kill -9: its pending Admit call fails and is asked again.
TEST_F(ClientTest, WaitAdmittedSurvivesRestarts) {
  ASSERT_NO_FATAL_FAILURE(StartKqd());
  ASSERT_TRUE(client_->Apply(QueueConfig("4")).ok());
  ASSERT_TRUE(client_->SubmitWorkload(CpuWorkload("hold", "3")).ok());
  ASSERT_TRUE(client_->SubmitWorkload(CpuWorkload("p", "3")).ok());
  std::atomic<int> pending_answers{0};
  absl::StatusOr<v1::AdmitResponse> waited;
  std::thread waiter([&] {
    waited = client_->WaitAdmitted(
        AdmitByName("p", absl::Seconds(0)), absl::Seconds(90),
        [&](const v1::AdmitResponse&) { ++pending_answers; },
        absl::Seconds(60));
  });
  absl::SleepFor(absl::Milliseconds(500));
  ASSERT_NO_FATAL_FAILURE(Restart(/*kill=*/false));
  absl::SleepFor(absl::Milliseconds(500));
  ASSERT_NO_FATAL_FAILURE(Restart(/*kill=*/true));
  ASSERT_TRUE(client_->FinishWorkload(kNamespace, "hold", true, "").ok());
  waiter.join();
  ASSERT_TRUE(waited.ok()) << waited.status();
  EXPECT_EQ(waited->outcome(), v1::AdmitResponse::ADMITTED);
  EXPECT_EQ(pending_answers, 0);
}

// A fake QueueService whose Watch streams follow a script, to break a
// stream between two events of one revision.
class ScriptedWatch final : public v1::QueueService::Service {
 public:
  struct Connection {
    std::vector<v1::WatchEvent> events;
    grpc::Status end;
  };
  explicit ScriptedWatch(std::vector<Connection> script)
      : script_(std::move(script)) {}

  grpc::Status Watch(grpc::ServerContext*, const v1::WatchRequest* request,
                     grpc::ServerWriter<v1::WatchEvent>* writer) override {
    size_t n;
    {
      std::lock_guard<std::mutex> lock(mu_);
      n = from_revisions_.size();
      from_revisions_.push_back(
          request->has_from_revision() ? request->from_revision() : -1);
    }
    if (n >= script_.size()) {
      return grpc::Status(grpc::StatusCode::INTERNAL, "script over");
    }
    for (const v1::WatchEvent& event : script_[n].events) {
      // The server replays everything after from_revision, as kqd does.
      if (event.revision() <= request->from_revision()) continue;
      writer->Write(event);
    }
    return script_[n].end;
  }

  std::vector<int64_t> from_revisions() {
    std::lock_guard<std::mutex> lock(mu_);
    return from_revisions_;
  }

 private:
  const std::vector<Connection> script_;
  std::mutex mu_;
  std::vector<int64_t> from_revisions_;
};

v1::WatchEvent WorkloadEvent(int64_t revision, const std::string& name) {
  v1::WatchEvent event;
  event.set_type(v1::WatchEvent::MODIFIED);
  event.set_revision(revision);
  event.mutable_workload()->mutable_metadata()->set_namespace_(kNamespace);
  event.mutable_workload()->mutable_metadata()->set_name(name);
  return event;
}

TEST(WatchResumableTest, StreamCutInsideRevisionResumesWithoutRepeats) {
  const v1::WatchEvent a = WorkloadEvent(1, "a"), b = WorkloadEvent(1, "b"),
                       c = WorkloadEvent(2, "c"), d = WorkloadEvent(2, "d"),
                       e = WorkloadEvent(3, "e"), f = WorkloadEvent(4, "f");
  const grpc::Status broken(grpc::StatusCode::UNAVAILABLE, "connection lost");
  ScriptedWatch service({
      // Cut after the first event of revision 2.
      {{a, b, c}, broken},
      // The whole log again: a, b are older, c was delivered.
      {{a, b, c, d, e}, grpc::Status::OK},
      {{a, b, c, d, e, f}, broken},
      {{}, grpc::Status(grpc::StatusCode::OUT_OF_RANGE, "compacted")},
  });
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);

  auto client =
      client::NewGrpcClient(FastRetries(absl::StrCat("127.0.0.1:", port)));
  std::vector<std::string> delivered;
  client::WatchProgress progress;
  v1::WatchRequest request;
  request.set_from_revision(0);
  absl::Status status = client->WatchResumable(
      request,
      [&](const v1::WatchEvent& event) {
        delivered.push_back(absl::StrCat(event.revision(), "/",
                                         event.workload().metadata().name()));
        return true;
      },
      &progress);
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(delivered,
              ::testing::ElementsAre("1/a", "1/b", "2/c", "2/d", "3/e", "4/f"));
  // Resumed one revision back while a revision may be incomplete.
  EXPECT_THAT(service.from_revisions(), ::testing::ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(progress.reconnects, 3);
  EXPECT_EQ(progress.revision, 3);
  server->Shutdown();
}

TEST(WatchResumableTest, CallerStopsTheWatch) {
  ScriptedWatch service(
      {{{WorkloadEvent(5, "a"), WorkloadEvent(6, "b")}, grpc::Status::OK}});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto client =
      client::NewGrpcClient(FastRetries(absl::StrCat("127.0.0.1:", port)));
  v1::WatchRequest request;
  request.set_from_revision(4);
  int seen = 0;
  EXPECT_TRUE(client
                  ->WatchResumable(request,
                                   [&](const v1::WatchEvent&) {
                                     ++seen;
                                     return false;
                                   })
                  .ok());
  EXPECT_EQ(seen, 1);
  server->Shutdown();
}

// Streams end UNAVAILABLE at once while the server stays up (the channel
// stays READY): the cancellation ends the backoff before the reconnection.
TEST(WatchCancelTest, CancelEndsTheBackoffOfAConnectedChannel) {
  ScriptedWatch service(
      {{{}, grpc::Status(grpc::StatusCode::UNAVAILABLE, "going away")}});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto client =
      client::NewGrpcClient({.target = absl::StrCat("127.0.0.1:", port),
                             .retry_initial_backoff = absl::Seconds(10),
                             .retry_max_backoff = absl::Seconds(10),
                             .retry_budget = absl::Seconds(120)});
  v1::WatchRequest request;
  request.set_from_revision(0);
  {
    CancellableWatch watch(
        [&](const CancellableWatch::OnEvent& on_event, std::stop_token cancel) {
          return client->WatchResumable(request, on_event, nullptr, cancel);
        });
    ASSERT_TRUE(
        Eventually([&] { return service.from_revisions().size() == 1; }));
    absl::SleepFor(absl::Milliseconds(300));
    EXPECT_LT(watch.Cancel(), absl::Seconds(2));
    EXPECT_EQ(watch.status().code(), absl::StatusCode::kCancelled)
        << watch.status();
  }
  EXPECT_THAT(service.from_revisions(), ::testing::ElementsAre(0));
  server->Shutdown();
}

// An event already received when the cancellation is seen is not delivered:
// here the handler itself cancels, with the next event on its way.
TEST(WatchCancelTest, NoEventIsDeliveredOnceCancelled) {
  // One connection for Watch, one for WatchResumable.
  const ScriptedWatch::Connection three = {
      {WorkloadEvent(5, "a"), WorkloadEvent(6, "b"), WorkloadEvent(7, "c")},
      grpc::Status::OK};
  ScriptedWatch service({three, three});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto client =
      client::NewGrpcClient(FastRetries(absl::StrCat("127.0.0.1:", port)));
  v1::WatchRequest request;
  request.set_from_revision(4);
  {
    std::stop_source cancel;
    int seen = 0;
    absl::Status status = client->Watch(
        request,
        [&](const v1::WatchEvent&) {
          ++seen;
          cancel.request_stop();
          return true;
        },
        cancel.get_token());
    EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
    EXPECT_EQ(seen, 1);
  }
  {
    std::stop_source cancel;
    int seen = 0;
    absl::Status status = client->WatchResumable(
        request,
        [&](const v1::WatchEvent&) {
          ++seen;
          cancel.request_stop();
          return true;
        },
        nullptr, cancel.get_token());
    EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
    EXPECT_EQ(seen, 1);
  }
  server->Shutdown();
}

// Cancelled before the call: no stream is opened, not even the read that
// pins "from now on" for WatchResumable.
TEST(WatchCancelTest, CancelledBeforeTheCallReturnsAtOnce) {
  ScriptedWatch service({{{WorkloadEvent(1, "a")}, grpc::Status::OK}});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto client =
      client::NewGrpcClient(FastRetries(absl::StrCat("127.0.0.1:", port)));
  std::stop_source cancel;
  cancel.request_stop();
  int seen = 0;
  auto count = [&](const v1::WatchEvent&) {
    ++seen;
    return true;
  };
  v1::WatchRequest from_zero;
  from_zero.set_from_revision(0);
  EXPECT_EQ(client->Watch(from_zero, count, cancel.get_token()).code(),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(
      client->WatchResumable(from_zero, count, nullptr, cancel.get_token())
          .code(),
      absl::StatusCode::kCancelled);
  EXPECT_EQ(client
                ->WatchResumable(v1::WatchRequest(), count, nullptr,
                                 cancel.get_token())
                .code(),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(seen, 0);
  EXPECT_THAT(service.from_revisions(), ::testing::IsEmpty());
  server->Shutdown();
}

// A Client that implements only the plain Watch forms, as test fakes do:
// both deliver `events`, then end UNAVAILABLE.
class PlainWatchClient final : public client::Client {
 public:
  explicit PlainWatchClient(std::vector<v1::WatchEvent> events)
      : events_(std::move(events)) {}

  using Client::GetWorkload;
  using Client::SubmitWorkload;
  using Client::Watch;
  using Client::WatchResumable;
  absl::Status Watch(
      const v1::WatchRequest&,
      const std::function<bool(const v1::WatchEvent&)>& on_event) override {
    return Stream(on_event);
  }
  absl::Status WatchResumable(
      const v1::WatchRequest&,
      const std::function<bool(const v1::WatchEvent&)>& on_event,
      client::WatchProgress*) override {
    return Stream(on_event);
  }

  absl::StatusOr<v1::ApplyResponse> Apply(const v1::ApplyRequest&) override {
    return Unused();
  }
  absl::Status Delete(const std::string&, const std::string&,
                      const std::string&) override {
    return Unused();
  }
  absl::StatusOr<v1::ConfigObject> GetObject(const std::string&,
                                             const std::string&,
                                             const std::string&) override {
    return Unused();
  }
  absl::StatusOr<v1::ListObjectsResponse> ListObjects(
      const std::string&, const std::string&) override {
    return Unused();
  }
  absl::StatusOr<v1::Workload> SetAdmissionCheckState(
      const v1::SetAdmissionCheckStateRequest&) override {
    return Unused();
  }
  absl::StatusOr<v1::Workload> Preempt(const v1::PreemptRequest&) override {
    return Unused();
  }
  absl::StatusOr<v1::Workload> SetWorkloadActive(const std::string&,
                                                 const std::string&,
                                                 bool) override {
    return Unused();
  }
  absl::StatusOr<v1::ConfigObject> SetStopPolicy(
      const v1::SetStopPolicyRequest&) override {
    return Unused();
  }
  absl::StatusOr<v1::SubmitWorkloadResponse> SubmitWorkload(
      const v1::SubmitWorkloadRequest&) override {
    return Unused();
  }
  absl::StatusOr<v1::GetWorkloadResponse> GetWorkload(
      const v1::GetWorkloadRequest&) override {
    return Unused();
  }
  absl::StatusOr<v1::ListWorkloadsResponse> ListWorkloads(
      const v1::ListWorkloadsRequest&) override {
    return Unused();
  }
  absl::StatusOr<v1::Workload> CancelWorkload(const std::string&,
                                              const std::string&) override {
    return Unused();
  }
  absl::StatusOr<v1::Workload> FinishWorkload(const std::string&,
                                              const std::string&, bool,
                                              const std::string&) override {
    return Unused();
  }
  absl::StatusOr<v1::AdmitResponse> Admit(const v1::AdmitRequest&) override {
    return Unused();
  }
  absl::StatusOr<v1::AdmitResponse> WaitAdmitted(
      v1::AdmitRequest, absl::Duration,
      const std::function<void(const v1::AdmitResponse&)>&,
      absl::Duration) override {
    return Unused();
  }
  absl::StatusOr<v1::Workload> SetReclaimablePods(
      const std::string&, const std::string&,
      const std::map<std::string, int32_t>&) override {
    return Unused();
  }
  absl::StatusOr<v1::HeartbeatResponse> Heartbeat(
      const v1::HeartbeatRequest&) override {
    return Unused();
  }
  absl::StatusOr<v1::ExplainResponse> Explain(const std::string&,
                                              const std::string&) override {
    return Unused();
  }
  absl::StatusOr<v1::SimulateResponse> Simulate(
      const v1::SimulateRequest&) override {
    return Unused();
  }

 private:
  static absl::Status Unused() {
    return absl::UnimplementedError("not used by this test");
  }
  absl::Status Stream(
      const std::function<bool(const v1::WatchEvent&)>& on_event) {
    for (const v1::WatchEvent& event : events_) {
      if (!on_event(event)) return absl::OkStatus();
    }
    return absl::UnavailableError("stream over");
  }

  const std::vector<v1::WatchEvent> events_;
};

// Client's own cancellable forms, over a client without them: the
// cancellation ends the stream at the next event.
TEST(WatchCancelTest, DefaultFormsEndAtTheNextEvent) {
  PlainWatchClient client({WorkloadEvent(1, "a"), WorkloadEvent(2, "b"),
                           WorkloadEvent(3, "c"), WorkloadEvent(4, "d")});
  client::Client& base = client;
  const v1::WatchRequest request;
  using Form = std::function<absl::Status(
      const std::function<bool(const v1::WatchEvent&)>&, std::stop_token)>;
  const std::vector<std::pair<std::string, Form>> forms = {
      {"Watch",
       [&](const auto& on_event, std::stop_token cancel) {
         return base.Watch(request, on_event, cancel);
       }},
      {"WatchResumable",
       [&](const auto& on_event, std::stop_token cancel) {
         return base.WatchResumable(request, on_event, nullptr, cancel);
       }},
  };
  for (const auto& [name, form] : forms) {
    SCOPED_TRACE(name);
    std::stop_source cancel;
    int seen = 0;
    absl::Status status = form(
        [&](const v1::WatchEvent&) {
          if (++seen == 2) cancel.request_stop();
          return true;
        },
        cancel.get_token());
    EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
    EXPECT_EQ(seen, 2);

    // Never cancelled: the stream's own end; the caller's stop: OK.
    seen = 0;
    status = form(
        [&](const v1::WatchEvent&) {
          ++seen;
          return true;
        },
        std::stop_token());
    EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
    EXPECT_EQ(seen, 4);
    std::stop_source unused;
    status =
        form([](const v1::WatchEvent&) { return false; }, unused.get_token());
    EXPECT_TRUE(status.ok()) << status;

    std::stop_source before;
    before.request_stop();
    seen = 0;
    status = form(
        [&](const v1::WatchEvent&) {
          ++seen;
          return true;
        },
        before.get_token());
    EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
    EXPECT_EQ(seen, 0);
  }
}

}  // namespace
}  // namespace kq::testing
