// `kq watch` against a real kqd (KqdFixture), and the event printer.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
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

#include "kq/client/client.h"
#include "tests/cli/kqd_fixture.h"
#include "tests/cli/test_objects.h"

namespace kq::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Golden(const char* text) { return std::string(text).substr(1); }

v1::WatchEvent ObjectEvent(v1::WatchEvent::Type type, int64_t revision,
                           v1::ConfigObject object) {
  v1::WatchEvent event;
  event.set_type(type);
  event.set_revision(revision);
  *event.mutable_config_object() = std::move(object);
  return event;
}

class WatchTest : public testing::KqdFixture {
 protected:
  int Watch(WatchOptions options) {
    // A watch whose setup failed would wait for events that never come,
    // until ctest's timeout: the failure is already reported.
    if (HasFatalFailure()) return -1;
    options.handle_signals = false;
    CommandContext ctx = Context();
    return RunWatch(options, ctx);
  }

  // The revision kqd is at.
  int64_t Revision() {
    absl::StatusOr<v1::ListObjectsResponse> listed =
        kqd().ListObjects("ResourceFlavor", "");
    EXPECT_TRUE(listed.ok()) << listed.status();
    return listed.ok() ? listed->revision() : -1;
  }
};

TEST_F(WatchTest, WorkloadsListsThenStreamsFromTheListRevision) {
  // job-llm-finetune-0919 waits while its ClusterQueue is on Hold; the
  // hold is released once the watch streams, and kqd admits it.
  ApplySeedQueues();
  SetStopPolicy("ClusterQueue", "", "ai-training-queue", "Hold");
  Submit(testing::ParseText<v1::Workload>(R"pb(
    metadata { namespace: "team-ml" name: "job-llm-finetune-0919" }
    spec {
      queue_name: "ml-jobs"
      pod_sets {
        name: "main"
        count: 4
        requests { key: "cpu" value: "8" }
        requests { key: "nvidia.com/gpu" value: "1" }
      }
    }
  )pb"));
  SubmitPending();
  client().OnWatchStart([this](int64_t) {
    SetStopPolicy("ClusterQueue", "", "ai-training-queue", "None");
  });
  client().EndWatchesAfter(1);
  EXPECT_EQ(Watch({.namespace_name = "team-ml"}), kExitOk) << err_.str();
  // The listing is aligned as a whole; a wider row that streams in later
  // widens the columns from there on (earlier lines are already out).
  EXPECT_EQ(out_.str(), Golden(R"(
EVENT   NAME                    QUEUE     RESERVED IN   ADMITTED   FINISHED   AGE   REVISION
ADDED   job-llm-finetune-0919   ml-jobs                 False                 3d    3
ADDED   job-pending             ml-jobs                 False                 3d    4
MODIFIED   job-llm-finetune-0919   ml-jobs   ai-training-queue   True                  3d    5
)"));
  std::vector<v1::WatchRequest> requests = client().watch_requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_THAT(requests[0].kinds(), ElementsAre("Workload"));
  EXPECT_EQ(requests[0].namespace_(), "team-ml");
  // From the listing's revision.
  EXPECT_TRUE(requests[0].has_from_revision());
}

TEST_F(WatchTest, FromRevisionSkipsTheListingAndPassesFilters) {
  ApplySeedQueues();
  SubmitPending();
  const int64_t from = Revision();
  client().OnWatchStart([this](int64_t) { SubmitAdmitted(); });
  client().EndWatchesAfter(1);
  EXPECT_EQ(Watch({.namespace_name = "team-ml",
                   .queue = "ml-jobs",
                   .cluster_queue = "ai-training-queue",
                   .output = "wide",
                   .from_revision = from}),
            kExitOk)
      << err_.str();
  // Not job-pending, which did not change after `from`.
  EXPECT_EQ(out_.str(), Golden(R"(
EVENT   NAME                    QUEUE     RESERVED IN         ADMITTED   FINISHED   AGE   PRIORITY   STATUS     FLAVORS                                                      REASON   REVISION
ADDED   job-llm-finetune-0919   ml-jobs   ai-training-queue   True                  3d    1000       Admitted   main: cpu=gpu-a100,memory=gpu-a100,nvidia.com/gpu=gpu-a100            3
)"));
  std::vector<v1::WatchRequest> requests = client().watch_requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].from_revision(), from);
  EXPECT_EQ(requests[0].queue_name(), "ml-jobs");
  EXPECT_EQ(requests[0].cluster_queue(), "ai-training-queue");
}

TEST_F(WatchTest, AllNamespacesAddsTheNamespaceColumn) {
  ApplySeedQueues();
  ASSERT_TRUE(
      testing::IsTrue(Submit(testing::ParseText<v1::Workload>(R"pb(
                        metadata { namespace: "team-ml" name: "job-done" }
                        spec {
                          queue_name: "ml-jobs"
                          pod_sets {
                            name: "main"
                            count: 1
                            requests { key: "cpu" value: "2" }
                          }
                        }
                      )pb")),
                      "Admitted"));
  client().OnWatchStart([this](int64_t) {
    ASSERT_TRUE(kqd().FinishWorkload("team-ml", "job-done", true, "").ok());
  });
  client().EndWatchesAfter(1);
  EXPECT_EQ(Watch({.all_namespaces = true, .watch_only = true}), kExitOk);
  // kqd keeps finished workloads: the finish is a MODIFIED event.
  EXPECT_EQ(out_.str(), Golden(R"(
EVENT      NAMESPACE   NAME       QUEUE     RESERVED IN         ADMITTED   FINISHED   AGE   REVISION
MODIFIED   team-ml     job-done   ml-jobs   ai-training-queue   True       True       3d    3
)"));
  EXPECT_EQ(client().watch_requests()[0].namespace_(), "");
  EXPECT_FALSE(client().watch_requests()[0].has_from_revision());
}

TEST_F(WatchTest, EventsShowsEveryKindAndKeepsClusterScopedObjects) {
  ApplySeedQueues();
  ApplyYaml(R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: spare
)yaml");
  client().OnWatchStart([this](int64_t) {
    SetStopPolicy("ClusterQueue", "", "ai-training-queue", "Hold");
    SubmitPending();
    ApplyYaml(R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: dev
spec:
  clusterQueue: ai-training-queue
)yaml");
    ASSERT_TRUE(kqd().Delete("ResourceFlavor", "", "spare").ok());
  });
  // One event each (revisions 3 to 6), the LocalQueue's included.
  client().EndWatchesAfter(4);
  EXPECT_EQ(Watch({.what = "events", .namespace_name = "team-ml"}), kExitOk);
  // LocalQueue dev is in namespace default: filtered out by -n team-ml.
  EXPECT_EQ(out_.str(), Golden(R"(
REVISION   TYPE       KIND           NAMESPACE/NAME      SUMMARY
3          MODIFIED   ClusterQueue   ai-training-queue   pending=0 reserving=0 admitted=0 stopPolicy=Hold
4          ADDED      Workload       team-ml/job-pending   Pending: ClusterQueue ai-training-queue is inactive
6          DELETED    ResourceFlavor   spare                 deleted
)"));
  // No server-side namespace or kind filter: cluster-scoped objects must
  // reach the client.
  EXPECT_EQ(client().watch_requests()[0].namespace_(), "");
  EXPECT_THAT(client().watch_requests()[0].kinds(), IsEmpty());
}

TEST_F(WatchTest, JsonIsOneDocumentPerLine) {
  ApplySeedQueues();
  client().OnWatchStart([this](int64_t) { SubmitPending(); });
  client().EndWatchesAfter(1);
  EXPECT_EQ(
      Watch(
          {.namespace_name = "team-ml", .output = "json", .watch_only = true}),
      kExitOk);
  const std::string text = out_.str();
  ASSERT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
  nlohmann::json event = nlohmann::json::parse(text);
  EXPECT_EQ(event["type"], "ADDED");
  EXPECT_EQ(event["revision"],
            GetWorkload("team-ml", "job-pending").metadata().revision());
  EXPECT_EQ(event["object"]["kind"], "Workload");
  EXPECT_EQ(event["object"]["metadata"]["name"], "job-pending");
}

TEST_F(WatchTest, YamlIsOneDocumentPerEvent) {
  ApplySeedQueues();
  client().OnWatchStart([this](int64_t) {
    SubmitPending();
    ASSERT_TRUE(kqd().SetWorkloadActive("team-ml", "job-pending", false).ok());
  });
  client().EndWatchesAfter(2);
  EXPECT_EQ(
      Watch(
          {.namespace_name = "team-ml", .output = "yaml", .watch_only = true}),
      kExitOk);
  EXPECT_THAT(out_.str(), ::testing::StartsWith("---\n"));
  EXPECT_THAT(out_.str(), HasSubstr("type: MODIFIED\n"));
  EXPECT_THAT(
      out_.str(),
      HasSubstr(absl::StrCat(
          "revision: ",
          GetWorkload("team-ml", "job-pending").metadata().revision(), "\n")));
}

TEST_F(WatchTest, OutOfRangeTellsToListAgain) {
  // A kqd that keeps the events of one revision only: revision 3 is gone
  // once a few more were made (configuration only, so that no scheduling
  // pass makes one more behind the test's back).
  RestartKqd({.event_retention = 1});
  ApplySeedQueues();
  for (const char* value : {"1", "2", "3", "4"}) {
    ApplyYaml(absl::StrCat(R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: production-training
value: )yaml",
                           value));
  }
  const int64_t newest = Revision();
  ASSERT_EQ(newest, 5);
  EXPECT_EQ(Watch({.namespace_name = "team-ml", .from_revision = 3}),
            kExitError);
  EXPECT_EQ(err_.str(),
            absl::StrCat(
                "error: the events after revision 3 are no longer kept by kqd "
                "(revision 3 is older than the retained event log (oldest "
                "retained: ",
                newest,
                "); list again and watch from the list's revision); list "
                "again (kq get workloads) and watch without "
                "--from-revision\n"));
}

TEST_F(WatchTest, OtherErrorsAreReported) {
  // kqd is gone; a client that gives up on it soon.
  std::unique_ptr<client::Client> impatient = kqd_->NewClient(
      {.deadline = absl::Seconds(10), .retry_budget = absl::Milliseconds(200)});
  kqd_->Stop();
  CommandContext ctx{
      .client = *impatient, .out = out_, .err = err_, .now = now_};
  EXPECT_EQ(RunWatch({.watch_only = true, .handle_signals = false}, ctx),
            kExitError);
  EXPECT_THAT(err_.str(), ::testing::StartsWith("kq: UNAVAILABLE: "));
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
  EXPECT_THAT(client().calls(), IsEmpty());
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
