#include "manifest/manifest.h"

#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"
#include "nlohmann/json.hpp"

#include "manifest/proto_json.h"

namespace kq::manifest {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

// ---------------------------------------------------------------------------
// Helpers.

MATCHER_P(EqualsProto, want, "") {
  std::string diff;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&diff);
  if (differencer.Compare(want, arg)) return true;
  *result_listener << "\n" << diff;
  return false;
}

template <typename T>
T ParseTextProto(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message))
      << text;
  return message;
}

// Found by tests/CMakeLists.txt.
fs::path ExamplesDir() { return fs::path(KQ_EXAMPLES_DIR); }

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<Document> ParseExample(const std::string& relative) {
  const fs::path path = ExamplesDir() / relative;
  EXPECT_TRUE(fs::exists(path)) << path;
  absl::StatusOr<std::vector<Document>> docs = ParseManifests(ReadFile(path));
  EXPECT_TRUE(docs.ok()) << relative << ": " << docs.status();
  return docs.ok() ? *std::move(docs) : std::vector<Document>{};
}

// Parses text that must hold exactly one document.
Document ParseOne(const std::string& text) {
  absl::StatusOr<std::vector<Document>> docs = ParseManifests(text);
  EXPECT_TRUE(docs.ok()) << docs.status();
  if (!docs.ok() || docs->size() != 1) {
    ADD_FAILURE() << "want exactly one document in:\n" << text;
    return Document{};
  }
  return (*docs)[0];
}

// Parses one document that must convert cleanly (OK, no warnings).
Document ParseClean(const std::string& text) {
  Document doc = ParseOne(text);
  EXPECT_TRUE(doc.status.ok()) << doc.status << "\n" << text;
  EXPECT_THAT(doc.warnings, IsEmpty());
  return doc;
}

// ---------------------------------------------------------------------------
// Every example manifest.

// Counts of what ExpectEveryFileParses read.
struct ExampleCounts {
  int files = 0;
  int documents = 0;
};

// Every .yaml file under root parses; each document converts cleanly, is the
// seed's fragment, or is a kind kq refuses by name.
ExampleCounts ExpectEveryFileParses(const fs::path& root) {
  ExampleCounts counts;
  const std::set<std::string> unsupported = {"Topology"};
  for (const fs::directory_entry& entry :
       fs::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".yaml") continue;
    ++counts.files;
    SCOPED_TRACE(entry.path().string());
    absl::StatusOr<std::vector<Document>> docs =
        ParseManifests(ReadFile(entry.path()));
    EXPECT_TRUE(docs.ok()) << docs.status();
    if (!docs.ok()) continue;
    EXPECT_FALSE(docs->empty());
    for (const Document& doc : *docs) {
      ++counts.documents;
      SCOPED_TRACE(doc.kind + " " + doc.name);
      if (entry.path().filename() == "lending-limit-snippet.yaml") {
        // A fragment of a ClusterQueue, not an object.
        EXPECT_EQ(doc.status.code(), absl::StatusCode::kInvalidArgument);
        continue;
      }
      if (unsupported.count(doc.kind) > 0) {
        EXPECT_EQ(doc.status.code(), absl::StatusCode::kUnimplemented);
        EXPECT_EQ(doc.status.message(), "kind " + doc.kind + " (" +
                                            doc.api_version +
                                            ") is not supported by kq yet");
        continue;
      }
      EXPECT_TRUE(doc.status.ok()) << doc.status;
      if (!doc.status.ok()) continue;
      // A Kueue Configuration (kqd --config) is neither object nor
      // workload.
      if (doc.kind == "Configuration") continue;
      EXPECT_NE(doc.config_object.has_value(), doc.workload.has_value());
      // Only the two known notes; never an unknown field.
      for (const std::string& warning : doc.warnings) {
        EXPECT_TRUE(absl::StrContains(warning, "is not suspended") ||
                    absl::StrContains(warning,
                                      "admissionScope is not "
                                      "supported yet"))
            << warning;
      }
    }
  }
  return counts;
}

TEST(ExamplesTest, EveryExampleFileParses) {
  ASSERT_TRUE(fs::is_directory(ExamplesDir())) << ExamplesDir();
  const ExampleCounts counts = ExpectEveryFileParses(ExamplesDir());
  EXPECT_GE(counts.files, 25);
  EXPECT_GE(counts.documents, 45);
}

#ifdef KQ_SHARED_EXAMPLES_DIR
// Kueue's own documentation examples, built in only where a copy of them sits
// beside the checkout.
TEST(ExamplesTest, KueueDocumentationExamplesParse) {
  const ExampleCounts counts =
      ExpectEveryFileParses(fs::path(KQ_SHARED_EXAMPLES_DIR) / "kueue");
  EXPECT_GE(counts.files, 18);
}
#endif

TEST(ExamplesTest, SeedClusterQueue) {
  const std::vector<Document> docs = ParseExample("seed/cluster-queue.yaml");
  ASSERT_EQ(docs.size(), 1u);
  const Document& doc = docs[0];
  ASSERT_TRUE(doc.status.ok()) << doc.status;
  EXPECT_EQ(doc.index, 1);
  EXPECT_EQ(doc.api_version, "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(doc.kind, "ClusterQueue");
  EXPECT_EQ(doc.name, "ai-training-queue");
  EXPECT_THAT(doc.warnings, IsEmpty());
  ASSERT_TRUE(doc.config_object.has_value());
  ASSERT_TRUE(doc.config_object->has_cluster_queue());
  const v1::ClusterQueue& cq = doc.config_object->cluster_queue();
  EXPECT_EQ(cq.metadata().name(), "ai-training-queue");
  EXPECT_FALSE(cq.spec().has_namespace_selector());
  EXPECT_EQ(cq.spec().queueing_strategy(), "BestEffortFIFO");
  EXPECT_EQ(cq.spec().preemption().reclaim_within_cohort(), "Any");
  EXPECT_EQ(cq.spec().preemption().within_cluster_queue(), "LowerPriority");
  EXPECT_FALSE(cq.spec().preemption().has_borrow_within_cohort());
  EXPECT_EQ(cq.spec().cohort_name(), "");
  ASSERT_EQ(cq.spec().resource_groups_size(), 1);
  const v1::ResourceGroup& group = cq.spec().resource_groups(0);
  EXPECT_THAT(group.covered_resources(),
              ElementsAre("cpu", "memory", "nvidia.com/gpu"));
  ASSERT_EQ(group.flavors_size(), 2);
  const v1::FlavorQuotas& gpu = group.flavors(0);
  EXPECT_EQ(gpu.name(), "gpu-a100");
  ASSERT_EQ(gpu.resources_size(), 3);
  EXPECT_EQ(gpu.resources(0).name(), "nvidia.com/gpu");
  EXPECT_EQ(gpu.resources(0).nominal_quota(), "16");
  ASSERT_TRUE(gpu.resources(0).has_borrowing_limit());
  EXPECT_EQ(gpu.resources(0).borrowing_limit(), "8");
  EXPECT_FALSE(gpu.resources(0).has_lending_limit());
  EXPECT_EQ(gpu.resources(1).name(), "cpu");
  EXPECT_EQ(gpu.resources(1).nominal_quota(), "64");
  EXPECT_FALSE(gpu.resources(1).has_borrowing_limit());
  EXPECT_EQ(gpu.resources(2).nominal_quota(), "256Gi");
  EXPECT_EQ(group.flavors(1).name(), "default-cpu");
  EXPECT_EQ(group.flavors(1).resources(0).nominal_quota(), "128");
  EXPECT_EQ(group.flavors(1).resources(1).nominal_quota(), "512Gi");
}

TEST(ExamplesTest, SeedResourceFlavorsLocalQueueAndPriorityClasses) {
  const std::vector<Document> flavors =
      ParseExample("seed/resource-flavors.yaml");
  ASSERT_EQ(flavors.size(), 2u);
  EXPECT_EQ(flavors[0].index, 1);
  EXPECT_EQ(flavors[1].index, 2);
  const v1::ResourceFlavor& gpu = flavors[0].config_object->resource_flavor();
  EXPECT_THAT(gpu.spec().node_labels(),
              UnorderedElementsAre(Pair("cloud.google.com/gke-accelerator",
                                        "nvidia-tesla-a100")));
  const v1::ResourceFlavor& cpu = flavors[1].config_object->resource_flavor();
  EXPECT_EQ(cpu.metadata().name(), "default-cpu");
  EXPECT_TRUE(cpu.has_spec());  // `spec: {}`
  EXPECT_TRUE(cpu.spec().node_labels().empty());

  const std::vector<Document> queues = ParseExample("seed/local-queue.yaml");
  ASSERT_EQ(queues.size(), 1u);
  EXPECT_EQ(queues[0].namespace_name, "team-ml");
  const v1::LocalQueue& lq = queues[0].config_object->local_queue();
  EXPECT_EQ(lq.metadata().namespace_(), "team-ml");
  EXPECT_EQ(lq.metadata().name(), "ml-jobs");
  EXPECT_EQ(lq.spec().cluster_queue(), "ai-training-queue");

  const std::vector<Document> classes =
      ParseExample("seed/workload-priority.yaml");
  ASSERT_EQ(classes.size(), 2u);
  const v1::WorkloadPriorityClass& production =
      classes[0].config_object->workload_priority_class();
  EXPECT_EQ(production.metadata().name(), "production-training");
  EXPECT_EQ(production.value(), 1000);
  EXPECT_EQ(production.description(),
            "Production model training; may preempt lower-priority workloads");
  EXPECT_EQ(classes[1].config_object->workload_priority_class().value(), 100);

  const std::vector<Document> checks =
      ParseExample("seed/admission-check.yaml");
  ASSERT_EQ(checks.size(), 1u);
  const v1::AdmissionCheck& ac = checks[0].config_object->admission_check();
  EXPECT_EQ(ac.spec().controller_name(), "kueue.x-k8s.io/provisioning-request");
  EXPECT_EQ(ac.spec().parameters().api_group(), "kueue.x-k8s.io");
  EXPECT_EQ(ac.spec().parameters().kind(), "ProvisioningRequestConfig");
  EXPECT_EQ(ac.spec().parameters().name(), "gpu-provision-config");
}

TEST(ExamplesTest, SeedTrainingJobBecomesAWorkload) {
  const std::vector<Document> docs = ParseExample("seed/training-job.yaml");
  ASSERT_EQ(docs.size(), 1u);
  const Document& doc = docs[0];
  ASSERT_TRUE(doc.status.ok()) << doc.status;
  EXPECT_EQ(doc.kind, "Job");
  EXPECT_EQ(doc.name, "llm-finetune-0919");
  EXPECT_THAT(doc.warnings, IsEmpty());  // It is suspended.
  EXPECT_FALSE(doc.config_object.has_value());
  ASSERT_TRUE(doc.workload.has_value());
  const v1::Workload& wl = *doc.workload;
  EXPECT_EQ(wl.metadata().name(), "job-llm-finetune-0919");
  EXPECT_EQ(wl.metadata().namespace_(), "team-ml");
  EXPECT_THAT(
      wl.metadata().labels(),
      UnorderedElementsAre(Pair("kueue.x-k8s.io/queue-name", "ml-jobs")));
  EXPECT_EQ(wl.spec().queue_name(), "ml-jobs");
  EXPECT_EQ(wl.spec().priority_class_name(), "");
  ASSERT_EQ(wl.spec().pod_sets_size(), 1);
  const v1::PodSet& main = wl.spec().pod_sets(0);
  EXPECT_EQ(main.name(), "main");
  EXPECT_EQ(main.count(), 4);
  EXPECT_FALSE(main.has_min_count());
  EXPECT_THAT(main.requests(),
              UnorderedElementsAre(Pair("cpu", "8"), Pair("memory", "32Gi"),
                                   Pair("nvidia.com/gpu", "1")));
  // The template goes to kqd as JSON text, not as a Struct.
  EXPECT_FALSE(main.has_template_());
  const nlohmann::json tmpl = nlohmann::json::parse(main.template_json());
  EXPECT_EQ(tmpl.at("spec").at("restartPolicy"), "Never");
}

TEST(ExamplesTest, LendingLimitSnippetIsNotAnObject) {
  const std::vector<Document> docs =
      ParseExample("seed/lending-limit-snippet.yaml");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0].status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(docs[0].status.message(), "document must be an object, got a list");
}

