#pragma once

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace kq::api {

// The one place absl::Status becomes grpc::Status: same code, same message.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace kq::api
