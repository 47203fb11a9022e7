// `kq preempt`, `kq stop` and `kq resume` against a real kqd (KqdFixture). The
// stop / resume tables are ported from Kueue's kueuectl integration tests
// (test/integration/singlecluster/kueuectl/stop_test.go and resume_test.go),
// with their entry names.

#include <sstream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/commands/commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kq/v1/admin_service.pb.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"

#include "tests/cli/kqd_fixture.h"
#include "tests/cli/test_objects.h"

namespace kq::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

class AdminActionsTest : public testing::KqdFixture {
 protected:
  // ClusterQueue cq-1 (1 cpu on flavor default) and LocalQueue ns/lq-1.
  void SetUp() override {
    KqdFixture::SetUp();
    ApplyYaml(R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: cq-1
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default
      resources:
      - name: cpu
        nominalQuota: 1
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: ns
  name: lq-1
spec:
  clusterQueue: cq-1
)yaml");
  }

  std::string ClusterQueueStopPolicy(const std::string& name) {
    return GetObject("ClusterQueue", "", name)
        .cluster_queue()
        .spec()
        .stop_policy();
  }

  std::string LocalQueueStopPolicy(const std::string& name) {
    return GetObject("LocalQueue", "ns", name)
        .local_queue()
        .spec()
        .stop_policy();
  }

  // Workload `name` in lq-1 asking `cpu`.
  v1::Workload Workload(const std::string& name, const std::string& cpu) {
    v1::Workload workload = testing::ParseText<v1::Workload>(R"pb(
      metadata { namespace: "ns" }
      spec {
        queue_name: "lq-1"
        pod_sets { name: "main" count: 1 }
      }
    )pb");
    workload.mutable_metadata()->set_name(name);
    (*workload.mutable_spec()->mutable_pod_sets(0)->mutable_requests())["cpu"] =
        cpu;
    return workload;
  }

  // An admitted workload "wl" in namespace ns, holding cq-1's cpu. cq-1 is
  // then put on Hold, so that an eviction leaves it evicted instead of
  // admitting it again in the same batch.
  void PutAdmittedWorkload() {
    const v1::Workload admitted = Submit(Workload("wl", "1"));
    ASSERT_TRUE(testing::IsTrue(admitted, "Admitted"))
        << admitted.DebugString();
    SetStopPolicy("ClusterQueue", "", "cq-1", "Hold");
  }
};

struct StopQueueCase {
  std::string name;
  // "clusterqueue" or "localqueue".
  std::string kind;
  bool keep_already_running;
  std::string want_stop_policy;
};

class StopQueueTest : public AdminActionsTest,
                      public ::testing::WithParamInterface<StopQueueCase> {};

TEST_P(StopQueueTest, SetsTheStopPolicy) {
  const StopQueueCase& tc = GetParam();
  const std::string object = tc.kind == "clusterqueue" ? "cq-1" : "lq-1";
  CommandContext ctx = Context();
  ASSERT_EQ(RunStop({.kind = tc.kind,
                     .name = object,
                     .namespace_name = "ns",
                     .keep_already_running = tc.keep_already_running},
                    ctx),
            kExitOk)
      << err_.str();
  const std::string got = tc.kind == "clusterqueue"
                              ? ClusterQueueStopPolicy(object)
                              : LocalQueueStopPolicy(object);
  EXPECT_EQ(got, tc.want_stop_policy);
  EXPECT_EQ(out_.str(),
            absl::StrCat(tc.kind, ".kueue.x-k8s.io/", object, " stopped\n"));
}

INSTANTIATE_TEST_SUITE_P(
    Kueuectl, StopQueueTest,
    ::testing::ValuesIn(std::vector<StopQueueCase>{
        {.name = "stop_a_localqueue_and_drain_workloads",
         .kind = "localqueue",
         .keep_already_running = false,
         .want_stop_policy = "HoldAndDrain"},
        {.name = "stop_a_localqueue_and_let_the_admitted_workloads_finish",
         .kind = "localqueue",
         .keep_already_running = true,
         .want_stop_policy = "Hold"},
        {.name = "stop_a_clusterqueue_and_drain_workloads",
         .kind = "clusterqueue",
         .keep_already_running = false,
         .want_stop_policy = "HoldAndDrain"},
        {.name = "stop_a_clusterqueue_and_let_the_admitted_workloads_finish",
         .kind = "clusterqueue",
         .keep_already_running = true,
         .want_stop_policy = "Hold"},
    }),
    [](const auto& info) { return info.param.name; });

