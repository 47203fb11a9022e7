// Tests for SpecShapeDigest, the pod-template part of Kueue's scheduling
// equivalence hash.

#include "server/core/spec_shape.h"

#include <string>

#include "gtest/gtest.h"

namespace kq {
namespace {

// Kueue's SpecShape: what of a pod spec makes two workloads schedule alike.
TEST(SpecShapeDigestTest, CountsTheSchedulingShapeOnly) {
  const std::string base = R"({"metadata":{"labels":{"job-name":"a"}},
    "spec":{"containers":[{"name":"c","image":"busybox:1",
      "resources":{"requests":{"cpu":"1","memory":"1Gi"},"limits":{"cpu":"2"}},
      "ports":[{"containerPort":80}]}],
      "nodeSelector":{"pool":"x"},"restartPolicy":"Never"}})";
  const uint64_t digest = SpecShapeDigest(base);
  EXPECT_NE(digest, 0u);
  // Not counted: labels, names, images, limits, restart policy, and the
  // order of members.
  EXPECT_EQ(SpecShapeDigest(R"({"spec":{"restartPolicy":"OnFailure",
      "nodeSelector":{"pool":"x"},"containers":[{"ports":[{"containerPort":80}],
      "image":"other","name":"d","resources":{"limits":{"cpu":"4"},
      "requests":{"memory":"1Gi","cpu":"1"}}}]},
      "metadata":{"labels":{"job-name":"b"}}})"),
            digest);
  // Counted: requests, ports, how requests split over containers, node
  // selectors, tolerations, runtimeClassName, init containers.
  for (
      const char* other : {
          R"({"spec":{"containers":[{"resources":{"requests":{"cpu":"2","memory":"1Gi"}},"ports":[{"containerPort":80}]}],"nodeSelector":{"pool":"x"}}})",
          R"({"spec":{"containers":[{"resources":{"requests":{"cpu":"1","memory":"1Gi"}},"ports":[{"containerPort":81}]}],"nodeSelector":{"pool":"x"}}})",
          R"({"spec":{"containers":[{"resources":{"requests":{"cpu":"1","memory":"1Gi"}},"ports":[{"containerPort":80}]}],"nodeSelector":{"pool":"y"}}})",
          R"({"spec":{"containers":[{"resources":{"requests":{"cpu":"1","memory":"1Gi"}},"ports":[{"containerPort":80}]}],"nodeSelector":{"pool":"x"},"runtimeClassName":"gvisor"}})",
          R"({"spec":{"containers":[{"resources":{"requests":{"cpu":"1","memory":"1Gi"}},"ports":[{"containerPort":80}]}],"nodeSelector":{"pool":"x"},"tolerations":[{"key":"k","operator":"Exists"}]}})",
          R"({"spec":{"containers":[{"resources":{"requests":{"cpu":"500m"}},"ports":[{"containerPort":80}]},{"resources":{"requests":{"cpu":"500m","memory":"1Gi"}}}],"nodeSelector":{"pool":"x"}}})",
          R"({"spec":{"initContainers":[{"resources":{"requests":{"cpu":"1"}}}],"containers":[{"resources":{"requests":{"cpu":"1","memory":"1Gi"}},"ports":[{"containerPort":80}]}],"nodeSelector":{"pool":"x"}}})",
      }) {
    SCOPED_TRACE(other);
    EXPECT_NE(SpecShapeDigest(other), digest);
  }
  EXPECT_EQ(SpecShapeDigest("not json"), 0u);
}

}  // namespace
}  // namespace kq
