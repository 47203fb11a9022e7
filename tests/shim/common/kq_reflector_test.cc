// KqReflector against a real kqd, as the shim's controllers use it: the
// list, then the events of its namespace (and of cluster-scoped kinds), the
// watch riding out kqd restarts, a new list once the watch gives up, and a
// Stop() that does not wait for kqd's next event.

#include "shim/common/kq_reflector.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "manifest/manifest.h"
#include "tests/integration/kqd_process.h"
#include "tests/shim/testing/kq_test_helpers.h"
#include "tests/testing/temp_dir.h"

namespace kq::shim {
namespace {

using ::kq::testing::ConditionTrue;
using ::kq::testing::KqOptions;
using ::kq::testing::WaitFor;
using ::testing::Contains;
using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Room for every workload of the tests, in two namespaces.
constexpr char kConfig[] = R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 100}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: team, name: lq}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: other, name: lq}
spec: {clusterQueue: cq}
)";

v1::Workload CpuWorkload(const std::string& ns, const std::string& name) {
  v1::Workload wl;
  wl.mutable_metadata()->set_namespace_(ns);
  wl.mutable_metadata()->set_name(name);
  wl.mutable_spec()->set_queue_name("lq");
  v1::PodSet* ps = wl.mutable_spec()->add_pod_sets();
  ps->set_name("main");
  ps->set_count(1);
  (*ps->mutable_requests())["cpu"] = "1";
  return wl;
}

v1::ConfigObject AdmissionCheck(const std::string& name) {
  v1::ConfigObject o;
  v1::AdmissionCheck* ac = o.mutable_admission_check();
  ac->mutable_metadata()->set_name(name);
  ac->mutable_spec()->set_controller_name("example.com/manual");
  return o;
}

// What an owner of the reflector keeps: the unfinished Workloads
// ("ns/name") and the config objects (by name) as the syncs and events
// left them, plus what each handler was called with.
class View {
 public:
  KqReflectorHandlers Handlers() {
    return {[this](const KqSnapshot& snapshot) { OnSync(snapshot); },
            [this](const v1::WatchEvent& event) { OnEvent(event); },
            [this](const absl::Status& status) {
              absl::MutexLock lock(&mu_);
              errors_.push_back(status);
            }};
  }