struct ResumeQueueCase {
  std::string name;
  std::string kind;
  std::string initial_stop_policy;
};

class ResumeQueueTest : public AdminActionsTest,
                        public ::testing::WithParamInterface<ResumeQueueCase> {
};

TEST_P(ResumeQueueTest, SetsStopPolicyNone) {
  const ResumeQueueCase& tc = GetParam();
  const std::string object = tc.kind == "clusterqueue" ? "cq-1" : "lq-1";
  SetStopPolicy(tc.kind == "clusterqueue" ? "ClusterQueue" : "LocalQueue",
                tc.kind == "clusterqueue" ? "" : "ns", object,
                tc.initial_stop_policy);
  CommandContext ctx = Context();
  ASSERT_EQ(
      RunResume({.kind = tc.kind, .name = object, .namespace_name = "ns"}, ctx),
      kExitOk)
      << err_.str();
  const std::string got = tc.kind == "clusterqueue"
                              ? ClusterQueueStopPolicy(object)
                              : LocalQueueStopPolicy(object);
  EXPECT_EQ(got, "None");
  EXPECT_EQ(out_.str(),
            absl::StrCat(tc.kind, ".kueue.x-k8s.io/", object, " resumed\n"));
}

INSTANTIATE_TEST_SUITE_P(
    Kueuectl, ResumeQueueTest,
    ::testing::ValuesIn(std::vector<ResumeQueueCase>{
        {"localqueue_holdanddrain", "localqueue", "HoldAndDrain"},
        {"localqueue_hold", "localqueue", "Hold"},
        {"clusterqueue_holdanddrain", "clusterqueue", "HoldAndDrain"},
        {"clusterqueue_hold", "clusterqueue", "Hold"},
    }),
    [](const auto& info) { return info.param.name; });

// Kueue: "Stopping the Workload" / "Should stop the Workload".
TEST_F(AdminActionsTest, ShouldStopTheWorkload) {
  PutAdmittedWorkload();
  CommandContext ctx = Context();
  ASSERT_EQ(
      RunStop({.kind = "workload", .name = "wl", .namespace_name = "ns"}, ctx),
      kExitOk)
      << err_.str();
  EXPECT_FALSE(GetWorkload("ns", "wl").spec().active());
  EXPECT_EQ(out_.str(), "workload.kueue.x-k8s.io/wl stopped\n");
}

// Kueue: "Resuming the Workload" / "Should resume the Workload".
TEST_F(AdminActionsTest, ShouldResumeTheWorkload) {
  v1::Workload workload = Workload("wl", "1");
  workload.mutable_spec()->set_active(false);
  ASSERT_FALSE(Submit(workload).spec().active());
  CommandContext ctx = Context();
  ASSERT_EQ(
      RunResume({.kind = "wl", .name = "wl", .namespace_name = "ns"}, ctx),
      kExitOk)
      << err_.str();
  EXPECT_TRUE(GetWorkload("ns", "wl").spec().active());
  EXPECT_EQ(out_.str(), "workload.kueue.x-k8s.io/wl resumed\n");
}

TEST_F(AdminActionsTest, StopTakesKubectlSpellingsOfTheKinds) {
  CommandContext ctx = Context();
  EXPECT_EQ(RunStop({.kind = "cq", .name = "cq-1"}, ctx), kExitOk);
  EXPECT_EQ(
      RunStop({.kind = "lq", .name = "lq-1", .namespace_name = "ns"}, ctx),
      kExitOk);
  EXPECT_EQ(ClusterQueueStopPolicy("cq-1"), "HoldAndDrain");
  EXPECT_EQ(LocalQueueStopPolicy("lq-1"), "HoldAndDrain");
  // A ClusterQueue is named without a namespace.
  std::vector<v1::SetStopPolicyRequest> requests =
      client().stop_policy_requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].kind(), "ClusterQueue");
  EXPECT_EQ(requests[0].namespace_(), "");
  EXPECT_EQ(requests[1].kind(), "LocalQueue");
  EXPECT_EQ(requests[1].namespace_(), "ns");
}

