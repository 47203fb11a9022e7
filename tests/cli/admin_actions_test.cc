// `kq preempt`, `kq stop` and `kq resume` against FakeClient. The stop /
// resume tables are ported from Kueue's kueuectl integration tests
// (test/integration/singlecluster/kueuectl/stop_test.go and resume_test.go),
// with their entry names.

#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/command.h"
#include "cli/commands/commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kq/v1/admin_service.pb.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"

#include "tests/cli/fake_client.h"
#include "tests/cli/test_objects.h"

namespace kq::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class AdminActionsTest : public ::testing::Test {
 protected:
  AdminActionsTest() {
    v1::ApplyRequest apply;
    v1::ClusterQueue& cq = *apply.add_objects()->mutable_cluster_queue();
    cq.mutable_metadata()->set_name("cq-1");
    v1::LocalQueue& lq = *apply.add_objects()->mutable_local_queue();
    lq.mutable_metadata()->set_namespace_("ns");
    lq.mutable_metadata()->set_name("lq-1");
    lq.mutable_spec()->set_cluster_queue("cq-1");
    EXPECT_TRUE(client_.Apply(apply).ok());
  }

  CommandContext Context() {
    return CommandContext{
        .client = client_, .out = out_, .err = err_, .now = testing::kNow};
  }

  std::string ClusterQueueStopPolicy(const std::string& name) {
    for (const v1::ConfigObject& object : client_.Objects("ClusterQueue")) {
      if (object.cluster_queue().metadata().name() == name) {
        return object.cluster_queue().spec().stop_policy();
      }
    }
    return "<missing>";
  }

  std::string LocalQueueStopPolicy(const std::string& name) {
    for (const v1::ConfigObject& object : client_.Objects("LocalQueue")) {
      if (object.local_queue().metadata().name() == name) {
        return object.local_queue().spec().stop_policy();
      }
    }
    return "<missing>";
  }

  // An admitted workload "wl" in namespace ns.
  void PutAdmittedWorkload() {
    v1::Workload workload = testing::ParseText<v1::Workload>(R"pb(
      metadata { namespace: "ns" name: "wl" }
      spec {
        queue_name: "lq-1"
        pod_sets {
          name: "main"
          count: 1
          requests { key: "cpu" value: "1" }
        }
      }
    )pb");
    client_.PutWorkload(workload);
    client_.AdmitPending("ns", "wl", "cq-1", "default");
  }

  testing::FakeClient client_{testing::kNow};
  std::ostringstream out_;
  std::ostringstream err_;
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
  v1::SetStopPolicyRequest initial;
  initial.set_kind(tc.kind == "clusterqueue" ? "ClusterQueue" : "LocalQueue");
  initial.set_namespace_("ns");
  initial.set_name(object);
  initial.set_stop_policy(tc.initial_stop_policy);
  ASSERT_TRUE(client_.SetStopPolicy(initial).ok());
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
  EXPECT_THAT(client_.active_changes(),
              ElementsAre(std::make_tuple("ns", "wl", false)));
  EXPECT_FALSE(client_.FindWorkload("ns", "wl")->spec().active());
  EXPECT_EQ(out_.str(), "workload.kueue.x-k8s.io/wl stopped\n");
}

// Kueue: "Resuming the Workload" / "Should resume the Workload".
TEST_F(AdminActionsTest, ShouldResumeTheWorkload) {
  v1::Workload workload = testing::ParseText<v1::Workload>(R"pb(
    metadata { namespace: "ns" name: "wl" }
    spec { queue_name: "lq-1" active: false }
  )pb");
  client_.PutWorkload(workload);
  CommandContext ctx = Context();
  ASSERT_EQ(
      RunResume({.kind = "wl", .name = "wl", .namespace_name = "ns"}, ctx),
      kExitOk)
      << err_.str();
  EXPECT_TRUE(client_.FindWorkload("ns", "wl")->spec().active());
  EXPECT_EQ(out_.str(), "workload.kueue.x-k8s.io/wl resumed\n");
}

TEST_F(AdminActionsTest, StopTakesKubectlSpellingsOfTheKinds) {
  CommandContext ctx = Context();
  EXPECT_EQ(RunStop({.kind = "cq", .name = "cq-1"}, ctx), kExitOk);
  EXPECT_EQ(
      RunStop({.kind = "lq", .name = "lq-1", .namespace_name = "ns"}, ctx),
      kExitOk);
  std::vector<v1::SetStopPolicyRequest> requests =
      client_.stop_policy_requests();
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
  EXPECT_THAT(client_.stop_policy_requests(), IsEmpty());
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
  EXPECT_THAT(client_.active_changes(), IsEmpty());
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
  std::vector<v1::PreemptRequest> requests = client_.preempt_requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].namespace_(), "ns");
  EXPECT_EQ(requests[0].name(), "wl");
  EXPECT_EQ(requests[0].message(), "maintenance");
  EXPECT_EQ(requests[0].actor(), "alice");
  EXPECT_FALSE(requests[0].deactivate());
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
  std::vector<v1::PreemptRequest> requests = client_.preempt_requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].actor(), "operator");
  EXPECT_TRUE(requests[0].deactivate());
}

TEST_F(AdminActionsTest, PreemptOfAPendingWorkloadIsAFailedPrecondition) {
  client_.PutWorkload(testing::ParseText<v1::Workload>(R"pb(
    metadata { namespace: "ns" name: "pending" }
    spec { queue_name: "lq-1" }
  )pb"));
  CommandContext ctx = Context();
  EXPECT_EQ(RunPreempt({.args = {"pending"}, .namespace_name = "ns"}, ctx),
            kExitError);
  EXPECT_EQ(err_.str(),
            "kq: FAILED_PRECONDITION: workload ns/pending holds no quota to "
            "preempt\n");
}

TEST_F(AdminActionsTest, PreemptOfAnotherKindIsAUsageError) {
  CommandContext ctx = Context();
  EXPECT_EQ(RunPreempt({.args = {"cq", "cq-1"}}, ctx), kExitUsage);
  EXPECT_EQ(err_.str(),
            "error: preempt works on workloads only, got kind \"cq\"\n");
  EXPECT_THAT(client_.preempt_requests(), IsEmpty());
}

}  // namespace
}  // namespace kq::cli