  std::set<std::string> workloads() const {
    absl::MutexLock lock(&mu_);
    return workloads_;
  }
  std::set<std::string> objects() const {
    absl::MutexLock lock(&mu_);
    return objects_;
  }
  std::vector<KqSnapshot> syncs() const {
    absl::MutexLock lock(&mu_);
    return syncs_;
  }
  // "TYPE ns/name" (or "TYPE name" for config objects), in order.
  std::vector<std::string> events() const {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  std::vector<absl::Status> errors() const {
    absl::MutexLock lock(&mu_);
    return errors_;
  }
  // Revisions of the events delivered never went down, and no object's
  // event of one revision came twice.
  bool in_order_once() const {
    absl::MutexLock lock(&mu_);
    return in_order_once_;
  }

 private:
  static std::string KeyOf(const v1::Workload& wl) {
    return absl::StrCat(wl.metadata().namespace_(), "/", wl.metadata().name());
  }

  void OnSync(const KqSnapshot& snapshot) {
    absl::MutexLock lock(&mu_);
    syncs_.push_back(snapshot);
    workloads_.clear();
    for (const v1::Workload& wl : snapshot.workloads) {
      workloads_.insert(KeyOf(wl));
    }
    objects_.clear();
    for (const v1::ConfigObject& o : snapshot.objects) {
      if (o.has_admission_check()) {
        objects_.insert(o.admission_check().metadata().name());
      }
    }
  }

  void OnEvent(const v1::WatchEvent& event) {
    absl::MutexLock lock(&mu_);
    if (event.revision() < last_revision_) in_order_once_ = false;
    last_revision_ = event.revision();
    const bool deleted = event.type() == v1::WatchEvent::DELETED;
    const std::string type = v1::WatchEvent::Type_Name(event.type());
    if (event.has_workload()) {
      const std::string key = KeyOf(event.workload());
      if (!seen_.insert(absl::StrCat(event.revision(), " ", key)).second) {
        in_order_once_ = false;
      }
      events_.push_back(absl::StrCat(type, " ", key));
      if (deleted || ConditionTrue(event.workload(), "Finished")) {
        workloads_.erase(key);
      } else {
        workloads_.insert(key);
      }
    } else if (event.config_object().has_admission_check()) {
      const std::string& name =
          event.config_object().admission_check().metadata().name();
      events_.push_back(absl::StrCat(type, " ", name));
      if (deleted) {
        objects_.erase(name);
      } else {
        objects_.insert(name);
      }
    }
  }

  mutable absl::Mutex mu_;
  std::set<std::string> workloads_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> objects_ ABSL_GUARDED_BY(mu_);
  std::vector<KqSnapshot> syncs_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> events_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Status> errors_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> seen_ ABSL_GUARDED_BY(mu_);
  int64_t last_revision_ ABSL_GUARDED_BY(mu_) = 0;
  bool in_order_once_ ABSL_GUARDED_BY(mu_) = true;
};

// A client whose WatchResumable rides out a kqd restart on a loaded
// machine: the restart must not be mistaken for a watch that gave up.
client::ClientOptions PatientOptions(const std::string& target) {
  client::ClientOptions options = KqOptions(target);
  options.retry_budget = absl::Seconds(60);
  return options;
}

class KqReflectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kqd_ = std::make_unique<::kq::testing::KqdProcess>(kqd_dir_.path());
    ASSERT_TRUE(kqd_->Start().ok());
    kq_ = client::NewGrpcClient(KqOptions(kqd_->target()));
    auto docs = manifest::ParseManifests(kConfig);
    ASSERT_TRUE(docs.ok()) << docs.status();
    v1::ApplyRequest request;
    for (const manifest::Document& doc : *docs) {
      ASSERT_TRUE(doc.status.ok()) << doc.status;
      *request.add_objects() = *doc.config_object;
    }
    ASSERT_TRUE(kq_->Apply(request).ok());
  }

  void TearDown() override { StopReflector(); }

  // Runs a reflector of `ns` on its own thread, over its own client.
  void StartReflector(const std::string& ns, KqReflectorOptions options = {},
                      const client::ClientOptions* client_options = nullptr) {
    reflector_client_ = client::NewGrpcClient(
        client_options != nullptr ? *client_options
                                  : PatientOptions(kqd_->target()));
    reflector_ = std::make_unique<KqReflector>(*reflector_client_, ns,
                                               view_.Handlers(), options);
    thread_ = std::thread([this] { reflector_->Run(); });
  }

  // Stops the reflector and returns how long Run() took to return.
  absl::Duration StopReflector() {
    if (!thread_.joinable()) return absl::ZeroDuration();
    const absl::Time start = absl::Now();
    reflector_->Stop();
    thread_.join();
    return absl::Now() - start;
  }

  void Submit(const std::string& ns, const std::string& name) {
    auto submitted = kq_->SubmitWorkload(CpuWorkload(ns, name));
    ASSERT_TRUE(submitted.ok()) << submitted.status();
  }

  int64_t Revision() {
    auto listed = kq_->ListWorkloads(v1::ListWorkloadsRequest());
    EXPECT_TRUE(listed.ok()) << listed.status();
    return listed.ok() ? listed->revision() : -1;
  }

  // Restarts kqd on the same port; kq_ reconnects by itself.
  void RestartKqd(bool kill) {
    const int port = kqd_->port();
    if (kill) {
      kqd_->Kill();
    } else {
      EXPECT_EQ(kqd_->Terminate(), 0);
    }
    ASSERT_TRUE(kqd_->Start({absl::StrCat("--listen=127.0.0.1:", port)}).ok());
    ASSERT_EQ(kqd_->port(), port);
  }

  ::kq::testing::ScopedTempDir kqd_dir_;
  std::unique_ptr<::kq::testing::KqdProcess> kqd_;
  std::unique_ptr<client::Client> kq_;
  View view_;
  std::unique_ptr<client::Client> reflector_client_;
  std::unique_ptr<KqReflector> reflector_;
  std::thread thread_;
};