TEST_F(AdminActionsTest, StopOfAnotherKindIsAUsageError) {
  CommandContext ctx = Context();
  EXPECT_EQ(RunStop({.kind = "rf", .name = "default"}, ctx), kExitUsage);
  EXPECT_EQ(err_.str(),
            "error: kq stop works on workload, clusterqueue and localqueue, "
            "not \"rf\"\n");
  EXPECT_THAT(client().calls(), IsEmpty());
}

TEST_F(AdminActionsTest, KeepAlreadyRunningIsForQueuesOnly) {
  CommandContext ctx = Context();
  EXPECT_EQ(RunStop({.kind = "workload",
                     .name = "wl",
                     .namespace_name = "ns",
                     .keep_already_running = true},
                    ctx),
            kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("--keep-already-running applies to "
                                    "clusterqueue and localqueue only"));
  EXPECT_THAT(client().calls(), IsEmpty());
}

TEST_F(AdminActionsTest, StopOfAMissingQueueIsNotFound) {
  CommandContext ctx = Context();
  EXPECT_EQ(RunStop({.kind = "clusterqueue", .name = "nope"}, ctx), kExitError);
  EXPECT_EQ(err_.str(), "kq: NOT_FOUND: ClusterQueue \"nope\" not found\n");
  EXPECT_EQ(out_.str(), "");
}

TEST_F(AdminActionsTest, PreemptSendsTheActorAndReason) {
  PutAdmittedWorkload();
  CommandContext ctx = Context();
  ASSERT_EQ(RunPreempt({.args = {"workload", "wl"},
                        .namespace_name = "ns",
                        .reason = "maintenance",
                        .actor = "alice"},
                       ctx),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(), "workload.kueue.x-k8s.io/wl preempted\n");
  // kqd records who asked and why in the eviction.
  const v1::Workload preempted = GetWorkload("ns", "wl");
  ASSERT_TRUE(testing::IsTrue(preempted, "Evicted")) << preempted.DebugString();
  EXPECT_EQ(testing::FindCondition(preempted, "Evicted")->reason(),
            "Preempted");
  EXPECT_EQ(testing::FindCondition(preempted, "Evicted")->message(),
            "Preempted by alice: maintenance");
  EXPECT_TRUE(preempted.spec().active());
}

TEST_F(AdminActionsTest, PreemptWithoutUserIsByOperatorAndCanDeactivate) {
  PutAdmittedWorkload();
  CommandContext ctx = Context();
  ASSERT_EQ(
      RunPreempt({.args = {"wl"}, .namespace_name = "ns", .deactivate = true},
                 ctx),
      kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(), "workload.kueue.x-k8s.io/wl deactivated\n");
  const v1::Workload deactivated = GetWorkload("ns", "wl");
  EXPECT_FALSE(deactivated.spec().active());
  ASSERT_TRUE(testing::IsTrue(deactivated, "Evicted"))
      << deactivated.DebugString();
  EXPECT_EQ(testing::FindCondition(deactivated, "Evicted")->message(),
            "The workload is deactivated by operator");
}

TEST_F(AdminActionsTest, PreemptOfAPendingWorkloadIsAFailedPrecondition) {
  // 2 cpu never fit in cq-1's 1.
  ASSERT_FALSE(
      testing::IsTrue(Submit(Workload("pending", "2")), "QuotaReserved"));
  CommandContext ctx = Context();
  EXPECT_EQ(RunPreempt({.args = {"pending"}, .namespace_name = "ns"}, ctx),
            kExitError);
  EXPECT_EQ(err_.str(),
            "kq: FAILED_PRECONDITION: Workload \"ns/pending\" holds no quota "
            "to preempt\n");
}

TEST_F(AdminActionsTest, PreemptOfAnotherKindIsAUsageError) {
  CommandContext ctx = Context();
  EXPECT_EQ(RunPreempt({.args = {"cq", "cq-1"}}, ctx), kExitUsage);
  EXPECT_EQ(err_.str(),
            "error: preempt works on workloads only, got kind \"cq\"\n");
  EXPECT_THAT(client().calls(), IsEmpty());
}

}  // namespace
}  // namespace kq::cli
