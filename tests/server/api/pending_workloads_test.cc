// QueueService.PendingWorkloads (server/api/queue_service.cc) over a real
// engine on a MemoryStore, calling the handler as gRPC would: the request
// checks, the conversion, and the engine's errors as gRPC statuses.

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "kq/v1/queue_service.pb.h"

#include "server/api/services.h"
#include "server/engine/engine.h"
#include "server/store/memory_store.h"
#include "tests/testing/builders.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/status_matchers.h"

namespace kq::api {
namespace {

using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::FakeClock;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::WorkloadBuilder;

class PendingWorkloadsRpcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_ = std::make_unique<engine::Engine>(store_, clock_);
    ASSERT_OK(engine_->Start());
    std::vector<Workload> workloads;
    for (const char* name : {"a", "b", "c"}) {
      workloads.push_back(WorkloadBuilder(name)
                              .Namespace("ns")
                              .Queue("lq")
                              .PodSet("main", 1)
                              .Request("cpu", "1")
                              .Build());
    }
    ASSERT_OK(policy_files_.Load());
    // No quota: all three stay pending.
    ASSERT_OK(engine_
                  ->Apply({ClusterQueueBuilder("cq").Build(),
                           LocalQueueBuilder("ns", "lq", "cq").Build()},
                          std::move(workloads))
                  .status());
    service_ = std::make_unique<QueueServiceImpl>(*engine_, grpc_access_);
  }

  grpc::Status Call(const v1::PendingWorkloadsRequest& request,
                    v1::PendingWorkloadsResponse* response) {
    grpc::ServerContext context;
    return service_->PendingWorkloads(&context, &request, response);
  }

  store::MemoryStore store_;
  FakeClock clock_;
  std::unique_ptr<engine::Engine> engine_;
  // Authorization off: this tests the call, not who may make it.
  auth::PolicyFiles policy_files_{"", "", nullptr};
  auth::Access access_{auth::AccessOptions{}, &policy_files_, nullptr};
  auth::GrpcAccess grpc_access_{access_, nullptr};
  std::unique_ptr<QueueServiceImpl> service_;
};

TEST_F(PendingWorkloadsRpcTest, ListsAClusterQueuePage) {
  v1::PendingWorkloadsRequest request;
  request.set_cluster_queue("cq");
  request.set_offset(1);
  v1::PendingWorkloadsResponse response;
  ASSERT_TRUE(Call(request, &response).ok());
  ASSERT_EQ(response.items_size(), 2);
  const v1::PendingWorkload& b = response.items(0);
  EXPECT_EQ(b.metadata().name(), "b");
  EXPECT_EQ(b.metadata().namespace_(), "ns");
  EXPECT_FALSE(b.metadata().uid().empty());
  EXPECT_EQ(google::protobuf::util::TimeUtil::TimestampToSeconds(
                b.metadata().creation_timestamp()),
            1'700'000'000);
  EXPECT_EQ(b.local_queue_name(), "lq");
  EXPECT_EQ(b.position_in_cluster_queue(), 1);
  EXPECT_EQ(b.position_in_local_queue(), 1);
  EXPECT_EQ(response.items(1).metadata().name(), "c");
  EXPECT_GT(response.revision(), 0);
}

TEST_F(PendingWorkloadsRpcTest, ListsALocalQueuePage) {
  v1::PendingWorkloadsRequest request;
  request.set_namespace_("ns");
  request.set_local_queue("lq");
  request.set_limit(1);
  v1::PendingWorkloadsResponse response;
  ASSERT_TRUE(Call(request, &response).ok());
  ASSERT_EQ(response.items_size(), 1);
  EXPECT_EQ(response.items(0).metadata().name(), "a");
  EXPECT_EQ(response.items(0).position_in_local_queue(), 0);
}

struct BadRequestCase {
  std::string name;
  std::string cluster_queue, namespace_name, local_queue;
  int64_t offset = 0;
  int64_t limit = 0;
  grpc::StatusCode want_code;
  std::string want_message;
};

void PrintTo(const BadRequestCase& c, std::ostream* os) { *os << c.name; }

class PendingWorkloadsRpcErrorTest
    : public PendingWorkloadsRpcTest,
      public ::testing::WithParamInterface<BadRequestCase> {};

TEST_P(PendingWorkloadsRpcErrorTest, Refused) {
  const BadRequestCase& tc = GetParam();
  v1::PendingWorkloadsRequest request;
  request.set_cluster_queue(tc.cluster_queue);
  request.set_namespace_(tc.namespace_name);
  request.set_local_queue(tc.local_queue);
  request.set_offset(tc.offset);
  request.set_limit(tc.limit);
  v1::PendingWorkloadsResponse response;
  grpc::Status status = Call(request, &response);
  EXPECT_EQ(status.error_code(), tc.want_code);
  EXPECT_EQ(status.error_message(), tc.want_message);
  EXPECT_EQ(response.items_size(), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Rpc, PendingWorkloadsRpcErrorTest,
    ::testing::ValuesIn(std::vector<BadRequestCase>{
        {.name = "no_queue",
         .want_code = grpc::StatusCode::INVALID_ARGUMENT,
         .want_message =
             "cluster_queue: required, or namespace and local_queue"},
        {.name = "both_queues",
         .cluster_queue = "cq",
         .namespace_name = "ns",
         .local_queue = "lq",
         .want_code = grpc::StatusCode::INVALID_ARGUMENT,
         .want_message =
             "local_queue: must be empty when cluster_queue is set"},
        {.name = "cluster_queue_with_namespace",
         .cluster_queue = "cq",
         .namespace_name = "ns",
         .want_code = grpc::StatusCode::INVALID_ARGUMENT,
         .want_message = "namespace: must be empty when cluster_queue is set "
                         "(a ClusterQueue has no namespace)"},
        {.name = "namespace_without_local_queue",
         .namespace_name = "ns",
         .want_code = grpc::StatusCode::INVALID_ARGUMENT,
         .want_message = "local_queue: required with namespace"},
        {.name = "local_queue_without_namespace",
         .local_queue = "lq",
         .want_code = grpc::StatusCode::INVALID_ARGUMENT,
         .want_message = "namespace: required with local_queue"},
        {.name = "negative_offset",
         .cluster_queue = "cq",
         .offset = -1,
         .want_code = grpc::StatusCode::INVALID_ARGUMENT,
         .want_message = "offset: must not be negative"},
        {.name = "negative_limit",
         .namespace_name = "ns",
         .local_queue = "lq",
         .limit = -1,
         .want_code = grpc::StatusCode::INVALID_ARGUMENT,
         .want_message = "limit: must not be negative"},
        {.name = "limit_too_large",
         .cluster_queue = "cq",
         .limit = 100'001,
         .want_code = grpc::StatusCode::INVALID_ARGUMENT,
         .want_message = "limit: must be at most 100000"},
        {.name = "unknown_cluster_queue",
         .cluster_queue = "nope",
         .want_code = grpc::StatusCode::NOT_FOUND,
         .want_message = "ClusterQueue \"nope\" not found"},
        {.name = "unknown_local_queue",
         .namespace_name = "other",
         .local_queue = "lq",
         .want_code = grpc::StatusCode::NOT_FOUND,
         .want_message = "LocalQueue \"other/lq\" not found"},
    }),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kq::api