TEST_F(KqReflectorTest, ListsThenDeliversTheEventsOfItsNamespace) {
  ASSERT_NO_FATAL_FAILURE(Submit("team", "a"));
  ASSERT_NO_FATAL_FAILURE(Submit("other", "x"));
  const int64_t listed_at = Revision();
  StartReflector("team");
  ASSERT_TRUE(WaitFor([&] { return !view_.syncs().empty(); }));
  const KqSnapshot snapshot = view_.syncs()[0];
  ASSERT_EQ(snapshot.workloads.size(), 1u);
  EXPECT_EQ(snapshot.workloads[0].metadata().name(), "a");
  EXPECT_THAT(snapshot.objects, IsEmpty());
  EXPECT_GE(snapshot.revision, listed_at);

  ASSERT_NO_FATAL_FAILURE(Submit("other", "y"));
  ASSERT_NO_FATAL_FAILURE(Submit("team", "b"));
  ASSERT_TRUE(kq_->CancelWorkload("team", "a").ok());
  EXPECT_TRUE(WaitFor(
      [&] { return view_.workloads() == std::set<std::string>{"team/b"}; }));
  const int64_t last = Revision();
  EXPECT_TRUE(WaitFor([&] { return reflector_->last_revision() == last; }));
  EXPECT_THAT(view_.events(), Contains("ADDED team/b"));
  EXPECT_THAT(view_.events(), Each(Not(HasSubstr("other/"))));
  EXPECT_TRUE(view_.in_order_once());
  EXPECT_EQ(reflector_->list_count(), 1);
  EXPECT_EQ(view_.syncs().size(), 1u);
  EXPECT_THAT(view_.errors(), IsEmpty());
}

// The provisioning controller's shape: cluster-scoped config objects and
// one namespace's Workloads in one list and one watch.
TEST_F(KqReflectorTest, ConfigKindsAreListedAndWatchedBesideWorkloads) {
  v1::ApplyRequest first;
  *first.add_objects() = AdmissionCheck("check-1");
  ASSERT_TRUE(kq_->Apply(first).ok());
  ASSERT_NO_FATAL_FAILURE(Submit("team", "a"));
  ASSERT_NO_FATAL_FAILURE(Submit("other", "x"));
  StartReflector("team", {.kinds = {"AdmissionCheck", "Workload"}});
  ASSERT_TRUE(WaitFor([&] { return !view_.syncs().empty(); }));
  EXPECT_EQ(view_.objects(), std::set<std::string>{"check-1"});
  EXPECT_EQ(view_.workloads(), std::set<std::string>{"team/a"});

  v1::ApplyRequest second;
  *second.add_objects() = AdmissionCheck("check-2");
  ASSERT_TRUE(kq_->Apply(second).ok());
  ASSERT_TRUE(kq_->Delete("AdmissionCheck", "", "check-1").ok());
  ASSERT_NO_FATAL_FAILURE(Submit("other", "y"));
  ASSERT_NO_FATAL_FAILURE(Submit("team", "b"));
  EXPECT_TRUE(WaitFor([&] {
    return view_.workloads() == std::set<std::string>{"team/a", "team/b"};
  }));
  EXPECT_EQ(view_.objects(), std::set<std::string>{"check-2"});
  EXPECT_THAT(view_.events(), Contains("ADDED check-2"));
  EXPECT_THAT(view_.events(), Contains("DELETED check-1"));
  EXPECT_THAT(view_.events(), Each(Not(HasSubstr("other/"))));
  EXPECT_EQ(reflector_->list_count(), 1);
}