TEST(ExamplesTest, GettingStarted) {
  const std::vector<Document> setup =
      ParseExample("kueue/getting-started/quick-start-setup.yaml");
  ASSERT_EQ(setup.size(), 3u);
  for (const Document& doc : setup) {
    ASSERT_TRUE(doc.status.ok()) << doc.status;
    EXPECT_EQ(doc.api_version, "kueue.x-k8s.io/v1beta2");
    EXPECT_THAT(doc.warnings, IsEmpty());
  }
  const v1::ResourceFlavor& rf = setup[0].config_object->resource_flavor();
  EXPECT_EQ(rf.metadata().name(), "default-flavor");
  EXPECT_FALSE(rf.has_spec());
  const v1::ClusterQueue& cq = setup[1].config_object->cluster_queue();
  ASSERT_TRUE(cq.spec().has_namespace_selector());  // `{}`: every namespace
  EXPECT_TRUE(cq.spec().namespace_selector().match_labels().empty());
  EXPECT_TRUE(cq.spec().namespace_selector().match_expressions().empty());
  EXPECT_EQ(
      cq.spec().resource_groups(0).flavors(0).resources(0).nominal_quota(),
      "9");
  EXPECT_EQ(
      cq.spec().resource_groups(0).flavors(0).resources(1).nominal_quota(),
      "9Gi");
  EXPECT_EQ(setup[2].config_object->local_queue().metadata().namespace_(),
            "default");

  const std::vector<Document> job =
      ParseExample("kueue/getting-started/quick-start-job.yaml");
  ASSERT_EQ(job.size(), 1u);
  ASSERT_TRUE(job[0].status.ok()) << job[0].status;
  EXPECT_THAT(job[0].warnings,
              ElementsAre("Job sample-job is not suspended: under Kueue it "
                          "would start before admission; kq admits it as a "
                          "workload"));
  const v1::Workload& wl = *job[0].workload;
  EXPECT_EQ(wl.metadata().name(), "job-sample-job");
  EXPECT_EQ(wl.spec().queue_name(), "user-queue");
  EXPECT_EQ(wl.spec().pod_sets(0).count(), 3);
  EXPECT_THAT(wl.spec().pod_sets(0).requests(),
              UnorderedElementsAre(Pair("cpu", "1"), Pair("memory", "200Mi")));
}

TEST(ExamplesTest, PartialAdmissionJobHasMinCount) {
  const std::vector<Document> docs =
      ParseExample("kueue/jobs/sample-job-partial-admission.yaml");
  ASSERT_EQ(docs.size(), 1u);
  ASSERT_TRUE(docs[0].status.ok()) << docs[0].status;
  const v1::PodSet& main = docs[0].workload->spec().pod_sets(0);
  EXPECT_EQ(main.count(), 20);
  ASSERT_TRUE(main.has_min_count());
  EXPECT_EQ(main.min_count(), 5);
  EXPECT_THAT(main.requests(),
              UnorderedElementsAre(Pair("cpu", "1"), Pair("memory", "200Mi")));
  EXPECT_EQ(docs[0].workload->metadata().annotations().at(
                "kueue.x-k8s.io/job-min-parallelism"),
            "5");
}

TEST(ExamplesTest, GenerateNameJob) {
  const std::vector<Document> docs = ParseExample("kueue/jobs/sample-job.yaml");
  ASSERT_EQ(docs.size(), 1u);
  ASSERT_TRUE(docs[0].status.ok()) << docs[0].status;
  EXPECT_EQ(docs[0].name, "");
  const v1::Workload& wl = *docs[0].workload;
  EXPECT_EQ(wl.metadata().name(), "");
  EXPECT_EQ(wl.metadata().generate_name(), "job-sample-job-");
  EXPECT_EQ(wl.metadata().namespace_(), "default");
  EXPECT_THAT(docs[0].warnings,
              ElementsAre(HasSubstr("Job sample-job-* is not suspended")));
}

TEST(ExamplesTest, MultiKueueSetupEveryKindApplies) {
  const std::vector<Document> docs =
      ParseExample("kueue/multikueue/multikueue-setup.yaml");
  ASSERT_EQ(docs.size(), 6u);
  std::vector<std::string> kinds;
  for (const Document& doc : docs) kinds.push_back(doc.kind);
  EXPECT_THAT(kinds, ElementsAre("ResourceFlavor", "ClusterQueue", "LocalQueue",
                                 "AdmissionCheck", "MultiKueueConfig",
                                 "MultiKueueCluster"));
  for (int i = 0; i < 6; ++i) {
    EXPECT_TRUE(docs[i].status.ok()) << docs[i].status;
    EXPECT_EQ(docs[i].index, i + 1);
    EXPECT_THAT(docs[i].warnings, IsEmpty());
  }
  const v1::ClusterQueue& cq = docs[1].config_object->cluster_queue();
  ASSERT_EQ(cq.spec().admission_checks_size(), 1);
  EXPECT_EQ(cq.spec().admission_checks(0).name(), "sample-multikueue");
  EXPECT_TRUE(cq.spec().admission_checks(0).on_flavors().empty());
  const v1::MultiKueueConfig& config =
      docs[4].config_object->multi_kueue_config();
  EXPECT_EQ(config.metadata().name(), "multikueue-test");
  EXPECT_THAT(config.spec().clusters(), ElementsAre("multikueue-test-worker1"));
  const v1::MultiKueueCluster& cluster =
      docs[5].config_object->multi_kueue_cluster();
  EXPECT_EQ(cluster.metadata().name(), "multikueue-test-worker1");
  EXPECT_EQ(cluster.spec().cluster_source().kube_config().location(),
            "worker1-secret");
  EXPECT_EQ(cluster.spec().cluster_source().kube_config().location_type(),
            "Secret");
}

