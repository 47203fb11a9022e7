#include "server/api/in_flight_calls.h"

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace kq::api {
namespace {

// Holds every call it gets open until the test releases it.
class HoldingService : public grpc::CallbackGenericService {
 public:
  class Held : public grpc::ServerGenericBidiReactor {
   public:
    void Release() {
      Finish(grpc::Status(grpc::StatusCode::ABORTED, "released"));
    }
    void OnDone() override { delete this; }
  };

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    auto* held = new Held;
    std::lock_guard<std::mutex> lock(mu_);
    held_[context->method()] = held;
    return held;
  }

  // The call of `method` being held, or nullptr.
  Held* Taken(const std::string& method) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = held_.find(method);
    if (it == held_.end()) return nullptr;
    Held* held = it->second;
    held_.erase(it);
    return held;
  }

 private:
  std::mutex mu_;
  std::map<std::string, Held*> held_;
};

class InFlightCallsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterCallbackGenericService(&service_);
    std::vector<
        std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
        counters;
    counters.push_back(calls_.NewCounter());
    builder.experimental().SetInterceptorCreators(std::move(counters));
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = std::make_unique<grpc::GenericStub>(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                            grpc::InsecureChannelCredentials()));
  }
  void TearDown() override { server_->Shutdown(); }

  // Starts a call of `method` and returns the server's hold on it, once
  // the server has it.
  HoldingService::Held* Call(const std::string& method,
                             std::promise<grpc::Status>* answer) {
    auto context = std::make_shared<grpc::ClientContext>();
    grpc::Slice body("request");
    auto request = std::make_shared<grpc::ByteBuffer>(&body, 1);
    auto response = std::make_shared<grpc::ByteBuffer>();
    stub_->UnaryCall(context.get(), method, grpc::StubOptions(), request.get(),
                     response.get(),
                     [context, request, response, answer](grpc::Status s) {
                       answer->set_value(s);
                     });
    for (int i = 0; i < 1000; ++i) {
      if (HoldingService::Held* held = service_.Taken(method)) return held;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return nullptr;
  }

  InFlightCalls calls_;
  HoldingService service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<grpc::GenericStub> stub_;
};

TEST_F(InFlightCallsTest, NoneInFlightReturnsAtOnce) {
  EXPECT_EQ(calls_.WaitUntilNone(absl::Seconds(30)), 0);
}

TEST_F(InFlightCallsTest, WaitsForAKqCallUntilItsStatusIsSent) {
  std::promise<grpc::Status> answer;
  HoldingService::Held* held = Call("/kq.v1.QueueService/Held", &answer);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(calls_.WaitUntilNone(absl::Milliseconds(50)), 1);

  std::future<int> waited = std::async(std::launch::async, [this] {
    return calls_.WaitUntilNone(absl::Seconds(30));
  });
  EXPECT_EQ(waited.wait_for(std::chrono::milliseconds(100)),
            std::future_status::timeout);
  held->Release();
  EXPECT_EQ(waited.get(), 0);
  EXPECT_EQ(answer.get_future().get().error_code(), grpc::StatusCode::ABORTED);
}

// Health checks, reflection and the like are gRPC's, not kqd's work: a
// stopping kqd does not wait for them.
TEST_F(InFlightCallsTest, OtherServicesCallsAreNotCounted) {
  std::promise<grpc::Status> answer;
  HoldingService::Held* held = Call("/grpc.health.v1.Health/Watch", &answer);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(calls_.WaitUntilNone(absl::Seconds(30)), 0);
  held->Release();
  answer.get_future().wait();
}

}  // namespace
}  // namespace kq::api