// kill -9 and a graceful restart on the same port: the watch resumes by
// itself, each change arrives once, and nothing is listed again.
TEST_F(KqReflectorTest, WatchResumesAcrossKqdRestartsWithoutListingAgain) {
  StartReflector("team");
  ASSERT_TRUE(WaitFor([&] { return !view_.syncs().empty(); }));
  ASSERT_NO_FATAL_FAILURE(Submit("team", "a"));
  ASSERT_TRUE(WaitFor([&] { return view_.workloads().count("team/a") > 0; }));

  ASSERT_NO_FATAL_FAILURE(RestartKqd(/*kill=*/true));
  ASSERT_NO_FATAL_FAILURE(Submit("team", "b"));
  EXPECT_TRUE(WaitFor([&] { return view_.workloads().count("team/b") > 0; }));
  ASSERT_NO_FATAL_FAILURE(RestartKqd(/*kill=*/false));
  ASSERT_NO_FATAL_FAILURE(Submit("team", "c"));
  EXPECT_TRUE(WaitFor([&] { return view_.workloads().count("team/c") > 0; }));

  for (const char* name : {"team/a", "team/b", "team/c"}) {
    EXPECT_THAT(view_.events(),
                Contains(absl::StrCat("ADDED ", name)).Times(1));
  }
  EXPECT_TRUE(view_.in_order_once());
  EXPECT_EQ(reflector_->list_count(), 1);
  EXPECT_THAT(view_.errors(), IsEmpty());
}

// A watch that gives up (kqd gone for longer than the client's retry
// budget) is reported, and once kqd is back the reflector lists again.
TEST_F(KqReflectorTest, ListsAgainOnceTheWatchGivesUp) {
  client::ClientOptions impatient = KqOptions(kqd_->target());
  impatient.retry_budget = absl::Seconds(1);
  StartReflector("team",
                 {.initial_backoff = absl::Milliseconds(50),
                  .max_backoff = absl::Milliseconds(200)},
                 &impatient);
  ASSERT_TRUE(WaitFor([&] { return !view_.syncs().empty(); }));
  ASSERT_NO_FATAL_FAILURE(Submit("team", "a"));
  ASSERT_TRUE(WaitFor([&] { return view_.workloads().count("team/a") > 0; }));

  const int port = kqd_->port();
  kqd_->Kill();
  ASSERT_TRUE(WaitFor([&] { return !view_.errors().empty(); }));
  for (const absl::Status& error : view_.errors()) {
    EXPECT_EQ(error.code(), absl::StatusCode::kUnavailable) << error;
  }
  ASSERT_TRUE(kqd_->Start({absl::StrCat("--listen=127.0.0.1:", port)}).ok());
  ASSERT_NO_FATAL_FAILURE(Submit("team", "b"));
  ASSERT_TRUE(kq_->CancelWorkload("team", "a").ok());
  EXPECT_TRUE(WaitFor([&] { return reflector_->list_count() >= 2; }));
  EXPECT_TRUE(WaitFor(
      [&] { return view_.workloads() == std::set<std::string>{"team/b"}; }));
  EXPECT_EQ(static_cast<int64_t>(view_.syncs().size()),
            reflector_->list_count());
}

TEST_F(KqReflectorTest, StopEndsAWatchWaitingForKqdsNextEvent) {
  StartReflector("team");
  ASSERT_TRUE(WaitFor([&] { return !view_.syncs().empty(); }));
  // Long enough for the watch to be waiting for the next event.
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_LT(StopReflector(), absl::Seconds(2));
  ASSERT_NO_FATAL_FAILURE(Submit("team", "late"));
  EXPECT_THAT(view_.events(), IsEmpty());
  EXPECT_THAT(view_.errors(), IsEmpty());
}

// kqd gone, the watch reconnecting within a long retry budget: Stop()
// does not wait for the budget.
TEST_F(KqReflectorTest, StopEndsAWatchThatIsReconnecting) {
  StartReflector("team");
  ASSERT_TRUE(WaitFor([&] { return !view_.syncs().empty(); }));
  kqd_->Kill();
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_LT(StopReflector(), absl::Seconds(2));
  // The watch had not given up: a stop is not an error.
  EXPECT_THAT(view_.errors(), IsEmpty());
}

TEST_F(KqReflectorTest, StoppedBeforeRunDoesNothing) {
  KqReflector reflector(*kq_, "team", view_.Handlers());
  reflector.Stop();
  const absl::Time start = absl::Now();
  reflector.Run();
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_THAT(view_.syncs(), IsEmpty());
  EXPECT_EQ(reflector.list_count(), 0);
  EXPECT_EQ(reflector.last_revision(), 0);
}

}  // namespace
}  // namespace kq::shim