TEST(ExamplesTest, ProvisioningJobKeepsTolerations) {
  const std::vector<Document> setup =
      ParseExample("kueue/provisioning/provisioning-setup.yaml");
  ASSERT_EQ(setup.size(), 5u);
  for (const Document& doc : setup) {
    ASSERT_TRUE(doc.status.ok()) << doc.kind << ": " << doc.status;
    EXPECT_THAT(doc.warnings, IsEmpty());
  }
  ASSERT_TRUE(setup[4].config_object.has_value());
  // As written: the retry strategy's defaults are the server's to fill in.
  EXPECT_THAT(
      *setup[4].config_object,
      EqualsProto(ParseTextProto<v1::ConfigObject>(R"pb(
        provisioning_request_config {
          metadata { name: "prov-test-config" }
          spec {
            provisioning_class_name: "check-capacity.autoscaling.x-k8s.io"
            managed_resources: "nvidia.com/gpu"
            retry_strategy {
              backoff_limit_count: 2
              backoff_base_seconds: 0
              backoff_max_seconds: 1800
            }
          }
        })pb")));
  const v1::ClusterQueue& cq = setup[1].config_object->cluster_queue();
  ASSERT_EQ(cq.spec().admission_checks_size(), 1);
  EXPECT_THAT(cq.spec().admission_checks(0).on_flavors(),
              ElementsAre("default-flavor"));

  const std::vector<Document> job =
      ParseExample("kueue/provisioning/sample-job.yaml");
  ASSERT_EQ(job.size(), 1u);
  const v1::PodSet& main = job[0].workload->spec().pod_sets(0);
  EXPECT_THAT(main.requests(),
              UnorderedElementsAre(Pair("cpu", "100m"), Pair("memory", "100Mi"),
                                   Pair("nvidia.com/gpu", "1")));
  ASSERT_EQ(main.tolerations_size(), 1);
  EXPECT_THAT(main.tolerations(0), EqualsProto(ParseTextProto<v1::Toleration>(
                                       R"pb(key: "nvidia.com/gpu"
                                            operator: "Exists"
                                            effect: "NoSchedule")pb")));
}

TEST(ExamplesTest, AdminExamples) {
  const std::vector<Document> minimal =
      ParseExample("kueue/admin/minimal-cq.yaml");
  ASSERT_EQ(minimal.size(), 1u);
  const v1::ClusterQueue& cq = minimal[0].config_object->cluster_queue();
  ASSERT_EQ(cq.spec().admission_checks_size(), 2);
  EXPECT_EQ(cq.spec().admission_checks(0).name(), "sample-prov");
  EXPECT_THAT(cq.spec().admission_checks(0).on_flavors(),
              ElementsAre("default-flavor"));
  EXPECT_EQ(cq.spec().admission_checks(1).name(), "sample-prov-2");
  EXPECT_TRUE(cq.spec().admission_checks(1).on_flavors().empty());

  const std::vector<Document> taints =
      ParseExample("kueue/admin/resource-flavor-taints.yaml");
  ASSERT_EQ(taints.size(), 1u);
  EXPECT_THAT(taints[0].config_object->resource_flavor().spec().node_taints(),
              ElementsAre(EqualsProto(ParseTextProto<v1::Taint>(
                  R"pb(key: "spot" value: "true" effect: "NoSchedule")pb"))));

  const std::vector<Document> shared =
      ParseExample("kueue/admin/shared-quota-setup.yaml");
  ASSERT_EQ(shared.size(), 5u);
  EXPECT_EQ(shared[0].index, 1);
  EXPECT_EQ(shared[4].index, 5);
  const v1::ClusterQueue& team = shared[3].config_object->cluster_queue();
  ASSERT_EQ(team.spec().resource_groups_size(), 2);
  EXPECT_EQ(team.spec().resource_groups(1).flavors(0).resources(0).name(),
            "cpu_credits");
  EXPECT_EQ(
      team.spec().resource_groups(1).flavors(0).resources(0).nominal_quota(),
      "14");
}

TEST(ExamplesTest, AdmissionFairSharingWarnsAboutAdmissionScope) {
  const std::vector<Document> docs =
      ParseExample("kueue/admission-fs/admission-fair-sharing-setup.yaml");
  ASSERT_EQ(docs.size(), 4u);
  EXPECT_THAT(docs[1].warnings,
              ElementsAre("spec.admissionScope: admissionScope is not "
                          "supported yet and is ignored"));
  EXPECT_EQ(docs[1].config_object->cluster_queue().spec().queueing_strategy(),
            "StrictFIFO");
  const v1::LocalQueue& lq = docs[2].config_object->local_queue();
  ASSERT_TRUE(lq.spec().fair_sharing().has_weight());
  EXPECT_EQ(lq.spec().fair_sharing().weight(), "1");
}

// ---------------------------------------------------------------------------
// Errors.

struct ErrorCase {
  std::string name;
  std::string yaml;
  absl::StatusCode want_code;
  std::string want_message;
};

void PrintTo(const ErrorCase& tc, std::ostream* os) { *os << tc.name; }

class ParseErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ParseErrorTest, ReportsTheFieldAndTheReason) {
  const ErrorCase& tc = GetParam();
  const Document doc = ParseOne(tc.yaml);
  EXPECT_EQ(doc.status.code(), tc.want_code) << doc.status;
  EXPECT_EQ(doc.status.message(), tc.want_message);
  EXPECT_FALSE(doc.config_object.has_value());
  EXPECT_FALSE(doc.workload.has_value());
}

constexpr char kCqHeader[] = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
)";

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseErrorTest,
    ::testing::ValuesIn(std::vector<ErrorCase>{
        {.name = "quota_is_a_list",
         .yaml = std::string(kCqHeader) + R"(spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: a
      resources: [{name: cpu, nominalQuota: 1}]
    - name: b
      resources:
      - name: cpu
        nominalQuota: [1]
)",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "spec.resourceGroups[0].flavors[1].resources[0]."
                         "nominalQuota: must be a quantity string or number, "
                         "got a list"},
        {.name = "covered_resources_is_a_string",
         .yaml = std::string(kCqHeader) +
                 "spec:\n  resourceGroups:\n  - coveredResources: cpu\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "spec.resourceGroups[0].coveredResources: must be a "
                         "list, got a string"},
        {.name = "nominal_quota_missing",
         .yaml = std::string(kCqHeader) + R"(spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: a, resources: [{name: cpu, borrowingLimit: 1}]}]
)",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "spec.resourceGroups[0].flavors[0].resources[0]."
                         "nominalQuota: required"},
        {.name = "flavor_name_missing",
         .yaml = std::string(kCqHeader) + R"(spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{resources: []}]
)",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "spec.resourceGroups[0].flavors[0].name: required"},
        {.name = "label_value_is_a_number",
         .yaml = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
                 "metadata: {name: rf, labels: {team: 1}}\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "metadata.labels[team]: must be a string, got a "
                         "number"},
        {.name = "spec_is_a_string",
         .yaml = std::string(kCqHeader) + "spec: everything\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "spec: must be an object, got a string"},
        {.name = "both_admission_check_forms_in_v1beta1",
         .yaml = std::string(kCqHeader) + R"(spec:
  admissionChecks: [a]
  admissionChecksStrategy: {admissionChecks: [{name: b}]}
)",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "spec.admissionChecks: must not be set together "
                         "with spec.admissionChecksStrategy"},
        {.name = "admission_check_rule_without_name",
         .yaml = std::string(kCqHeader) + R"(spec:
  admissionChecksStrategy: {admissionChecks: [{onFlavors: [a]}]}
)",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "spec.admissionChecksStrategy.admissionChecks[0]."
                         "name: required"},
        {.name = "threshold_is_a_word",
         .yaml = std::string(kCqHeader) + R"(spec:
  preemption: {borrowWithinCohort: {maxPriorityThreshold: high}}
)",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "spec.preemption.borrowWithinCohort."
                         "maxPriorityThreshold: must be an integer, got a "
                         "string"},
        {.name = "taints_is_an_object",
         .yaml = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
                 "metadata: {name: rf}\nspec: {nodeTaints: {key: a}}\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "spec.nodeTaints: must be a list, got an object"},
        {.name = "toleration_is_a_string",
         .yaml = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
                 "metadata: {name: rf}\nspec: {tolerations: [spot]}\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "spec.tolerations[0]: must be an object, got a "
                         "string"},
        {.name = "missing_api_version",
         .yaml = "kind: ClusterQueue\nmetadata: {name: cq}\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "apiVersion: required"},
        {.name = "api_version_is_a_number",
         .yaml = "apiVersion: 1\nkind: ClusterQueue\nmetadata: {name: cq}\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "apiVersion: must be a string, got a number"},
        {.name = "missing_kind",
         .yaml = "apiVersion: kueue.x-k8s.io/v1beta1\nmetadata: {name: cq}\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "kind: required"},
        {.name = "missing_metadata",
         .yaml = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "metadata: required"},
        {.name = "metadata_is_a_list",
         .yaml = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
                 "metadata: [cq]\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "metadata: must be an object, got a list"},
        {.name = "bad_creation_timestamp",
         .yaml = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
                 "metadata: {name: cq, creationTimestamp: yesterday}\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "metadata.creationTimestamp: must be an RFC 3339 "
                         "time, got \"yesterday\""},
        {.name = "priority_value_out_of_range",
         .yaml = "apiVersion: kueue.x-k8s.io/v1beta1\n"
                 "kind: WorkloadPriorityClass\nmetadata: {name: p}\n"
                 "value: 3000000000\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "value: must be an integer between -2147483648 and "
                         "2147483647, got 3000000000"},
        {.name = "pod_set_count_is_quoted",
         .yaml =
             "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
             "metadata: {name: w, namespace: ns}\n"
             "spec: {queueName: q, podSets: [{name: main, count: \"4\"}]}\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "spec.podSets[0].count: must be an integer, got a "
                         "string"},
        {.name = "unknown_kind",
         .yaml = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
         .want_code = absl::StatusCode::kUnimplemented,
         .want_message = "kind Deployment (apps/v1) is not supported by kq: "
                         "kq reads kueue.x-k8s.io objects, v1 Namespace and "
                         "batch/v1 Job"},
        {.name = "misspelled_kueue_kind",
         .yaml = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQeue\n"
                 "metadata: {name: t}\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "kind: unknown kind ClusterQeue in kueue.x-k8s.io; kq "
                         "reads ResourceFlavor, ClusterQueue, Cohort, "
                         "LocalQueue, WorkloadPriorityClass, AdmissionCheck, "
                         "ProvisioningRequestConfig, MultiKueueConfig, "
                         "MultiKueueCluster, Workload"},
        {.name = "unsupported_kueue_kind",
         .yaml = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Topology\n"
                 "metadata: {name: t}\n",
         .want_code = absl::StatusCode::kUnimplemented,
         .want_message = "kind Topology (kueue.x-k8s.io/v1beta1) is not "
                         "supported by kq yet"},
        {.name = "kind_not_served_in_version",
         .yaml = "apiVersion: kueue.x-k8s.io/v1alpha1\nkind: ClusterQueue\n"
                 "metadata: {name: cq}\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "apiVersion: ClusterQueue is not served in "
                         "kueue.x-k8s.io/v1alpha1; use kueue.x-k8s.io/v1beta1 "
                         "or kueue.x-k8s.io/v1beta2"},
        {.name = "job_without_queue_label",
         .yaml = R"(apiVersion: batch/v1
kind: Job
metadata: {name: plain}
spec: {template: {spec: {containers: []}}}
)",
         .want_code = absl::StatusCode::kFailedPrecondition,
         .want_message = "Job plain has no kueue.x-k8s.io/queue-name label; "
                         "kq manages only labelled Jobs"},
        {.name = "job_min_parallelism_not_a_number",
         .yaml = R"(apiVersion: batch/v1
kind: Job
metadata:
  name: j
  labels: {kueue.x-k8s.io/queue-name: q}
  annotations: {kueue.x-k8s.io/job-min-parallelism: five}
spec: {suspend: true, template: {spec: {containers: []}}}
)",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "metadata.annotations[kueue.x-k8s.io/"
                         "job-min-parallelism]: must be an integer, got "
                         "\"five\""},
        {.name = "job_parallelism_is_quoted",
         .yaml = R"(apiVersion: batch/v1
kind: Job
metadata: {name: j, labels: {kueue.x-k8s.io/queue-name: q}}
spec: {suspend: true, parallelism: "4", template: {spec: {}}}
)",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "spec.parallelism: must be an integer, got a string"},
        {.name = "job_without_template",
         .yaml = R"(apiVersion: batch/v1
kind: Job
metadata: {name: j, labels: {kueue.x-k8s.io/queue-name: q}}
spec: {suspend: true}
)",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "spec.template: required"},
        {.name = "job_template_number_is_not_finite",
         .yaml = R"(apiVersion: batch/v1
kind: Job
metadata: {name: j, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  suspend: true
  template:
    spec:
      containers:
      - args: [1, .nan]
)",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "spec.template.spec.containers[0].args[1]: must be a "
                         "finite number"},
        {.name = "job_request_is_not_a_quantity",
         .yaml = R"(apiVersion: batch/v1
kind: Job
metadata: {name: j, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  suspend: true
  template:
    spec:
      containers:
      - resources: {requests: {cpu: lots}}
)",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "spec.template.spec.containers[0].resources."
                         "requests[cpu]: \"lots\" is not a quantity: it has "
                         "no digits"},
        {.name = "node_selector_value_is_a_bool",
         .yaml = R"(apiVersion: batch/v1
kind: Job
metadata: {name: j, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  suspend: true
  template: {spec: {nodeSelector: {spot: true}}}
)",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "spec.template.spec.nodeSelector[spot]: must be a "
                         "string, got a boolean"},
        {.name = "document_is_a_string",
         .yaml = "hello\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "document must be an object, got a string"},
        {.name = "list_items_is_not_a_list",
         .yaml = "apiVersion: v1\nkind: List\nitems: {a: 1}\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "items: must be a list, got an object"},
    }),
    [](const auto& info) { return info.param.name; });

TEST(ParseManifestsTest, YamlSyntaxErrorFailsTheWholeCall) {
  absl::StatusOr<std::vector<Document>> docs = ParseManifests(
      "apiVersion: v1\nkind: Namespace\nmetadata: {name: [a\n---\n");
  ASSERT_FALSE(docs.ok());
  EXPECT_EQ(docs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(docs.status().message(), HasSubstr("yaml: line "));
  EXPECT_THAT(docs.status().message(), HasSubstr("column"));
}

// Text that is not UTF-8 is not YAML (as for kubectl, whose reader is a port
// of libyaml): the whole call fails at the byte, and no document is read.
TEST(ParseManifestsTest, TextThatIsNotUtf8FailsTheWholeCallAtTheByte) {
  absl::StatusOr<std::vector<Document>> docs = ParseManifests(
      "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n"
      "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, labels: "
      "{kueue.x-k8s.io/queue-name: q}}\nspec:\n  template:\n    spec: "
      "{containers: [{image: \"x\xff"
      "y\"}]}\n");
  ASSERT_FALSE(docs.ok());
  EXPECT_EQ(docs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(docs.status().message(),
            "yaml: line 10, column 35: invalid leading UTF-8 octet");
}

TEST(ParseManifestsTest, EmptyInputHasNoDocuments) {
  absl::StatusOr<std::vector<Document>> docs = ParseManifests("# nothing\n");
  ASSERT_TRUE(docs.ok()) << docs.status();
  EXPECT_TRUE(docs->empty());
}

TEST(ParseManifestsTest, ABadDocumentDoesNotAffectTheOthers) {
  absl::StatusOr<std::vector<Document>> docs = ParseManifests(R"(
apiVersion: v1
kind: Namespace
metadata: {name: team-a, labels: {env: prod}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: team-a}
spec: {clusterQueue: [cq]}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq2, namespace: team-a}
spec: {clusterQueue: cq}
)");
  ASSERT_TRUE(docs.ok()) << docs.status();
  ASSERT_EQ(docs->size(), 3u);
  EXPECT_TRUE((*docs)[0].status.ok());
  EXPECT_THAT((*docs)[0].config_object->namespace_().metadata().labels(),
              UnorderedElementsAre(Pair("env", "prod")));
  // The failed document is still named, so the CLI can say which it was.
  EXPECT_EQ((*docs)[1].index, 2);
  EXPECT_EQ((*docs)[1].kind, "LocalQueue");
  EXPECT_EQ((*docs)[1].name, "lq");
  EXPECT_EQ((*docs)[1].namespace_name, "team-a");
  EXPECT_EQ((*docs)[1].status.message(),
            "spec.clusterQueue: must be a string, got a list");
  EXPECT_TRUE((*docs)[2].status.ok());
  EXPECT_EQ((*docs)[2].index, 3);
}

TEST(ParseManifestsTest, DuplicateKeysFailTheirDocument) {
  absl::StatusOr<std::vector<Document>> docs = ParseManifests(
      "apiVersion: v1\nkind: Namespace\nmetadata: {name: a, name: b}\n");
  ASSERT_TRUE(docs.ok()) << docs.status();
  ASSERT_EQ(docs->size(), 1u);
  EXPECT_EQ((*docs)[0].status.message(), "metadata.name: duplicate key");
}

// ---------------------------------------------------------------------------
// Warnings.

TEST(WarningsTest, UnknownFieldsAreReportedNotFatal) {
  const Document doc = ParseOne(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq, bogus: 1}
spec:
  foo: bar
  cohortName: wrong-version
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: a, extra: true, resources: [{name: cpu, nominalQuota: 1}]}]
extra: {}
)");
  ASSERT_TRUE(doc.status.ok()) << doc.status;
  EXPECT_THAT(doc.warnings,
              UnorderedElementsAre("unknown field \"metadata.bogus\"",
                                   "unknown field \"spec.foo\"",
                                   "unknown field \"spec.cohortName\"",
                                   "unknown field \"spec.resourceGroups[0]."
                                   "flavors[0].extra\"",
                                   "unknown field \"extra\""));
  EXPECT_EQ(doc.config_object->cluster_queue().spec().cohort_name(), "");
}

TEST(WarningsTest, KubectlExportedFieldsAreAcceptedSilently) {
  const Document doc = ParseClean(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cq
  generation: 3
  finalizers: [kueue.x-k8s.io/resource-in-use]
  managedFields: [{manager: kubectl}]
  resourceVersion: "abc"
spec: {}
status:
  conditions: [{type: Active, status: "True", reason: Ready, message: ok,
                observedGeneration: 3,
                lastTransitionTime: "2026-01-02T03:04:05Z"}]
  fairSharing: {weightedShare: 0}
  pendingWorkloads: 2
)");
  const v1::ClusterQueue& cq = doc.config_object->cluster_queue();
  EXPECT_EQ(cq.metadata().revision(), 0);  // Not a kq revision.
  EXPECT_EQ(cq.status().pending_workloads(), 2);
  ASSERT_EQ(cq.status().conditions_size(), 1);
  EXPECT_EQ(cq.status().conditions(0).last_transition_time().seconds(),
            1767323045);
}

TEST(WarningsTest, DeprecatedV1beta1FungibilityValuesAreMapped) {
  const Document doc = ParseOne(std::string(kCqHeader) + R"(spec:
  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: Preempt}
)");
  ASSERT_TRUE(doc.status.ok()) << doc.status;
  const v1::FlavorFungibility& f =
      doc.config_object->cluster_queue().spec().flavor_fungibility();
  EXPECT_EQ(f.when_can_borrow(), "MayStopSearch");
  EXPECT_EQ(f.when_can_preempt(), "MayStopSearch");
  EXPECT_THAT(doc.warnings,
              ElementsAre("spec.flavorFungibility.whenCanBorrow: \"Borrow\" "
                          "is deprecated; using \"MayStopSearch\"",
                          "spec.flavorFungibility.whenCanPreempt: \"Preempt\" "
                          "is deprecated; using \"MayStopSearch\""));

  // v1beta2 does not have them: passed on for the server to refuse.
  const Document v2 = ParseOne(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec: {flavorFungibility: {whenCanBorrow: Borrow}}
)");
  EXPECT_EQ(v2.config_object->cluster_queue()
                .spec()
                .flavor_fungibility()
                .when_can_borrow(),
            "Borrow");
  EXPECT_THAT(v2.warnings, IsEmpty());
}

