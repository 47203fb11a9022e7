// `kq watch` against FakeClient's scripted events, and the event printer.

#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cli/command.h"
#include "cli/commands/commands.h"
#include "cli/printers/watch_printer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"
#include "nlohmann/json.hpp"

#include "tests/cli/fake_client.h"
#include "tests/cli/test_objects.h"

namespace kq::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Golden(const char* text) { return std::string(text).substr(1); }

v1::WatchEvent WorkloadEvent(v1::WatchEvent::Type type, int64_t revision,
                             v1::Workload workload) {
  v1::WatchEvent event;
  event.set_type(type);
  event.set_revision(revision);
  *event.mutable_workload() = std::move(workload);
  return event;
}

v1::WatchEvent ObjectEvent(v1::WatchEvent::Type type, int64_t revision,
                           v1::ConfigObject object) {
  v1::WatchEvent event;
  event.set_type(type);
  event.set_revision(revision);
  *event.mutable_config_object() = std::move(object);
  return event;
}

class WatchTest : public ::testing::Test {
 protected:
  int Watch(WatchOptions options) {
    options.handle_signals = false;
    CommandContext ctx{
        .client = client_, .out = out_, .err = err_, .now = testing::kNow};
    return RunWatch(options, ctx);
  }

  testing::FakeClient client_{testing::kNow};
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(WatchTest, WorkloadsListsThenStreamsFromTheListRevision) {
  client_.PutWorkload(testing::PendingWorkload());
  v1::Workload admitted = testing::PendingWorkload();
  admitted.mutable_status()->Clear();
  admitted.mutable_metadata()->set_revision(20);
  client_.AddWatchEvents({
      WorkloadEvent(v1::WatchEvent::MODIFIED, 20, testing::AdmittedWorkload()),
  });
  EXPECT_EQ(Watch({.namespace_name = "team-ml"}), kExitOk) << err_.str();
  // The listing is aligned as a whole; a wider row that streams in later
  // widens the columns from there on (earlier lines are already out).
  EXPECT_EQ(out_.str(), Golden(R"(
EVENT   NAME          QUEUE     RESERVED IN   ADMITTED   FINISHED   AGE    REVISION
ADDED   job-pending   ml-jobs                                       5m7s   14
MODIFIED   job-llm-finetune-0919   ml-jobs   ai-training-queue   True                  120m   20
)"));
  std::vector<v1::WatchRequest> requests = client_.watch_requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_THAT(requests[0].kinds(), ElementsAre("Workload"));
  EXPECT_EQ(requests[0].namespace_(), "team-ml");
  // The fake's list revision: one stamp per stored object so far.
  EXPECT_TRUE(requests[0].has_from_revision());
}

TEST_F(WatchTest, FromRevisionSkipsTheListingAndPassesFilters) {
  client_.PutWorkload(testing::PendingWorkload());
  client_.AddWatchEvents({
      WorkloadEvent(v1::WatchEvent::ADDED, 30, testing::AdmittedWorkload()),
  });
  EXPECT_EQ(Watch({.namespace_name = "team-ml",
                   .queue = "ml-jobs",
                   .cluster_queue = "ai-training-queue",
                   .output = "wide",
                   .from_revision = 25}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(), Golden(R"(
EVENT   NAME                    QUEUE     RESERVED IN         ADMITTED   FINISHED   AGE    PRIORITY   STATUS     FLAVORS                                                      REASON   REVISION
ADDED   job-llm-finetune-0919   ml-jobs   ai-training-queue   True                  120m   1000       Admitted   main: cpu=gpu-a100,memory=gpu-a100,nvidia.com/gpu=gpu-a100            30
)"));
  std::vector<v1::WatchRequest> requests = client_.watch_requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].from_revision(), 25);
  EXPECT_EQ(requests[0].queue_name(), "ml-jobs");
  EXPECT_EQ(requests[0].cluster_queue(), "ai-training-queue");
}

TEST_F(WatchTest, AllNamespacesAddsTheNamespaceColumn) {
  client_.AddWatchEvents({
      WorkloadEvent(v1::WatchEvent::DELETED, 7, testing::FinishedWorkload()),
  });
  EXPECT_EQ(Watch({.all_namespaces = true, .watch_only = true}), kExitOk);
  EXPECT_EQ(out_.str(), Golden(R"(
EVENT     NAMESPACE   NAME       QUEUE     RESERVED IN         ADMITTED   FINISHED   AGE   REVISION
DELETED   team-ml     job-done   ml-jobs   ai-training-queue   True       True       3d    7
)"));
  EXPECT_EQ(client_.watch_requests()[0].namespace_(), "");
  EXPECT_FALSE(client_.watch_requests()[0].has_from_revision());
}

TEST_F(WatchTest, EventsShowsEveryKindAndKeepsClusterScopedObjects) {
  client_.AddWatchEvents({
      ObjectEvent(v1::WatchEvent::MODIFIED, 41, testing::TrainingQueue()),
      WorkloadEvent(v1::WatchEvent::ADDED, 42, testing::PendingWorkload()),
      ObjectEvent(v1::WatchEvent::ADDED, 43, testing::DevQueue()),
      ObjectEvent(v1::WatchEvent::DELETED, 44, testing::GpuFlavor()),
  });
  EXPECT_EQ(Watch({.what = "events", .namespace_name = "team-ml"}), kExitOk);
  // DevQueue is in namespace default: filtered out by -n team-ml.
  EXPECT_EQ(out_.str(), Golden(R"(
REVISION   TYPE       KIND           NAMESPACE/NAME      SUMMARY
41         MODIFIED   ClusterQueue   ai-training-queue   pending=2 reserving=1 admitted=1
42         ADDED      Workload       team-ml/job-pending   Pending: couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor gpu-a100, 4 more needed
44         DELETED    ResourceFlavor   gpu-a100              deleted
)"));
  // No server-side namespace or kind filter: cluster-scoped objects must
  // reach the client.
  EXPECT_EQ(client_.watch_requests()[0].namespace_(), "");
  EXPECT_THAT(client_.watch_requests()[0].kinds(), IsEmpty());
}

TEST_F(WatchTest, JsonIsOneDocumentPerLine) {
  client_.AddWatchEvents({
      WorkloadEvent(v1::WatchEvent::ADDED, 42, testing::PendingWorkload()),
  });
  EXPECT_EQ(
      Watch(
          {.namespace_name = "team-ml", .output = "json", .watch_only = true}),
      kExitOk);
  const std::string text = out_.str();
  ASSERT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
  nlohmann::json event = nlohmann::json::parse(text);
  EXPECT_EQ(event["type"], "ADDED");
  EXPECT_EQ(event["revision"], 42);
  EXPECT_EQ(event["object"]["kind"], "Workload");
  EXPECT_EQ(event["object"]["metadata"]["name"], "job-pending");
}

TEST_F(WatchTest, YamlIsOneDocumentPerEvent) {
  client_.AddWatchEvents({
      WorkloadEvent(v1::WatchEvent::ADDED, 42, testing::PendingWorkload()),
      WorkloadEvent(v1::WatchEvent::MODIFIED, 43, testing::PendingWorkload()),
  });
  EXPECT_EQ(
      Watch(
          {.namespace_name = "team-ml", .output = "yaml", .watch_only = true}),
      kExitOk);
  EXPECT_THAT(out_.str(), ::testing::StartsWith("---\n"));
  EXPECT_THAT(out_.str(), HasSubstr("type: MODIFIED\n"));
  EXPECT_THAT(out_.str(), HasSubstr("revision: 43\n"));
}

TEST_F(WatchTest, OutOfRangeTellsToListAgain) {
  client_.AddWatchEvents(
      {}, absl::OutOfRangeError("revision 3 is older than the oldest kept "
                                "revision 100"));
  EXPECT_EQ(Watch({.namespace_name = "team-ml", .from_revision = 3}),
            kExitError);
  EXPECT_EQ(err_.str(),
            "error: the events after revision 3 are no longer kept by kqd "
            "(revision 3 is older than the oldest kept revision 100); list "
            "again (kq get workloads) and watch without --from-revision\n");
}

TEST_F(WatchTest, OtherErrorsAreReported) {
  client_.AddWatchEvents({}, absl::UnavailableError("kqd is not reachable"));
  EXPECT_EQ(Watch({.watch_only = true}), kExitError);
  EXPECT_EQ(err_.str(), "kq: UNAVAILABLE: kqd is not reachable\n");
}

TEST_F(WatchTest, BadArgumentsAreUsageErrors) {
  struct Case {
    std::string name;
    WatchOptions options;
    std::string want_err;
  };
  for (const Case& tc : std::vector<Case>{
           {"unknown_what",
            {.what = "clusterqueues"},
            "error: kq watch shows workloads or events, not "
            "\"clusterqueues\"\n"},
           {"bad_output",
            {.output = "name"},
            "error: --output must be one of wide, json, yaml; got \"name\"\n"},
           {"queue_across_namespaces",
            {.all_namespaces = true, .queue = "q"},
            "error: --queue names a LocalQueue of one namespace: use -n, not "
            "-A\n"},
           {"negative_revision",
            {.from_revision = -1},
            "error: invalid --from-revision -1: must not be negative\n"},
       }) {
    SCOPED_TRACE(tc.name);
    err_.str("");
    EXPECT_EQ(Watch(tc.options), kExitUsage);
    EXPECT_EQ(err_.str(), tc.want_err);
  }
  EXPECT_THAT(client_.watch_requests(), IsEmpty());
}

TEST(WatchPrinterTest, WorkloadSummaries) {
  v1::Workload evicting = testing::AdmittedWorkload();
  v1::Condition& evicted = *evicting.mutable_status()->add_conditions();
  evicted.set_type("Evicted");
  evicted.set_status("True");
  evicted.set_reason("Preempted");
  evicted.set_message("Preempted by alice: maintenance");
  v1::Workload inactive = testing::PendingWorkload();
  inactive.mutable_spec()->set_active(false);
  struct Case {
    std::string name;
    v1::Workload workload;
    std::string want;
  };
  for (const Case& tc : std::vector<Case>{
           {"admitted", testing::AdmittedWorkload(),
            "Admitted by ai-training-queue on main: "
            "cpu=gpu-a100,memory=gpu-a100,nvidia.com/gpu=gpu-a100"},
           {"evicting", evicting,
            "Evicting: Preempted: Preempted by alice: maintenance"},
           {"pending", testing::PendingWorkload(),
            "Pending: couldn't assign flavors to pod set main: insufficient "
            "unused quota for nvidia.com/gpu in flavor gpu-a100, 4 more "
            "needed"},
           {"deactivated", inactive, "Deactivated"},
           {"finished", testing::FinishedWorkload(), "Finished: Succeeded"},
       }) {
    SCOPED_TRACE(tc.name);
    EXPECT_EQ(WorkloadSummary(tc.workload), tc.want);
  }
}

TEST(WatchPrinterTest, ObjectSummaries) {
  struct Case {
    std::string name;
    v1::ConfigObject object;
    std::string want_kind;
    std::string want_name;
    std::string want_summary;
  };
  for (const Case& tc : std::vector<Case>{
           {"cluster_queue", testing::TrainingQueue(), "ClusterQueue",
            "ai-training-queue", "pending=2 reserving=1 admitted=1"},
           {"local_queue", testing::MlJobsQueue(), "LocalQueue",
            "team-ml/ml-jobs",
            "clusterQueue=ai-training-queue pending=2 reserving=1 admitted=1"},
           {"flavor", testing::GpuFlavor(), "ResourceFlavor", "gpu-a100",
            "nodeLabels=cloud.google.com/gke-accelerator=nvidia-tesla-a100"},
           {"cohort", testing::TeamCohort(), "Cohort", "team", "parent=org"},
           {"priority_class", testing::ProductionPriority(),
            "WorkloadPriorityClass", "production-training", "value=1000"},
           {"admission_check", testing::ProvisioningCheck(), "AdmissionCheck",
            "provision-gpu-nodes",
            "controller=kueue.x-k8s.io/provisioning-request"},
           {"provisioning_request_config", testing::GpuProvisionConfig(),
            "ProvisioningRequestConfig", "gpu-provision-config",
            "class=queued-provisioning.gke.io"},
           {"namespace", testing::TeamMlNamespace(), "Namespace", "team-ml",
            ""},
       }) {
    SCOPED_TRACE(tc.name);
    v1::WatchEvent event = ObjectEvent(v1::WatchEvent::MODIFIED, 1, tc.object);
    EXPECT_EQ(WatchEventKind(event), tc.want_kind);
    EXPECT_EQ(WatchEventName(event), tc.want_name);
    EXPECT_EQ(WatchEventSummary(event), tc.want_summary);
  }
}

}  // namespace
}  // namespace kq::cli
