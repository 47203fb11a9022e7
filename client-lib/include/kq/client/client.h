#pragma once

// The C++ client of kqd. One public header; gRPC stays behind it.
//
// Example:
//   auto client = kq::client::NewGrpcClient({.target = "127.0.0.1:7070"});
//   absl::StatusOr<kq::v1::SubmitWorkloadResponse> r =
//       client->SubmitWorkload(workload);

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kq/v1/admin_service.pb.h"
#include "kq/v1/queue_service.pb.h"

namespace kq::client {

struct ClientOptions {
  // host:port of kqd.
  std::string target = "127.0.0.1:7070";
  // Deadline of each unary call.
  absl::Duration deadline = absl::Seconds(30);
};

// A connection to one kqd. Thread-safe: calls may be made concurrently.
// Every call returns kqd's status code and message unchanged
// (INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION, ...), or UNAVAILABLE /
// DEADLINE_EXCEEDED when kqd cannot be reached in time.
class Client {
 public:
  virtual ~Client() = default;

  // AdminService.
  virtual absl::StatusOr<v1::ApplyResponse> Apply(
      const v1::ApplyRequest& request) = 0;
  virtual absl::Status Delete(const std::string& kind,
                              const std::string& namespace_name,
                              const std::string& name) = 0;
  virtual absl::StatusOr<v1::ConfigObject> GetObject(
      const std::string& kind, const std::string& namespace_name,
      const std::string& name) = 0;
  virtual absl::StatusOr<v1::ListObjectsResponse> ListObjects(
      const std::string& kind, const std::string& namespace_name) = 0;
  // Sets one admission check's state on a workload and returns the workload
  // as it is afterwards. NotFound for an unknown workload or check,
  // FailedPrecondition when it finished, InvalidArgument for an unknown
  // state.
  virtual absl::StatusOr<v1::Workload> SetAdmissionCheckState(
      const v1::SetAdmissionCheckStateRequest& request) = 0;

  // QueueService.
  virtual absl::StatusOr<v1::SubmitWorkloadResponse> SubmitWorkload(
      const v1::Workload& workload) = 0;
  virtual absl::StatusOr<v1::GetWorkloadResponse> GetWorkload(
      const std::string& namespace_name, const std::string& name) = 0;
  virtual absl::StatusOr<v1::ListWorkloadsResponse> ListWorkloads(
      const v1::ListWorkloadsRequest& request) = 0;
  virtual absl::StatusOr<v1::Workload> CancelWorkload(
      const std::string& namespace_name, const std::string& name) = 0;
  virtual absl::StatusOr<v1::Workload> FinishWorkload(
      const std::string& namespace_name, const std::string& name,
      bool succeeded, const std::string& message) = 0;

  // Streams events to `on_event` until it returns false (then returns OK) or
  // the stream fails (returns its status). Blocks the calling thread.
  virtual absl::Status Watch(
      const v1::WatchRequest& request,
      const std::function<bool(const v1::WatchEvent&)>& on_event) = 0;
};

// Creates a client over an insecure gRPC channel to options.target.
std::unique_ptr<Client> NewGrpcClient(const ClientOptions& options);

}  // namespace kq::client
