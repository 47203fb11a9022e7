// Client's defaults: Connect for clients with nothing to connect; the
// cancellable Watch and WatchResumable for clients that implement only the
// plain forms: they cannot interrupt a stream waiting for its next event, so
// they end it at the next event instead; and PendingWorkloads, which such a
// client does not serve.

#include "kq/client/client.h"

#include <functional>
#include <stop_token>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kq::client {
namespace {

// Wraps `on_event` so that the stream ends at the first event that arrives
// after `cancel` was requested; `*cancelled` tells that end from the
// caller's own.
std::function<bool(const v1::WatchEvent&)> EndOnCancel(
    const std::function<bool(const v1::WatchEvent&)>& on_event,
    const std::stop_token& cancel, bool* cancelled) {
  return [&on_event, cancel, cancelled](const v1::WatchEvent& event) {
    if (cancel.stop_requested()) {
      *cancelled = true;
      return false;
    }
    return on_event(event);
  };
}

}  // namespace

absl::Status Client::Connect(absl::Duration /*timeout*/) {
  return absl::OkStatus();
}

absl::Status Client::Watch(
    const v1::WatchRequest& request,
    const std::function<bool(const v1::WatchEvent&)>& on_event,
    std::stop_token cancel) {
  if (cancel.stop_requested()) return absl::CancelledError("watch cancelled");
  bool cancelled = false;
  absl::Status status =
      Watch(request, EndOnCancel(on_event, cancel, &cancelled));
  return cancelled ? absl::CancelledError("watch cancelled") : status;
}

absl::Status Client::WatchResumable(
    const v1::WatchRequest& request,
    const std::function<bool(const v1::WatchEvent&)>& on_event,
    WatchProgress* progress, std::stop_token cancel) {
  if (cancel.stop_requested()) return absl::CancelledError("watch cancelled");
  bool cancelled = false;
  absl::Status status = WatchResumable(
      request, EndOnCancel(on_event, cancel, &cancelled), progress);
  return cancelled ? absl::CancelledError("watch cancelled") : status;
}

absl::StatusOr<v1::Workload> Client::SetNominatedClusters(
    const v1::SetNominatedClustersRequest&) {
  return absl::UnimplementedError(
      "SetNominatedClusters: not implemented by this client");
}

absl::StatusOr<v1::RemoteResponse> Client::UpsertRemote(
    const v1::UpsertRemoteRequest&) {
  return absl::UnimplementedError(
      "UpsertRemote: not implemented by this client");
}

absl::StatusOr<v1::RemoteResponse> Client::CallRemote(
    RemoteVerb, const v1::RemoteRequest&) {
  return absl::UnimplementedError("CallRemote: not implemented by this client");
}

absl::StatusOr<v1::PendingWorkloadsResponse> Client::PendingWorkloads(
    const v1::PendingWorkloadsRequest&) {
  return absl::UnimplementedError(
      "PendingWorkloads: not implemented by this client");
}

}  // namespace kq::client
