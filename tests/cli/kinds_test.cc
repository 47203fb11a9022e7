#include "cli/kinds.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "kq/v1/objects.pb.h"

#include "proto/util/config_object.h"
#include "tests/cli/test_objects.h"

namespace kq::cli {
namespace {

struct AliasCase {
  std::string text;
  Kind want;
};

TEST(ResolveKindTest, AcceptsKubectlForms) {
  const std::vector<AliasCase> cases = {
      {"clusterqueue", Kind::kClusterQueue},
      {"clusterqueues", Kind::kClusterQueue},
      {"cq", Kind::kClusterQueue},
      {"ClusterQueue", Kind::kClusterQueue},
      {"clusterqueues.kueue.x-k8s.io", Kind::kClusterQueue},
      {"localqueue", Kind::kLocalQueue},
      {"lq", Kind::kLocalQueue},
      {"queues", Kind::kLocalQueue},
      {"resourceflavors", Kind::kResourceFlavor},
      {"rf", Kind::kResourceFlavor},
      {"flavor", Kind::kResourceFlavor},
      {"cohorts", Kind::kCohort},
      {"co", Kind::kCohort},
      {"workloadpriorityclasses", Kind::kWorkloadPriorityClass},
      {"wpc", Kind::kWorkloadPriorityClass},
      {"admissionchecks", Kind::kAdmissionCheck},
      {"ac", Kind::kAdmissionCheck},
      {"provisioningrequestconfigs", Kind::kProvisioningRequestConfig},
      {"ProvisioningRequestConfig", Kind::kProvisioningRequestConfig},
      {"prc", Kind::kProvisioningRequestConfig},
      {"provreqconfig", Kind::kProvisioningRequestConfig},
      {"provreqconfigs", Kind::kProvisioningRequestConfig},
      {"provisioningrequestconfigs.kueue.x-k8s.io",
       Kind::kProvisioningRequestConfig},
      {"multikueueconfigs", Kind::kMultiKueueConfig},
      {"MultiKueueConfig", Kind::kMultiKueueConfig},
      {"mkconf", Kind::kMultiKueueConfig},
      {"multikueueclusters", Kind::kMultiKueueCluster},
      {"mkc", Kind::kMultiKueueCluster},
      {"multikueueclusters.kueue.x-k8s.io", Kind::kMultiKueueCluster},
      {"workloads", Kind::kWorkload},
      {"wl", Kind::kWorkload},
      {"kwl", Kind::kWorkload},
      {"ns", Kind::kNamespace},
      {"namespaces", Kind::kNamespace},
  };
  for (const AliasCase& tc : cases) {
    SCOPED_TRACE(tc.text);
    absl::StatusOr<KindInfo> info = ResolveKind(tc.text);
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->kind, tc.want);
  }
}

TEST(ResolveKindTest, RejectsUnknownKinds) {
  absl::StatusOr<KindInfo> info = ResolveKind("pods");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(info.status().message(),
            "the server doesn't have a resource type \"pods\"");
}

TEST(KindsTest, QualifiedNamesAreKubectls) {
  EXPECT_EQ(QualifiedName(Kind::kClusterQueue, "a"),
            "clusterqueue.kueue.x-k8s.io/a");
  EXPECT_EQ(QualifiedName(Kind::kNamespace, "team-ml"), "namespace/team-ml");
  EXPECT_EQ(QualifiedName(Kind::kWorkload, "w"), "workload.kueue.x-k8s.io/w");
}

TEST(KindsTest, MetadataOfEveryOneofMember) {
  EXPECT_EQ(proto_util::MetaOf(testing::GpuFlavor()).name(), "gpu-a100");
  EXPECT_EQ(proto_util::MetaOf(testing::MlJobsQueue()).namespace_(), "team-ml");
  EXPECT_EQ(proto_util::MetaOf(testing::TeamMlNamespace()).name(), "team-ml");
  EXPECT_EQ(proto_util::MetaOf(v1::ConfigObject()).name(), "");
  EXPECT_EQ(*KindOf(testing::ProvisioningCheck()), Kind::kAdmissionCheck);
  EXPECT_EQ(*KindOf(testing::GpuProvisionConfig()),
            Kind::kProvisioningRequestConfig);
  EXPECT_EQ(proto_util::MetaOf(testing::GpuProvisionConfig()).name(),
            "gpu-provision-config");
  v1::ConfigObject config = testing::GpuProvisionConfig();
  proto_util::MutableMetaOf(&config)->set_name("renamed");
  EXPECT_EQ(config.provisioning_request_config().metadata().name(), "renamed");
  EXPECT_EQ(QualifiedName(Kind::kProvisioningRequestConfig, "c"),
            "provisioningrequestconfig.kueue.x-k8s.io/c");
  EXPECT_FALSE(InfoOf(Kind::kProvisioningRequestConfig).namespaced);
  EXPECT_FALSE(KindOf(v1::ConfigObject()).ok());
}

}  // namespace
}  // namespace kq::cli