TEST(WarningsTest, RetryDelayMinutesIsIgnoredWithAWarning) {
  const Document v1 = ParseOne(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: AdmissionCheck
metadata: {name: ac}
spec: {controllerName: c, retryDelayMinutes: 15}
)");
  ASSERT_TRUE(v1.status.ok()) << v1.status;
  EXPECT_THAT(v1.warnings, ElementsAre("spec.retryDelayMinutes: deprecated in "
                                       "Kueue and ignored by kq"));
  const Document v2 = ParseOne(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: ac}
spec: {controllerName: c, retryDelayMinutes: 15}
)");
  EXPECT_THAT(v2.warnings,
              ElementsAre("unknown field \"spec.retryDelayMinutes\""));
}

// ---------------------------------------------------------------------------
// Versions and details.

TEST(ClusterQueueTest, V1beta1CohortAndAdmissionCheckNames) {
  const Document doc = ParseClean(std::string(kCqHeader) + R"(spec:
  cohort: org
  admissionChecks: [a, b]
  fairSharing: {weight: 2}
  stopPolicy: HoldAndDrain
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: f
      resources: [{name: cpu, nominalQuota: 1.5, borrowingLimit: 1e3,
                   lendingLimit: "0"}]
)");
  const v1::ClusterQueueSpec& spec = doc.config_object->cluster_queue().spec();
  EXPECT_EQ(spec.cohort_name(), "org");
  ASSERT_EQ(spec.admission_checks_size(), 2);
  EXPECT_EQ(spec.admission_checks(0).name(), "a");
  EXPECT_TRUE(spec.admission_checks(0).on_flavors().empty());
  EXPECT_EQ(spec.admission_checks(1).name(), "b");
  EXPECT_EQ(spec.fair_sharing().weight(), "2");
  EXPECT_EQ(spec.stop_policy(), "HoldAndDrain");
  const v1::ResourceQuota& quota =
      spec.resource_groups(0).flavors(0).resources(0);
  EXPECT_EQ(quota.nominal_quota(), "1.5");
  EXPECT_EQ(quota.borrowing_limit(), "1000");
  EXPECT_EQ(quota.lending_limit(), "0");
}

TEST(ClusterQueueTest, V1beta2CohortNameAndSelector) {
  const Document doc = ParseClean(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  cohortName: org
  namespaceSelector:
    matchLabels: {team: a}
    matchExpressions: [{key: env, operator: In, values: [prod, "1"]}]
  preemption:
    reclaimWithinCohort: LowerPriority
    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}
  flavorFungibility: {whenCanBorrow: TryNextFlavor,
                      whenCanPreempt: TryNextFlavor,
                      preference: PreemptionOverBorrowing}
)");
  const v1::ClusterQueueSpec& spec = doc.config_object->cluster_queue().spec();
  EXPECT_EQ(spec.cohort_name(), "org");
  EXPECT_THAT(spec.namespace_selector(),
              EqualsProto(ParseTextProto<v1::LabelSelector>(R"pb(
                match_labels { key: "team" value: "a" }
                match_expressions {
                  key: "env"
                  operator: "In"
                  values: "prod"
                  values: "1"
                })pb")));
  EXPECT_EQ(spec.preemption().borrow_within_cohort().max_priority_threshold(),
            100);
  EXPECT_EQ(spec.flavor_fungibility().preference(), "PreemptionOverBorrowing");
}

TEST(CohortTest, ParentFieldByVersion) {
  const Document alpha = ParseClean(R"(apiVersion: kueue.x-k8s.io/v1alpha1
kind: Cohort
metadata: {name: child}
spec: {parent: root}
)");
  EXPECT_EQ(alpha.config_object->cohort().spec().parent_name(), "root");
  const Document beta = ParseClean(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: child}
spec:
  parentName: root
  fairSharing: {weight: "0.5"}
  resourceGroups: [{coveredResources: [cpu], flavors: [{name: f,
    resources: [{name: cpu, nominalQuota: 4, lendingLimit: 4}]}]}]
)");
  const v1::CohortSpec& spec = beta.config_object->cohort().spec();
  EXPECT_EQ(spec.parent_name(), "root");
  EXPECT_EQ(spec.fair_sharing().weight(), "0.5");
  EXPECT_EQ(spec.resource_groups(0).flavors(0).resources(0).lending_limit(),
            "4");
}

TEST(MetadataTest, ReadsIdentityTimesAndRevisions) {
  const Document doc = ParseClean(R"(apiVersion: v1
kind: Namespace
metadata:
  name: team-a
  uid: 1234-abcd
  resourceVersion: "42"
  creationTimestamp: "2026-01-02T05:04:05.25+02:00"
  labels: {kubernetes.io/metadata.name: team-a, "16": "true"}
  annotations: {note: "x: y"}
spec: {finalizers: [kubernetes]}
status: {phase: Active}
)");
  EXPECT_THAT(doc.config_object->namespace_(),
              EqualsProto(ParseTextProto<v1::Namespace>(R"pb(
                metadata {
                  name: "team-a"
                  uid: "1234-abcd"
                  revision: 42
                  creation_timestamp { seconds: 1767323045 nanos: 250000000 }
                  labels { key: "kubernetes.io/metadata.name" value: "team-a" }
                  labels { key: "16" value: "true" }
                  annotations { key: "note" value: "x: y" }
                })pb")));
}

TEST(WorkloadTest, V1beta2PriorityClassRefNeedsAGroupAndKindKueueKnows) {
  const std::string head = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {namespace: team-a, name: w}
spec:
  queueName: default
  podSets: [{count: 1, template: {spec: {containers: [{name: c}]}}}]
)";
  const Document pod =
      ParseClean(head +
                 "  priorityClassRef: {group: scheduling.k8s.io, kind: "
                 "PriorityClass, name: high}\n");
  EXPECT_EQ(pod.workload->spec().priority_class_source(),
            "scheduling.k8s.io/priorityclass");
  const Document no_group =
      ParseOne(head +
               "  priorityClassRef: {kind: WorkloadPriorityClass, "
               "name: high}\n");
  EXPECT_EQ(no_group.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(no_group.status.message()),
              HasSubstr("spec.priorityClassRef.group: group \"\" with kind "
                        "\"WorkloadPriorityClass\""));
  const Document mixed =
      ParseOne(head +
               "  priorityClassRef: {group: kueue.x-k8s.io, kind: "
               "PriorityClass, name: high}\n");
  EXPECT_EQ(mixed.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(mixed.status.message()),
              HasSubstr("spec.priorityClassRef.kind"));
}

TEST(WorkloadTest, V1beta2PriorityClassRefAndStatus) {
  const Document doc = ParseClean(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {namespace: team-a, name: job-sample-abc12}
spec:
  queueName: default
  priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass,
                     name: high}
  priority: 1000
  active: false
  maximumExecutionTimeSeconds: 3600
  podSets:
  - count: 4
    minCount: 2
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1",
                                                          memory: 2Gi}}}]}}
status:
  admission:
    clusterQueue: team-a
    podSetAssignments:
    - name: main
      count: 4
      flavors: {cpu: on-demand, memory: on-demand}
      resourceUsage: {cpu: "4", memory: 8Gi}
  conditions:
  - {type: QuotaReserved, status: "True", reason: QuotaReserved,
     message: Quota reserved in ClusterQueue team-a,
     lastTransitionTime: "2026-01-02T03:04:05Z"}
  admissionChecks:
  - {name: prov, state: Ready, message: done,
     lastTransitionTime: "2026-01-02T03:04:05Z"}
  requeueState: {count: 2}
  reclaimablePods: [{name: main, count: 1}]
  resourceRequests: [{name: main, resources: {cpu: "4"}}]
)");
  const v1::Workload& wl = *doc.workload;
  EXPECT_EQ(wl.spec().priority_class_name(), "high");
  EXPECT_EQ(wl.spec().priority_class_source(),
            "kueue.x-k8s.io/workloadpriorityclass");
  EXPECT_EQ(wl.spec().priority(), 1000);
  ASSERT_TRUE(wl.spec().has_active());
  EXPECT_FALSE(wl.spec().active());
  EXPECT_EQ(wl.spec().maximum_execution_time_seconds(), 3600);
  const v1::PodSet& ps = wl.spec().pod_sets(0);
  EXPECT_EQ(ps.name(), "main");  // Kueue's default.
  EXPECT_EQ(ps.count(), 4);
  EXPECT_EQ(ps.min_count(), 2);
  EXPECT_THAT(ps.requests(),
              UnorderedElementsAre(Pair("cpu", "1"), Pair("memory", "2Gi")));
  EXPECT_THAT(wl.status(), EqualsProto(ParseTextProto<v1::WorkloadStatus>(R"pb(
                admission {
                  cluster_queue: "team-a"
                  pod_set_assignments {
                    name: "main"
                    count: 4
                    flavors { key: "cpu" value: "on-demand" }
                    flavors { key: "memory" value: "on-demand" }
                    resource_usage { key: "cpu" value: "4" }
                    resource_usage { key: "memory" value: "8Gi" }
                  }
                }
                conditions {
                  type: "QuotaReserved"
                  status: "True"
                  reason: "QuotaReserved"
                  message: "Quota reserved in ClusterQueue team-a"
                  last_transition_time { seconds: 1767323045 }
                }
                admission_checks {
                  name: "prov"
                  state: "Ready"
                  message: "done"
                  last_transition_time { seconds: 1767323045 }
                }
                requeue_state { count: 2 }
                reclaimable_pods { name: "main" count: 1 })pb")));
}

TEST(WorkloadTest, V1beta1PriorityClassFields) {
  const Document doc = ParseClean(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {namespace: ns, name: w}
spec:
  queueName: q
  priorityClassName: low
  priorityClassSource: scheduling.k8s.io/priorityclass
  priority: -5
  podSets: [{name: workers, count: 2, template: {}}]
)");
  const v1::WorkloadSpec& spec = doc.workload->spec();
  EXPECT_EQ(spec.priority_class_name(), "low");
  EXPECT_EQ(spec.priority_class_source(), "scheduling.k8s.io/priorityclass");
  EXPECT_EQ(spec.priority(), -5);
  EXPECT_EQ(spec.pod_sets(0).name(), "workers");
  EXPECT_FALSE(spec.pod_sets(0).has_template_());
}

TEST(JobTest, CopiesSchedulingConstraintsAndLabels) {
  const Document doc = ParseClean(R"(apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: ml
  creationTimestamp: "2026-01-02T03:04:05Z"
  uid: job-uid
  labels:
    kueue.x-k8s.io/queue-name: gpus
    kueue.x-k8s.io/priority-class: high
    kueue.x-k8s.io/max-exec-time-seconds: "600"
  annotations: {owner: me}
spec:
  suspend: true
  parallelism: 8
  completions: 3
  backoffLimit: 2
  template:
    metadata: {labels: {app: train}}
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: a100}
      tolerations: [{key: gpu, operator: Exists, effect: NoSchedule,
                     tolerationSeconds: 30}]
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: zone, operator: In, values: [a, b]}]
            - matchExpressions: [{key: spot, operator: DoesNotExist}]
      containers:
      - {name: c, resources: {requests: {cpu: 2}}}
