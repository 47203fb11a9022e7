// Tests for Kubernetes' apimachinery name and label rules, as kq words them.

#include "server/core/apimachinery.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/testing/status_matchers.h"

namespace kq {
namespace {

using ::kq::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(ApimachineryTest, Dns1123SubdomainsAndLabels) {
  EXPECT_TRUE(IsLabel("gpu-a100"));
  EXPECT_FALSE(IsLabel("GPU"));
  EXPECT_FALSE(IsLabel("-a"));
  EXPECT_TRUE(MatchesDns1123Subdomain("kueue.x-k8s.io"));
  EXPECT_FALSE(MatchesDns1123Subdomain("kueue..io"));
  EXPECT_FALSE(MatchesDns1123Subdomain("Kueue.io"));
}

TEST(ApimachineryTest, QualifiedNamesAsKubernetesWordsThem) {
  EXPECT_THAT(QualifiedNameErrors("nvidia.com/gpu"), IsEmpty());
  EXPECT_THAT(QualifiedNameErrors("/gpu"),
              ElementsAre("prefix part must be non-empty"));
  EXPECT_THAT(QualifiedNameErrors("a/b/c"),
              ElementsAre(HasSubstr("with an optional DNS subdomain prefix")));
  EXPECT_THAT(QualifiedNameErrors("x/-y"),
              ElementsAre(HasSubstr("regex used for validation is "
                                    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?"
                                    "[A-Za-z0-9]'")));
}

TEST(ApimachineryTest, LabelValues) {
  EXPECT_THAT(LabelValueErrors(""), IsEmpty());
  EXPECT_THAT(LabelValueErrors("my_value"), IsEmpty());
  EXPECT_THAT(LabelValueErrors(std::string(64, 'a')),
              ElementsAre("must be no more than 63 bytes"));
}

TEST(ApimachineryTest, FieldErrors) {
  EXPECT_THAT(InvalidValue("spec.x", "v", "bad"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "spec.x: Invalid value: \"v\": bad"));
  EXPECT_THAT(TooMany("spec.y", 17, 16),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "spec.y: Too many: 17: must have at most 16 items"));
  EXPECT_THAT(
      RequiredValue("spec.z"),
      StatusIs(absl::StatusCode::kInvalidArgument, "spec.z: Required value"));
}

}  // namespace
}  // namespace kq