status: {active: 1}
)");
  const v1::Workload& wl = *doc.workload;
  EXPECT_EQ(wl.metadata().name(), "job-train");
  EXPECT_EQ(wl.metadata().uid(), "");  // The Job's uid is not the workload's.
  EXPECT_EQ(wl.metadata().creation_timestamp().seconds(), 1767323045);
  EXPECT_EQ(wl.metadata().labels_size(), 3);
  EXPECT_THAT(wl.metadata().annotations(),
              UnorderedElementsAre(Pair("owner", "me")));
  EXPECT_EQ(wl.spec().queue_name(), "gpus");
  EXPECT_EQ(wl.spec().priority_class_name(), "high");
  EXPECT_EQ(wl.spec().priority_class_source(),
            "kueue.x-k8s.io/workloadpriorityclass");
  EXPECT_EQ(wl.spec().maximum_execution_time_seconds(), 600);
  const v1::PodSet& ps = wl.spec().pod_sets(0);
  EXPECT_EQ(ps.count(), 3);  // Kueue: parallelism capped by completions.
  EXPECT_THAT(ps.requests(), UnorderedElementsAre(Pair("cpu", "2")));
  EXPECT_THAT(
      ps.node_selector(),
      UnorderedElementsAre(Pair("cloud.google.com/gke-accelerator", "a100")));
  EXPECT_THAT(ps.tolerations(),
              ElementsAre(EqualsProto(ParseTextProto<v1::Toleration>(R"pb(
                key: "gpu"
                operator: "Exists"
                effect: "NoSchedule"
                toleration_seconds: 30)pb"))));
  ASSERT_EQ(ps.required_node_affinity_size(), 2);
  EXPECT_THAT(ps.required_node_affinity(0),
              EqualsProto(ParseTextProto<v1::NodeSelectorTerm>(R"pb(
                match_expressions {
                  key: "zone"
                  operator: "In"
                  values: "a"
                  values: "b"
                })pb")));
  EXPECT_EQ(ps.required_node_affinity(1).match_expressions(0).operator_(),
            "DoesNotExist");
}

TEST(JobTest, DefaultsParallelismToOne) {
  const Document doc = ParseClean(R"(apiVersion: batch/v1
kind: Job
metadata: {name: j, labels: {kueue.x-k8s.io/queue-name: q}}
spec: {suspend: true, template: {spec: {containers: [{name: c}]}}}
)");
  EXPECT_EQ(doc.workload->spec().pod_sets(0).count(), 1);
  EXPECT_EQ(doc.workload->metadata().namespace_(), "");
}

TEST(InputFormatTest, ReadsJsonAndLists) {
  const Document json_doc = ParseClean(R"({
    "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
    "metadata": {"name": "lq", "namespace": "ns"},
    "spec": {"clusterQueue": "cq", "fairSharing": {"weight": 2}}})");
  EXPECT_EQ(
      json_doc.config_object->local_queue().spec().fair_sharing().weight(),
      "2");

  absl::StatusOr<std::vector<Document>> stream = ParseManifests(
      R"({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}
         {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "b"}})");
  ASSERT_TRUE(stream.ok()) << stream.status();
  ASSERT_EQ(stream->size(), 2u);
  EXPECT_EQ((*stream)[1].name, "b");
  EXPECT_EQ((*stream)[1].index, 2);

  absl::StatusOr<std::vector<Document>> list = ParseManifests(R"(
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Namespace, metadata: {name: a}}
- {apiVersion: kueue.x-k8s.io/v1beta1, kind: Topology, metadata: {name: b}}
---
apiVersion: v1
kind: Namespace
metadata: {name: c}
)");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].index, 1);
  EXPECT_TRUE((*list)[0].status.ok());
  EXPECT_EQ((*list)[1].index, 1);
  EXPECT_EQ((*list)[1].status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ((*list)[2].index, 2);
}

// ---------------------------------------------------------------------------
// Output.

TEST(ToKueueJsonTest, UsesV1beta1NamesAndKubernetesConventions) {
  const auto cq = ParseTextProto<v1::ConfigObject>(R"pb(
    cluster_queue {
      metadata {
        name: "cq"
        revision: 7
        creation_timestamp { seconds: 1767323045 }
      }
      spec {
        cohort_name: "org"
        namespace_selector {}
        admission_checks { name: "prov" on_flavors: "a100" }
      }
    })pb");
  const json got = ToKueueJson(cq);
  EXPECT_EQ(got, json::parse(R"({
    "apiVersion": "kueue.x-k8s.io/v1beta1",
    "kind": "ClusterQueue",
    "metadata": {"name": "cq", "resourceVersion": "7",
                 "creationTimestamp": "2026-01-02T03:04:05Z"},
    "spec": {
      "cohort": "org",
      "namespaceSelector": {},
      "admissionChecksStrategy": {
        "admissionChecks": [{"name": "prov", "onFlavors": ["a100"]}]}
    }})"));

  // Absent selector: absent in the output (no namespace may submit).
  const auto no_selector =
      ParseTextProto<v1::ConfigObject>(R"pb(cluster_queue {
                                              metadata { name: "cq" }
                                              spec { stop_policy: "Hold" }
                                            })pb");
  EXPECT_FALSE(ToKueueJson(no_selector)["spec"].contains("namespaceSelector"));

  const auto ns =
      ParseTextProto<v1::ConfigObject>(R"pb(namespace {
                                              metadata {
                                                name: "a"
                                                labels { key: "x" value: "y" }
                                              }
                                            })pb");
  EXPECT_EQ(ToKueueJson(ns),
            json::parse(R"({"apiVersion": "v1", "kind": "Namespace",
                            "metadata": {"name": "a", "labels": {"x": "y"}}})"));

  const auto lq = ParseTextProto<v1::ConfigObject>(R"pb(
    local_queue {
      metadata { name: "lq" namespace: "ns" }
      status {
        flavors_usage {
          name: "f"
          resources { name: "cpu" total: "1" }
        }
        pending_workloads: 1
      }
    })pb");
  EXPECT_EQ(ToKueueJson(lq)["status"], json::parse(R"({
    "flavorUsage": [{"name": "f", "resources": [{"name": "cpu", "total": "1"}]}],
    "pendingWorkloads": 1, "reservingWorkloads": 0, "admittedWorkloads": 0})"));

  EXPECT_TRUE(ToKueueJson(v1::ConfigObject()).is_null());
}

TEST(ToKueueJsonTest, WorkloadStatusShape) {
  const auto wl = ParseTextProto<v1::Workload>(R"pb(
    metadata { name: "w" namespace: "ns" }
    spec {
      queue_name: "q"
      pod_sets {
        name: "main"
        count: 2
        requests { key: "cpu" value: "1" }
      }
    }
    status {
      admission {
        cluster_queue: "cq"
        pod_set_assignments {
          name: "main"
          count: 2
          flavors { key: "cpu" value: "f" }
          resource_usage { key: "cpu" value: "2" }
        }
      }
      conditions {
        type: "Admitted"
        status: "True"
        reason: "Admitted"
        message: "The workload is admitted"
        last_transition_time { seconds: 1767323045 nanos: 500000000 }
      }
    })pb");
  const json got = ToKueueJson(wl);
  EXPECT_EQ(got["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(got["kind"], "Workload");
  EXPECT_EQ(got["spec"]["podSets"][0]["template"], json::parse(R"({
    "spec": {"containers": [{"name": "main",
                             "resources": {"requests": {"cpu": "1"}}}]}})"));
  EXPECT_EQ(got["status"], json::parse(R"({
    "admission": {"clusterQueue": "cq", "podSetAssignments": [
      {"name": "main", "count": 2, "flavors": {"cpu": "f"},
       "resourceUsage": {"cpu": "2"}}]},
    "conditions": [{"type": "Admitted", "status": "True", "reason": "Admitted",
                    "message": "The workload is admitted",
                    "lastTransitionTime": "2026-01-02T03:04:05.5Z"}]})"));
}

TEST(MakeListTest, WrapsItems) {
  EXPECT_EQ(MakeList({json({{"a", 1}}), json({{"b", 2}})}),
            json::parse(R"({"apiVersion": "v1", "kind": "List",
                            "items": [{"a": 1}, {"b": 2}]})"));
  EXPECT_EQ(MakeList({})["items"], json::array());
}

// ---------------------------------------------------------------------------
// Round trips: ParseManifests(ToYaml(ToKueueJson(x))) == x.

struct ConfigRoundTripCase {
  std::string name;
  std::string object;  // v1.ConfigObject text proto
};

void PrintTo(const ConfigRoundTripCase& tc, std::ostream* os) {
  *os << tc.name;
}

class ConfigRoundTripTest
    : public ::testing::TestWithParam<ConfigRoundTripCase> {};

TEST_P(ConfigRoundTripTest, ParseOfPrintedObjectIsTheObject) {
  const auto want = ParseTextProto<v1::ConfigObject>(GetParam().object);
  const std::string yaml = ToYaml(ToKueueJson(want));
  const Document doc = ParseClean(yaml);
  ASSERT_TRUE(doc.config_object.has_value()) << yaml;
  EXPECT_THAT(*doc.config_object, EqualsProto(want)) << yaml;
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, ConfigRoundTripTest,
    ::testing::ValuesIn(std::vector<ConfigRoundTripCase>{
        {.name = "namespace",
         .object = R"pb(namespace {
                          metadata {
                            name: "team-a"
                            labels { key: "env" value: "true" }
                            revision: 3
                          }
                        })pb"},
        {.name = "resource_flavor",
         .object = R"pb(resource_flavor {
                          metadata {
                            name: "spot"
                            uid: "u-1"
                            creation_timestamp { seconds: 1767323045 }
                          }
                          spec {
                            node_labels { key: "instance-type" value: "spot" }
                            node_taints {
                              key: "spot"
                              value: "true"
                              effect: "NoSchedule"
                            }
                            tolerations {
                              key: "spot"
                              operator: "Equal"
                              value: "true"
                              effect: "NoExecute"
                              toleration_seconds: 300
                            }
                            tolerations { operator: "Exists" }
                            topology_name: "default"
                          }
                        })pb"},
        {.name = "resource_flavor_empty_spec",
         .object = R"pb(resource_flavor {
                          metadata { name: "default" }
                          spec {}
                        })pb"},
        {.name = "resource_flavor_no_spec",
         .object = R"pb(resource_flavor { metadata { name: "default" } })pb"},
        {.name = "cluster_queue_everything",
         .object =
             R"pb(cluster_queue {
                    metadata {
                      name: "team-a"
                      uid: "u-1"
                      revision: 42
                      creation_timestamp { seconds: 1767323045 }
                      labels { key: "team" value: "a" }
                      annotations { key: "note" value: "yes" }
                    }
                    spec {
                      resource_groups {
                        covered_resources: "cpu"
                        covered_resources: "memory"
                        flavors {
                          name: "on-demand"
                          resources {
                            name: "cpu"
                            nominal_quota: "10"
                            borrowing_limit: "5"
                            lending_limit: "0"
                          }
                          resources { name: "memory" nominal_quota: "40Gi" }
                        }
                        flavors {
                          name: "spot"
                          resources { name: "cpu" nominal_quota: "1.5" }
                          resources { name: "memory" nominal_quota: "1e3" }
                        }
                      }
                      resource_groups {
                        covered_resources: "nvidia.com/gpu"
                        flavors {
                          name: "a100"
                          resources {
                            name: "nvidia.com/gpu"
                            nominal_quota: "8"
                          }
                        }
                      }
                      cohort_name: "org"
                      queueing_strategy: "StrictFIFO"
                      namespace_selector {
                        match_labels { key: "team" value: "a" }
                        match_expressions {
                          key: "env"
                          operator: "In"
                          values: "prod"
                          values: "16"
                        }
                        match_expressions { key: "x" operator: "Exists" }
                      }
                      flavor_fungibility {
                        when_can_borrow: "TryNextFlavor"
                        when_can_preempt: "TryNextFlavor"
                        preference: "PreemptionOverBorrowing"
                      }
                      preemption {
                        reclaim_within_cohort: "Any"
                        within_cluster_queue: "LowerPriority"
                        borrow_within_cohort {
                          policy: "LowerPriority"
                          max_priority_threshold: 100
                        }
                      }
                      admission_checks { name: "prov" on_flavors: "a100" }
                      admission_checks { name: "gate" }
                      stop_policy: "Hold"
                      fair_sharing { weight: "2" }
                    }
                    status {
                      conditions {
                        type: "Active"
                        status: "True"
                        reason: "Ready"
                        message: "Can admit new workloads"
                        last_transition_time { seconds: 1767323045 nanos: 1000 }
                      }
                      conditions { type: "Other" status: "False" }
                      flavors_reservation {
                        name: "on-demand"
                        resources { name: "cpu" total: "12" borrowed: "2" }
                      }
                      flavors_usage {
                        name: "on-demand"
                        resources { name: "cpu" total: "10" }
                      }
                      pending_workloads: 3
                      reserving_workloads: 2
                      admitted_workloads: 1
                    }
                  })pb"},
        {.name = "cluster_queue_all_namespaces",
         .object = R"pb(cluster_queue {
                          metadata { name: "cq" }
                          spec { namespace_selector {} }
                        })pb"},
        {.name = "cluster_queue_no_namespaces",
         .object = R"pb(cluster_queue {
                          metadata { name: "cq" }
                          spec { queueing_strategy: "BestEffortFIFO" }
                        })pb"},
        {.name = "cluster_queue_empty_sub_objects",
         .object = R"pb(cluster_queue {
                          metadata { name: "cq" }
                          spec {
                            flavor_fungibility {}
                            preemption { borrow_within_cohort {} }
                            fair_sharing {}
                          }
                          status {}
                        })pb"},
        {.name = "cohort", .object = R"pb(cohort {
                                            metadata { name: "org" }
                                            spec {
                                              parent_name: "company"
                                              resource_groups {
                                                covered_resources: "cpu"
                                                flavors {
                                                  name: "on-demand"
                                                  resources {
                                                    name: "cpu"
                                                    nominal_quota: "4"
                                                    lending_limit: "4"
                                                  }
                                                }
                                              }
                                              fair_sharing {}
                                            }
                                          })pb"},
        {.name = "local_queue",
         .object =
             R"pb(local_queue {
                    metadata { name: "lq" namespace: "team-a" revision: 9 }
                    spec {
                      cluster_queue: "team-a"
                      stop_policy: "HoldAndDrain"
                      fair_sharing { weight: "1" }
                    }
                    status {
                      conditions {
                        type: "Active"
                        status: "True"
                        reason: "Ready"
                      }
                      flavors_reservation {
                        name: "f"
                        resources { name: "cpu" total: "3" }
                      }
                      flavors_usage {
                        name: "f"
                        resources { name: "cpu" total: "2" }
                      }
                      pending_workloads: 4
                      admitted_workloads: 2
                    }
                  })pb"},
        {.name = "workload_priority_class",
         .object = R"pb(workload_priority_class {
                          metadata { name: "high" }
                          value: -10
                          description: "true: it is high"
                        })pb"},
        {.name = "admission_check",
         .object =
             R"pb(admission_check {
                    metadata { name: "prov" }
                    spec {
                      controller_name: "kueue.x-k8s.io/provisioning-request"
                      parameters {
                        api_group: "kueue.x-k8s.io"
                        kind: "ProvisioningRequestConfig"
                        name: "cfg"
                      }
                    }
                    status { conditions { type: "Active" status: "True" } }
                  })pb"},
    }),
    [](const auto& info) { return info.param.name; });

TEST(WorkloadRoundTripTest, JobDerivedWorkloadWithStatus) {
  std::vector<Document> docs = ParseExample("seed/training-job.yaml");
  ASSERT_EQ(docs.size(), 1u);
  ASSERT_TRUE(docs[0].workload.has_value());
  v1::Workload want = *docs[0].workload;
  want.mutable_metadata()->set_uid("w-1");
  want.mutable_metadata()->set_revision(12);
  want.mutable_metadata()->mutable_creation_timestamp()->set_seconds(
      1767323045);
  *want.mutable_status() = ParseTextProto<v1::WorkloadStatus>(R"pb(
    admission {
      cluster_queue: "ai-training-queue"
      pod_set_assignments {
        name: "main"
        count: 4
        flavors { key: "nvidia.com/gpu" value: "gpu-a100" }
        resource_usage { key: "nvidia.com/gpu" value: "4" }
      }
    }
    conditions {
      type: "QuotaReserved"
      status: "True"
      reason: "QuotaReserved"
      message: "Quota reserved in ClusterQueue ai-training-queue"
      last_transition_time { seconds: 1767323045 }
    }
    admission_checks { name: "prov" state: "Pending" }
    requeue_state { requeue_at { seconds: 1767323046 } }
    reclaimable_pods { name: "main" count: 2 })pb");
  want.mutable_spec()->set_priority_class_name("production-training");
  want.mutable_spec()->set_priority_class_source(
      "kueue.x-k8s.io/workloadpriorityclass");
  want.mutable_spec()->set_priority(1000);
  want.mutable_spec()->set_active(true);
  want.mutable_spec()->set_maximum_execution_time_seconds(60);
  want.mutable_spec()->mutable_pod_sets(0)->set_min_count(2);

  const std::string yaml = ToYaml(ToKueueJson(want));
  const Document got = ParseClean(yaml);
  ASSERT_TRUE(got.workload.has_value()) << yaml;
  EXPECT_THAT(*got.workload, EqualsProto(want)) << yaml;
}

TEST(WorkloadRoundTripTest, GenerateNameAndEmptyPodSet) {
  const auto want = ParseTextProto<v1::Workload>(R"pb(
    metadata { generate_name: "job-sample-" namespace: "default" }
    spec {
      queue_name: "q"
      pod_sets { name: "main" count: 0 }
    })pb");
  const Document got = ParseClean(ToYaml(ToKueueJson(want)));
  EXPECT_THAT(*got.workload, EqualsProto(want));
}

// kqd answers with a template as text or as a Struct, as asked: printing
// reads either.
TEST(PodSetTemplateJsonTest, ReadsEitherForm) {
  v1::PodSet as_text;
  as_text.set_template_json(R"({"spec": {"restartPolicy": "Never"}})");
  EXPECT_EQ(internal::PodSetTemplateJson(as_text),
            json({{"spec", {{"restartPolicy", "Never"}}}}));
  v1::PodSet as_struct;
  (*(*as_struct.mutable_template_()->mutable_fields())["spec"]
        .mutable_struct_value()
        ->mutable_fields())["restartPolicy"]
      .set_string_value("Never");
  EXPECT_EQ(internal::PodSetTemplateJson(as_struct),
            internal::PodSetTemplateJson(as_text));
  EXPECT_EQ(internal::PodSetTemplateJson(v1::PodSet()), std::nullopt);
  v1::PodSet not_an_object;
  not_an_object.set_template_json("[1]");
  EXPECT_EQ(internal::PodSetTemplateJson(not_an_object), std::nullopt);
}

TEST(WorkloadRoundTripTest, TemplateLessWorkloadKeepsItsDerivedFields) {
  // A workload submitted through the API with requests but no template:
  // the printed template derives back to the same requests and
  // constraints, and printing is stable from then on.
  const auto submitted = ParseTextProto<v1::Workload>(R"pb(
    metadata { name: "w" namespace: "ns" }
    spec {
      queue_name: "q"
      pod_sets {
        name: "workers"
        count: 3
        requests { key: "cpu" value: "1500m" }
        requests { key: "memory" value: "2Gi" }
        node_selector { key: "zone" value: "a" }
        tolerations { key: "gpu" operator: "Exists" }
        required_node_affinity {
          match_expressions { key: "spot" operator: "DoesNotExist" }
        }
      }
    })pb");
  const Document once = ParseClean(ToYaml(ToKueueJson(submitted)));
  ASSERT_TRUE(once.workload.has_value());
  v1::Workload without_template = *once.workload;
  EXPECT_FALSE(without_template.spec().pod_sets(0).template_json().empty());
  without_template.mutable_spec()->mutable_pod_sets(0)->clear_template_json();
  EXPECT_THAT(without_template, EqualsProto(submitted));

  const Document twice = ParseClean(ToYaml(ToKueueJson(*once.workload)));
  EXPECT_THAT(*twice.workload, EqualsProto(*once.workload));
}

TEST(RoundTripTest, ListOfObjects) {
  std::vector<json> items;
  items.push_back(ToKueueJson(ParseTextProto<v1::ConfigObject>(
      R"pb(namespace { metadata { name: "a" } })pb")));
  items.push_back(ToKueueJson(
      ParseTextProto<v1::Workload>(R"pb(metadata { name: "w" namespace: "a" }
                                        spec { queue_name: "q" })pb")));
  absl::StatusOr<std::vector<Document>> docs =
      ParseManifests(ToYaml(MakeList(std::move(items))));
  ASSERT_TRUE(docs.ok()) << docs.status();
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_TRUE((*docs)[0].config_object.has_value());
  EXPECT_TRUE((*docs)[1].workload.has_value());
  EXPECT_EQ((*docs)[1].workload->spec().queue_name(), "q");
}

// ---------------------------------------------------------------------------
// Kueue's Configuration (config.kueue.x-k8s.io).

constexpr char kConfigV1beta1[] =
    "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n";
constexpr char kConfigV1beta2[] =
    "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n";

// Kueue's config/components/manager/controller_manager_config.yaml, the
// Configuration its release manifests ship (comments dropped).
TEST(ConfigurationTest, KueuesShippedManagerConfigParsesCleanly) {
  const Document doc = ParseClean(std::string(kConfigV1beta2) + R"(health:
  healthProbeBindAddress: :8081
metrics:
  bindAddress: :8443
webhook:
  port: 9443
leaderElection:
  leaderElect: true
  resourceName: c1f6bfd2.kueue.x-k8s.io
controller:
  groupKindConcurrency:
    Job.batch: 5
    Pod: 5
    Workload.kueue.x-k8s.io: 10
clientConnection:
  qps: 300
  burst: 500
integrations:
  frameworks:
  - "batch/job"
  - "pod"
)");
  ASSERT_TRUE(doc.configuration.has_value());
  EXPECT_FALSE(doc.config_object.has_value());
  EXPECT_FALSE(doc.workload.has_value());
  EXPECT_EQ(doc.kind, "Configuration");
  EXPECT_EQ(doc.api_version, "config.kueue.x-k8s.io/v1beta2");
  EXPECT_THAT(*doc.configuration, EqualsProto(v1::Configuration()));
}

TEST(ConfigurationTest, KubernetesOnlyFieldsAreIgnoredSilently) {
  for (const char* header : {kConfigV1beta1, kConfigV1beta2}) {
    SCOPED_TRACE(header);
    const Document doc =
        ParseClean(std::string(header) + R"(namespace: kueue-system
manageJobsWithoutQueueName: true
managedJobsNamespaceSelector:
  matchExpressions: [{key: a, operator: NotIn, values: [b]}]
internalCertManagement: {enable: false}
clientConnection: {qps: 300}
integrations: {frameworks: [batch/job]}
queueVisibility: {updateIntervalSeconds: 5}
visibilityServer: {bindPort: 8082}
objectRetentionPolicies: {workloads: {afterFinished: 1h}}
webhook: {port: 9443}
leaderElection: {leaderElect: true}
metrics: {bindAddress: ":8443"}
health: {healthProbeBindAddress: ":8081"}
pprofBindAddress: ":8083"
controller: {groupKindConcurrency: {Pod: 5}}
tls: {minVersion: VersionTLS12}
)");
    ASSERT_TRUE(doc.configuration.has_value());
    EXPECT_THAT(*doc.configuration, EqualsProto(v1::Configuration()));
  }
}

TEST(ConfigurationTest, V1beta2AdmissionSettings) {
  const Document doc = ParseClean(std::string(kConfigV1beta2) + R"(fairSharing:
  preemptionStrategies: [LessThanInitialShare]
resources:
  quotaCheckStrategy: IgnoreUndeclared
  transformations:
  - input: nvidia.com/mig-4g.5gb
    strategy: Replace
    outputs:
      example.com/accelerator-memory: 5Gi
      example.com/accelerator-gpc: 4
  - input: nvidia.com/gpucores
    multiplyBy: nvidia.com/gpu
    outputs: {nvidia.com/total-gpucores: "1"}
)");
  ASSERT_TRUE(doc.configuration.has_value());
  EXPECT_THAT(
      *doc.configuration, EqualsProto(ParseTextProto<v1::Configuration>(R"pb(
        fair_sharing { preemption_strategies: "LessThanInitialShare" }
        resources {
          quota_check_strategy: "IgnoreUndeclared"
          transformations {
            input: "nvidia.com/mig-4g.5gb"
            strategy: "Replace"
            outputs { key: "example.com/accelerator-memory" value: "5Gi" }
            outputs { key: "example.com/accelerator-gpc" value: "4" }
          }
          transformations {
            input: "nvidia.com/gpucores"
            multiply_by: "nvidia.com/gpu"
            outputs { key: "nvidia.com/total-gpucores" value: "1" }
          }
        }
      )pb")));
}

TEST(ConfigurationTest, V1beta2FairSharingIsOnWhenPresent) {
  const Document both = ParseClean(std::string(kConfigV1beta2) +
                                   "fairSharing:\n  preemptionStrategies: "
                                   "[LessThanOrEqualToFinalShare, "
                                   "LessThanInitialShare]\n");
  ASSERT_TRUE(both.configuration.has_value());
  EXPECT_THAT(
      both.configuration->fair_sharing().preemption_strategies(),
      ElementsAre("LessThanOrEqualToFinalShare", "LessThanInitialShare"));

  const Document absent = ParseClean(kConfigV1beta2);
  ASSERT_TRUE(absent.configuration.has_value());
  EXPECT_FALSE(absent.configuration->has_fair_sharing());

  // null is absent, as Kubernetes reads it.
  const Document null =
      ParseClean(std::string(kConfigV1beta2) + "fairSharing: null\n");
  ASSERT_TRUE(null.configuration.has_value());
  EXPECT_FALSE(null.configuration->has_fair_sharing());
}

TEST(ConfigurationTest, V1beta2FairSharingEnableIsAnUnknownField) {
  const Document doc = ParseOne(std::string(kConfigV1beta2) + R"(fairSharing:
  enable: false
  preemptionStrategies: [LessThanOrEqualToFinalShare]
)");
  ASSERT_TRUE(doc.status.ok()) << doc.status;
  EXPECT_THAT(doc.warnings,
              ElementsAre("unknown field \"fairSharing.enable\""));
  // v1beta2 has no switch: the section's presence turns fair sharing on.
  ASSERT_TRUE(doc.configuration.has_value());
  EXPECT_TRUE(doc.configuration->has_fair_sharing());
}

TEST(ConfigurationTest, V1beta1FairSharingNeedsEnable) {
  // enable: true without strategies: Kueue's v1beta1 default, both, which
  // the proto spells as an empty list.
  const Document on =
      ParseClean(std::string(kConfigV1beta1) + "fairSharing: {enable: true}\n");
  ASSERT_TRUE(on.configuration.has_value());
  ASSERT_TRUE(on.configuration->has_fair_sharing());
  EXPECT_THAT(on.configuration->fair_sharing().preemption_strategies(),
              IsEmpty());

  const Document on_with_strategies =
      ParseClean(std::string(kConfigV1beta1) +
                 "fairSharing:\n  enable: true\n  preemptionStrategies: "
                 "[LessThanOrEqualToFinalShare]\n");
  ASSERT_TRUE(on_with_strategies.configuration.has_value());
  EXPECT_THAT(
      on_with_strategies.configuration->fair_sharing().preemption_strategies(),
      ElementsAre("LessThanOrEqualToFinalShare"));

  // Off: enable false or absent, whatever the strategies say.
  for (const std::string fair_sharing :
       {"fairSharing: {enable: false, preemptionStrategies: "
        "[LessThanInitialShare]}\n",
        "fairSharing: {preemptionStrategies: [LessThanInitialShare]}\n",
        "fairSharing: {}\n"}) {
    SCOPED_TRACE(fair_sharing);
    const Document off = ParseClean(std::string(kConfigV1beta1) + fair_sharing);
    ASSERT_TRUE(off.configuration.has_value());
    EXPECT_FALSE(off.configuration->has_fair_sharing());
  }
}

TEST(ConfigurationTest, V1beta1ResourcesHaveNoQuotaCheckStrategy) {
  const Document doc = ParseOne(std::string(kConfigV1beta1) + R"(resources:
  quotaCheckStrategy: IgnoreUndeclared
  excludeResourcePrefixes: [networking.example.com/]
  transformations:
  - input: cpu
    strategy: Retain
    outputs: {cpu_credits: 1}
)");
  ASSERT_TRUE(doc.status.ok()) << doc.status;
  EXPECT_THAT(doc.warnings,
              ElementsAre("unknown field \"resources.quotaCheckStrategy\""));
  ASSERT_TRUE(doc.configuration.has_value());
  EXPECT_THAT(*doc.configuration,
              EqualsProto(ParseTextProto<v1::Configuration>(R"pb(
                resources {
                  exclude_resource_prefixes: "networking.example.com/"
                  transformations {
                    input: "cpu"
                    strategy: "Retain"
                    outputs { key: "cpu_credits" value: "1" }
                  }
                }
              )pb")));
}

TEST(ConfigurationTest, AdmissionFieldsKqIgnoresAreWarnedAbout) {
  const Document doc =
      ParseOne(std::string(kConfigV1beta2) + R"(waitForPodsReady:
  timeout: 5m
admissionFairSharing:
  usageHalfLifeTime: 168h
featureGates: {TopologyAwareScheduling: true}
resources:
  deviceClassMappings:
  - name: example.com/gpu
    deviceClassNames: [gpu.example.com]
)");
  ASSERT_TRUE(doc.status.ok()) << doc.status;
  EXPECT_THAT(
      doc.warnings,
      ElementsAre("waitForPodsReady: ignored by kq (kq has no pods to wait "
                  "for; runners report readiness through the launcher API "
                  "instead)",
                  "admissionFairSharing: ignored by kq (admission fair "
                  "sharing is not supported)",
                  "featureGates: ignored by kq (kq runs with Kueue's default "
                  "feature gates)",
                  "resources.deviceClassMappings: ignored by kq (dynamic "
                  "resource allocation is not supported)"));
  ASSERT_TRUE(doc.configuration.has_value());
  EXPECT_THAT(*doc.configuration,
              EqualsProto(ParseTextProto<v1::Configuration>("resources {}")));
}

TEST(ConfigurationTest, V1beta1WaitForPodsReadyIsWarnedAboutOnlyWhenEnabled) {
  // Kueue's v1beta1 conversion drops waitForPodsReady unless enable: true.
  for (const std::string off :
       {"waitForPodsReady: {enable: false, timeout: 5m}\n",
        "waitForPodsReady: {timeout: 5m}\n"}) {
    SCOPED_TRACE(off);
    ParseClean(std::string(kConfigV1beta1) + off);
  }
  const Document on = ParseOne(std::string(kConfigV1beta1) +
                               "waitForPodsReady: {enable: true}\n");
  ASSERT_TRUE(on.status.ok()) << on.status;
  EXPECT_THAT(on.warnings,
              ElementsAre(::testing::StartsWith(
                  "waitForPodsReady: ignored by kq (kq has no pods")));
}

TEST(ConfigurationTest, UnknownFieldsAreWarnedAbout) {
  const Document doc =
      ParseOne(std::string(kConfigV1beta2) + R"(metadata: {name: x}
fairSharingTypo: {}
resources:
  excludedResourcePrefixes: [a/]
  transformations:
  - input: cpu
    output: {credits: 1}
)");
  ASSERT_TRUE(doc.status.ok()) << doc.status;
  EXPECT_THAT(
      doc.warnings,
      UnorderedElementsAre(
          "unknown field \"metadata\"", "unknown field \"fairSharingTypo\"",
          "unknown field \"resources.excludedResourcePrefixes\"",
          "unknown field \"resources.transformations[0].output\""));
  ASSERT_TRUE(doc.configuration.has_value());
  EXPECT_THAT(*doc.configuration,
              EqualsProto(ParseTextProto<v1::Configuration>(
                  R"pb(resources { transformations { input: "cpu" } })pb")));
}

TEST(ConfigurationTest, SitsInAFileWithOtherDocuments) {
  absl::StatusOr<std::vector<Document>> docs =
      ParseManifests(std::string(kConfigV1beta2) + R"(resources:
  excludeResourcePrefixes: [example.com/]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
)");
  ASSERT_TRUE(docs.ok()) << docs.status();
  ASSERT_EQ(docs->size(), 2u);
  ASSERT_TRUE((*docs)[0].configuration.has_value());
  EXPECT_THAT((*docs)[0].configuration->resources().exclude_resource_prefixes(),
              ElementsAre("example.com/"));
  EXPECT_FALSE((*docs)[1].configuration.has_value());
  EXPECT_TRUE((*docs)[1].config_object.has_value());
}

struct ConfigurationErrorCase {
  std::string name;
  std::string yaml;
  std::string want_message;  // InvalidArgument
};

void PrintTo(const ConfigurationErrorCase& tc, std::ostream* os) {
  *os << tc.name;
}

class ConfigurationErrorTest
    : public ::testing::TestWithParam<ConfigurationErrorCase> {};

TEST_P(ConfigurationErrorTest, ReportsTheFieldAndTheReason) {
  const ConfigurationErrorCase& tc = GetParam();
  const Document doc = ParseOne(tc.yaml);
  EXPECT_EQ(doc.status.code(), absl::StatusCode::kInvalidArgument)
      << doc.status;
  EXPECT_EQ(doc.status.message(), tc.want_message);
  // Nothing half-read is handed on.
  EXPECT_FALSE(doc.configuration.has_value());
  EXPECT_FALSE(doc.config_object.has_value());
  EXPECT_FALSE(doc.workload.has_value());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ConfigurationErrorTest,
    ::testing::ValuesIn(std::vector<ConfigurationErrorCase>{
        {.name = "unsupported_api_version",
         .yaml = "apiVersion: config.kueue.x-k8s.io/v1\nkind: Configuration\n",
         .want_message = "apiVersion: Configuration is not served in "
                         "config.kueue.x-k8s.io/v1; use "
                         "config.kueue.x-k8s.io/v1beta1 or "
                         "config.kueue.x-k8s.io/v1beta2"},
        {.name = "v1alpha1_api_version",
         .yaml = "apiVersion: config.kueue.x-k8s.io/v1alpha1\n"
                 "kind: Configuration\nresources: {}\n",
         .want_message = "apiVersion: Configuration is not served in "
                         "config.kueue.x-k8s.io/v1alpha1; use "
                         "config.kueue.x-k8s.io/v1beta1 or "
                         "config.kueue.x-k8s.io/v1beta2"},
        {.name = "v1beta2_fair_sharing_without_strategies",
         .yaml = std::string(kConfigV1beta2) + "fairSharing: {}\n",
         .want_message = "fairSharing.preemptionStrategies: required "
                         "(v1beta2 has no default; v1beta1's is "
                         "[LessThanOrEqualToFinalShare, "
                         "LessThanInitialShare])"},
        {.name = "v1beta2_fair_sharing_with_empty_strategies",
         .yaml = std::string(kConfigV1beta2) +
                 "fairSharing: {preemptionStrategies: []}\n",
         .want_message = "fairSharing.preemptionStrategies: required "
                         "(v1beta2 has no default; v1beta1's is "
                         "[LessThanOrEqualToFinalShare, "
                         "LessThanInitialShare])"},
        {.name = "fair_sharing_is_a_list",
         .yaml = std::string(kConfigV1beta2) + "fairSharing: []\n",
         .want_message = "fairSharing: must be an object, got a list"},
        {.name = "strategies_are_a_string",
         .yaml = std::string(kConfigV1beta2) +
                 "fairSharing: {preemptionStrategies: LessThanInitialShare}\n",
         .want_message = "fairSharing.preemptionStrategies: must be a list, "
                         "got a string"},
        {.name = "strategy_is_a_number",
         .yaml = std::string(kConfigV1beta2) +
                 "fairSharing:\n  preemptionStrategies: "
                 "[LessThanOrEqualToFinalShare, 2]\n",
         .want_message = "fairSharing.preemptionStrategies[1]: must be a "
                         "string, got a number"},
        {.name = "v1beta1_enable_is_a_string",
         .yaml = std::string(kConfigV1beta1) +
                 "fairSharing: {enable: \"yes\"}\n",
         .want_message = "fairSharing.enable: must be a boolean, got a string"},
        {.name = "resources_is_a_list",
         .yaml = std::string(kConfigV1beta2) + "resources: []\n",
         .want_message = "resources: must be an object, got a list"},
        {.name = "quota_check_strategy_is_a_list",
         .yaml = std::string(kConfigV1beta2) +
                 "resources: {quotaCheckStrategy: [IgnoreUndeclared]}\n",
         .want_message = "resources.quotaCheckStrategy: must be a string, got "
                         "a list"},
        {.name = "excluded_prefix_is_an_object",
         .yaml = std::string(kConfigV1beta1) +
                 "resources: {excludeResourcePrefixes: [a/, {b: c}]}\n",
         .want_message = "resources.excludeResourcePrefixes[1]: must be a "
                         "string, got an object"},
        {.name = "transformations_is_an_object",
         .yaml = std::string(kConfigV1beta2) +
                 "resources: {transformations: {input: cpu}}\n",
         .want_message = "resources.transformations: must be a list, got an "
                         "object"},
        {.name = "transformation_without_input",
         .yaml = std::string(kConfigV1beta2) + R"(resources:
  transformations:
  - input: cpu
  - strategy: Replace
    outputs: {credits: 1}
)",
         .want_message = "resources.transformations[1].input: required"},
        {.name = "transformation_strategy_is_a_boolean",
         .yaml = std::string(kConfigV1beta2) + R"(resources:
  transformations: [{input: cpu, strategy: true}]
)",
         .want_message = "resources.transformations[0].strategy: must be a "
                         "string, got a boolean"},
        {.name = "transformation_output_is_a_list",
         .yaml = std::string(kConfigV1beta1) + R"(resources:
  transformations:
  - input: nvidia.com/mig-1g.5gb
    outputs: {example.com/credits: [10]}
)",
         .want_message = "resources.transformations[0].outputs[example.com/"
                         "credits]: must be a quantity string or number, got "
                         "a list"},
        {.name = "transformation_outputs_is_a_list",
         .yaml = std::string(kConfigV1beta2) + R"(resources:
  transformations: [{input: cpu, outputs: [credits]}]
)",
         .want_message = "resources.transformations[0].outputs: must be an "
                         "object, got a list"},
    }),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// ProvisioningRequestConfig and podSetUpdates.

// Every field of Kueue's ProvisioningRequestConfigSpec, in both served
// versions (they spell it alike).
class ProvisioningRequestConfigTest
    : public ::testing::TestWithParam<std::string> {};

TEST_P(ProvisioningRequestConfigTest, ReadsEveryField) {
  const Document doc =
      ParseClean(absl::StrCat("apiVersion: kueue.x-k8s.io/", GetParam(), R"(
kind: ProvisioningRequestConfig
metadata:
  name: gpu-provision-config
spec:
  provisioningClassName: queued-provisioning.gke.io
  parameters:
    ValidUntilSeconds: "3600"
    BookingDurationSeconds: "600"
  managedResources: [nvidia.com/gpu, example.com/tpu]
  retryStrategy:
    backoffLimitCount: 5
    backoffBaseSeconds: 30
  podSetUpdates:
    nodeSelector:
    - key: cloud.google.com/gke-nodepool
      valueFromProvisioningClassDetail: NodePoolName
  podSetMergePolicy: IdenticalWorkloadSchedulingRequirements
)"));
  EXPECT_EQ(doc.kind, "ProvisioningRequestConfig");
  ASSERT_TRUE(doc.config_object.has_value());
  EXPECT_THAT(
      *doc.config_object, EqualsProto(ParseTextProto<v1::ConfigObject>(R"pb(
        provisioning_request_config {
          metadata { name: "gpu-provision-config" }
          spec {
            provisioning_class_name: "queued-provisioning.gke.io"
            parameters { key: "ValidUntilSeconds" value: "3600" }
            parameters { key: "BookingDurationSeconds" value: "600" }
            managed_resources: "nvidia.com/gpu"
            managed_resources: "example.com/tpu"
            retry_strategy { backoff_limit_count: 5 backoff_base_seconds: 30 }
            pod_set_updates_node_selector {
              key: "cloud.google.com/gke-nodepool"
              value_from_provisioning_class_detail: "NodePoolName"
            }
            pod_set_merge_policy: "IdenticalWorkloadSchedulingRequirements"
          }
        })pb")));
}

INSTANTIATE_TEST_SUITE_P(Versions, ProvisioningRequestConfigTest,
                         ::testing::Values("v1beta1", "v1beta2"));

TEST(ProvisioningRequestConfigWarningsTest, UnknownFieldsAreReported) {
  const Document doc = ParseOne(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ProvisioningRequestConfig
metadata: {name: c}
spec:
  provisioningClassName: c
  retryStrategy: {backoffLimitCount: 1, backoffLimit: 2}
  podSetUpdates: {nodeSelector: [{key: k, valueFromProvisioningClassDetail: v,
                                  value: x}], labels: {}}
  podSetMergePolicies: IdenticalPodTemplates
)");
  ASSERT_TRUE(doc.status.ok()) << doc.status;
  EXPECT_THAT(doc.warnings,
              UnorderedElementsAre(
                  "unknown field \"spec.retryStrategy.backoffLimit\"",
                  "unknown field \"spec.podSetUpdates.nodeSelector[0].value\"",
                  "unknown field \"spec.podSetUpdates.labels\"",
                  "unknown field \"spec.podSetMergePolicies\""));
}

INSTANTIATE_TEST_SUITE_P(
    ProvisioningCases, ParseErrorTest,
    ::testing::ValuesIn(std::vector<ErrorCase>{
        {.name = "backoff_limit_count_is_a_string",
         .yaml = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ProvisioningRequestConfig
metadata: {name: c}
spec: {provisioningClassName: c, retryStrategy: {backoffLimitCount: three}}
)",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "spec.retryStrategy.backoffLimitCount: must be an "
                         "integer, got a string"},
        {.name = "parameter_is_a_list",
         .yaml = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ProvisioningRequestConfig
metadata: {name: c}
spec: {provisioningClassName: c, parameters: {p: [1]}}
)",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "spec.parameters[p]: must be a string, got a list"},
        {.name = "node_selector_updates_is_an_object",
         .yaml = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ProvisioningRequestConfig
metadata: {name: c}
spec:
  provisioningClassName: c
  podSetUpdates: {nodeSelector: {key: k}}
)",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message =
             "spec.podSetUpdates.nodeSelector: must be a list, got an object"},
        {.name = "pod_set_update_labels_is_a_list",
         .yaml = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {namespace: ns, name: w}
spec: {queueName: q}
status:
  admissionChecks:
  - name: prov
    state: Ready
    podSetUpdates: [{name: main, labels: [a]}]
)",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "status.admissionChecks[0].podSetUpdates[0].labels: "
                         "must be an object, got a list"},
    }),
    [](const auto& info) { return info.param.name; });

TEST(WorkloadTest, AdmissionCheckPodSetUpdates) {
  // Kueue's shape of what the provisioning controller writes.
  const Document doc = ParseClean(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {namespace: ns, name: w}
spec:
  queueName: q
  podSets: [{name: ps1, count: 1}, {name: ps2, count: 1}]
status:
  admissionChecks:
  - name: prov
    state: Ready
    message: ""
    lastTransitionTime: "2026-01-02T03:04:05Z"
    podSetUpdates:
    - name: ps1
      annotations:
        autoscaling.x-k8s.io/consume-provisioning-request: w-prov-1
        autoscaling.x-k8s.io/provisioning-class-name: check-capacity.autoscaling.x-k8s.io
      nodeSelector: {cloud.google.com/gke-nodepool: pool-a}
      labels: {l1: l1v}
      tolerations:
      - {key: t1, operator: Equal, value: t1v, effect: NoExecute,
         tolerationSeconds: 5}
    - name: ps2
)");
  ASSERT_TRUE(doc.workload.has_value());
  EXPECT_THAT(doc.workload->status(),
              EqualsProto(ParseTextProto<v1::WorkloadStatus>(R"pb(
                admission_checks {
                  name: "prov"
                  state: "Ready"
                  last_transition_time { seconds: 1767323045 }
                  pod_set_updates {
                    name: "ps1"
                    labels { key: "l1" value: "l1v" }
                    annotations {
                      key: "autoscaling.x-k8s.io/consume-provisioning-request"
                      value: "w-prov-1"
                    }
                    annotations {
                      key: "autoscaling.x-k8s.io/provisioning-class-name"
                      value: "check-capacity.autoscaling.x-k8s.io"
                    }
                    node_selector {
                      key: "cloud.google.com/gke-nodepool"
                      value: "pool-a"
                    }
                    tolerations {
                      key: "t1"
                      operator: "Equal"
                      value: "t1v"
                      effect: "NoExecute"
                      toleration_seconds: 5
                    }
                  }
                  pod_set_updates { name: "ps2" }
                })pb")));
}

TEST(ToKueueJsonTest, ProvisioningRequestConfigShape) {
  const json got = ToKueueJson(ParseTextProto<v1::ConfigObject>(R"pb(
    provisioning_request_config {
      metadata { name: "c" revision: 4 }
      spec {
        provisioning_class_name: "check-capacity.autoscaling.x-k8s.io"
        parameters { key: "p" value: "v" }
        managed_resources: "nvidia.com/gpu"
        retry_strategy {
          backoff_limit_count: 3
          backoff_base_seconds: 60
          backoff_max_seconds: 1800
        }
        pod_set_updates_node_selector {
          key: "zone"
          value_from_provisioning_class_detail: "Zone"
        }
        pod_set_merge_policy: "IdenticalPodTemplates"
      }
    })pb"));
  EXPECT_EQ(got, json::parse(R"({
    "apiVersion": "kueue.x-k8s.io/v1beta1",
    "kind": "ProvisioningRequestConfig",
    "metadata": {"name": "c", "resourceVersion": "4"},
    "spec": {
      "provisioningClassName": "check-capacity.autoscaling.x-k8s.io",
      "parameters": {"p": "v"},
      "managedResources": ["nvidia.com/gpu"],
      "retryStrategy": {"backoffLimitCount": 3, "backoffBaseSeconds": 60,
                        "backoffMaxSeconds": 1800},
      "podSetUpdates": {"nodeSelector": [
        {"key": "zone", "valueFromProvisioningClassDetail": "Zone"}]},
      "podSetMergePolicy": "IdenticalPodTemplates"
    }
  })"));
}

INSTANTIATE_TEST_SUITE_P(
    ProvisioningKinds, ConfigRoundTripTest,
    ::testing::ValuesIn(std::vector<ConfigRoundTripCase>{
        {.name = "provisioning_request_config",
         .object =
             R"pb(provisioning_request_config {
                    metadata { name: "cfg" revision: 2 }
                    spec {
                      provisioning_class_name: "queued-provisioning.gke.io"
                      parameters { key: "a" value: "1" }
                      parameters { key: "b" value: "" }
                      managed_resources: "nvidia.com/gpu"
                      retry_strategy { backoff_limit_count: 0 }
                      pod_set_updates_node_selector {
                        key: "k"
                        value_from_provisioning_class_detail: "d"
                      }
                      pod_set_merge_policy: "IdenticalPodTemplates"
                    }
                  })pb"},
        {.name = "provisioning_request_config_class_only",
         .object = R"pb(provisioning_request_config {
                          metadata { name: "cfg" }
                          spec { provisioning_class_name: "c" }
                        })pb"},
    }),
    [](const auto& info) { return info.param.name; });

TEST(WorkloadRoundTripTest, PodSetUpdatesOfAReadyCheck) {
  const auto want = ParseTextProto<v1::Workload>(R"pb(
    metadata { name: "w" namespace: "ns" }
    spec {
      queue_name: "q"
      pod_sets { name: "main" count: 1 }
    }
    status {
      admission_checks {
        name: "prov"
        state: "Ready"
        message: "provisioned"
        pod_set_updates {
          name: "main"
          labels { key: "a" value: "b" }
          annotations { key: "c" value: "" }
          node_selector { key: "pool" value: "p1" }
          tolerations { key: "t" operator: "Exists" effect: "NoSchedule" }
        }
        pod_set_updates { name: "main" }
      }
      admission_checks { name: "other" state: "Pending" }
    })pb");
  const std::string yaml = ToYaml(ToKueueJson(want));
  const Document got = ParseClean(yaml);
  ASSERT_TRUE(got.workload.has_value()) << yaml;
  EXPECT_THAT(*got.workload, EqualsProto(want)) << yaml;
}

}  // namespace
}  // namespace kq::manifest
