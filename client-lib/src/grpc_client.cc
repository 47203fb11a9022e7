// GrpcClient: kq::client::Client over generated gRPC stubs. Every call but
// SubmitWorkloadAsync (gRPC's callback API) is a blocking call; each has a
// per-call deadline; grpc::Status becomes absl::Status in FromGrpcStatus.
// Idempotent calls are retried on UNAVAILABLE (Backoff); calls that change
// state are not, since a lost answer does not mean the change was not made.
// Every call, whatever its path (Unary, the async submission, a watch
// stream, Connect's probe), gets its ClientContext from Authenticate, which
// adds the bearer token and impersonation metadata, or refuses the call
// when the credential options cannot be used.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "google/protobuf/duration.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "grpcpp/support/status.h"
#include "kq/v1/admin_service.grpc.pb.h"
#include "kq/v1/federation_service.grpc.pb.h"
#include "kq/v1/queue_service.grpc.pb.h"

#include "client-lib/src/credentials.h"
#include "kq/client/client.h"
#include "proto/util/config_object.h"

namespace kq::client {
namespace {

// Maps a gRPC status to the absl::Status with the same canonical code and
// message. Both enumerations use the canonical google.rpc.Code numbering, so
// the cast is exact; the server side does the inverse in ToGrpcStatus.
absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) {
    return absl::OkStatus();
  }
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

int ToMillis(absl::Duration d) {
  return static_cast<int>(
      std::clamp<int64_t>(absl::ToInt64Milliseconds(d), 1, INT32_MAX));
}

google::protobuf::Duration ToProtoDuration(absl::Duration d) {
  google::protobuf::Duration out;
  const int64_t nanos = absl::ToInt64Nanoseconds(d);
  out.set_seconds(nanos / 1000000000);
  out.set_nanos(static_cast<int32_t>(nanos % 1000000000));
  return out;
}

// A LocalQueue name no LocalQueue has (names are DNS labels, without
// dots): listing its workloads answers with none, and the revision.
constexpr char kNoSuchLocalQueue[] = "kq.revision-pin";

absl::Status WatchCancelled() {
  return absl::CancelledError("watch cancelled");
}

// How often a pause that waits for the channel looks at its cancellation:
// gRPC's wait for a connection cannot be interrupted.
constexpr absl::Duration kCancelPoll = absl::Milliseconds(50);

// Exponential backoff between attempts of one retried operation. The budget
// runs from the first failure after construction or the last Reset() (the
// last progress), so a long healthy stream does not use it up. `pause`
// spends the time between attempts; it may return early when an attempt is
// worth making sooner.
class Backoff {
 public:
  using Pause = std::function<void(absl::Time until)>;
  Backoff(const ClientOptions& options, Pause pause)
      : initial_(
            std::max(options.retry_initial_backoff, absl::Milliseconds(1))),
        max_(std::max(options.retry_max_backoff, initial_)),
        budget_(options.retry_budget),
        pause_(std::move(pause)),
        delay_(initial_) {}

  // Progress was made: the next failure starts a fresh budget.
  void Reset() {
    failing_since_.reset();
    delay_ = initial_;
  }

  // Pauses before the next attempt and returns true, or returns false when
  // the budget (or `give_up`) passed. The pause never runs past either.
  bool Wait(absl::Time give_up = absl::InfiniteFuture()) {
    const absl::Time now = absl::Now();
    if (!failing_since_.has_value()) failing_since_ = now;
    const absl::Time end = std::min(*failing_since_ + budget_, give_up);
    if (now >= end) return false;
    // Up to 20% jitter so clients that lost the same kqd do not all come
    // back at the same instant.
    thread_local std::minstd_rand random(std::random_device{}());
    std::uniform_real_distribution<double> jitter(0.8, 1.0);
    pause_(std::min(now + delay_ * jitter(random), end));
    delay_ = std::min(delay_ * 2, max_);
    return true;
  }

 private:
  const absl::Duration initial_;
  const absl::Duration max_;
  const absl::Duration budget_;
  const Pause pause_;
  absl::Duration delay_;
  std::optional<absl::Time> failing_since_;
};

// A broken stream is worth reopening; an answer about the request is not.
// OK counts as broken too: kqd only ends a watch on its own when shutting
// down.
bool StreamRetryable(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kResourceExhausted:
      return true;
    default:
      return false;
  }
}

// What identifies an object within one revision: kind, namespace, name.
using EventKey = std::tuple<std::string, std::string, std::string>;

EventKey KeyOf(const v1::WatchEvent& event) {
  if (event.has_workload()) {
    const v1::ObjectMeta& meta = event.workload().metadata();
    return {"Workload", meta.namespace_(), meta.name()};
  }
  const v1::ConfigObject& o = event.config_object();
  const v1::ObjectMeta& meta = proto_util::MetaOf(o);
  // The oneof field number tells the kinds apart.
  return {absl::StrCat(static_cast<int>(o.kind_case())), meta.namespace_(),
          meta.name()};
}

// The gRPC implementation of Client. Thread-safe: the stubs and channel are
// thread-safe and each call uses its own ClientContext.
class GrpcClient : public Client {
 public:
  explicit GrpcClient(const ClientOptions& options)
      : options_(options),
        setup_(internal::ValidateCredentialOptions(options)) {
    std::shared_ptr<grpc::ChannelCredentials> credentials =
        grpc::InsecureChannelCredentials();
    if (setup_.ok() && !options.tls_ca_file.empty()) {
      absl::StatusOr<internal::TlsFiles> files =
          internal::ReadTlsFiles(options);
      if (files.ok()) {
        grpc::SslCredentialsOptions ssl;
        ssl.pem_root_certs = std::move(files->ca);
        ssl.pem_cert_chain = std::move(files->cert);
        ssl.pem_private_key = std::move(files->key);
        credentials = grpc::SslCredentials(ssl);
      } else {
        setup_ = files.status();
      }
    }
    if (setup_.ok() && !options.token_file.empty()) {
      token_file_ = std::make_unique<internal::TokenFile>(options.token_file);
    }
    // With setup_ failed the channel is never used (Authenticate refuses
    // every call first), but the stubs need one.
    channel_ = grpc::CreateCustomChannel(options.target, credentials,
                                         ChannelArgs(options));
    admin_ = v1::AdminService::NewStub(channel_);
    queue_ = v1::QueueService::NewStub(channel_);
    federation_ = v1::FederationService::NewStub(channel_);
  }

  absl::Status Connect(absl::Duration timeout) override {
    // Credentials first: a file that cannot be read is the answer, before
    // any connection attempt.
    grpc::ClientContext probe;
    if (absl::Status usable = Authenticate(&probe); !usable.ok()) {
      return usable;
    }
    const absl::Time deadline = absl::Now() + timeout;
    grpc_connectivity_state state = channel_->GetState(/*try_to_connect=*/true);
    while (state != GRPC_CHANNEL_READY) {
      // pick_first reports TRANSIENT_FAILURE only once every address the
      // name resolved to failed, so this is an answer, not a step on the way.
      if (state == GRPC_CHANNEL_TRANSIENT_FAILURE ||
          state == GRPC_CHANNEL_SHUTDOWN) {
        return WhyUnreachable(deadline);
      }
      if (!channel_->WaitForStateChange(state, absl::ToChronoTime(deadline))) {
        return absl::DeadlineExceededError(
            absl::StrCat("no connection to ", options_.target, " within ",
                         absl::FormatDuration(timeout)));
      }
      state = channel_->GetState(/*try_to_connect=*/true);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<v1::ApplyResponse> Apply(
      const v1::ApplyRequest& request) override {
    return Once<v1::ApplyResponse>(
        options_.deadline, request,
        [this](auto* context, auto& req, auto* resp) {
          return admin_->Apply(context, req, resp);
        });
  }

  absl::Status Delete(const std::string& kind,
                      const std::string& namespace_name,
                      const std::string& name) override {
    v1::DeleteRequest request;
    request.set_kind(kind);
    request.set_namespace_(namespace_name);
    request.set_name(name);
    return Once<v1::DeleteResponse>(
               options_.deadline, request,
               [this](auto* context, auto& req, auto* resp) {
                 return admin_->Delete(context, req, resp);
               })
        .status();
  }

  absl::StatusOr<v1::ConfigObject> GetObject(const std::string& kind,
                                             const std::string& namespace_name,
                                             const std::string& name) override {
    v1::GetObjectRequest request;
    request.set_kind(kind);
    request.set_namespace_(namespace_name);
    request.set_name(name);
    absl::StatusOr<v1::GetObjectResponse> response =
        Retried<v1::GetObjectResponse>(
            request, [this](auto* context, auto& req, auto* resp) {
              return admin_->GetObject(context, req, resp);
            });
    if (!response.ok()) {
      return response.status();
    }
    return std::move(*response->mutable_object());
  }

  absl::StatusOr<v1::ListObjectsResponse> ListObjects(
      const std::string& kind, const std::string& namespace_name) override {
    v1::ListObjectsRequest request;
    request.set_kind(kind);
    request.set_namespace_(namespace_name);
    return Retried<v1::ListObjectsResponse>(
        request, [this](auto* context, auto& req, auto* resp) {
          return admin_->ListObjects(context, req, resp);
        });
  }

  absl::StatusOr<v1::Workload> SetAdmissionCheckState(
      const v1::SetAdmissionCheckStateRequest& request) override {
    absl::StatusOr<v1::SetAdmissionCheckStateResponse> response =
        Once<v1::SetAdmissionCheckStateResponse>(
            options_.deadline, request,
            [this](auto* context, auto& req, auto* resp) {
              return admin_->SetAdmissionCheckState(context, req, resp);
            });
    if (!response.ok()) {
      return response.status();
    }
    return std::move(*response->mutable_workload());
  }

  absl::StatusOr<v1::Workload> Preempt(
      const v1::PreemptRequest& request) override {
    absl::StatusOr<v1::PreemptResponse> response =
        Once<v1::PreemptResponse>(options_.deadline, request,
                                  [this](auto* context, auto& req, auto* resp) {
                                    return admin_->Preempt(context, req, resp);
                                  });
    if (!response.ok()) {
      return response.status();
    }
    return std::move(*response->mutable_workload());
  }

  absl::StatusOr<v1::Workload> SetWorkloadActive(
      const std::string& namespace_name, const std::string& name,
      bool active) override {
    v1::SetWorkloadActiveRequest request;
    request.set_namespace_(namespace_name);
    request.set_name(name);
    request.set_active(active);
    absl::StatusOr<v1::SetWorkloadActiveResponse> response =
        Once<v1::SetWorkloadActiveResponse>(
            options_.deadline, request,
            [this](auto* context, auto& req, auto* resp) {
              return admin_->SetWorkloadActive(context, req, resp);
            });
    if (!response.ok()) {
      return response.status();
    }
    return std::move(*response->mutable_workload());
  }

  absl::StatusOr<v1::Workload> SetReclaimablePods(
      const std::string& namespace_name, const std::string& name,
      const std::map<std::string, int32_t>& reclaimable_pods) override {
    v1::SetReclaimablePodsRequest request;
    request.set_namespace_(namespace_name);
    request.set_name(name);
    for (const auto& [pod_set, count] : reclaimable_pods) {
      v1::ReclaimablePod* pod = request.add_reclaimable_pods();
      pod->set_name(pod_set);
      pod->set_count(count);
    }
    // The same report twice leaves the same state: safe to retry.
    absl::StatusOr<v1::SetReclaimablePodsResponse> response =
        Retried<v1::SetReclaimablePodsResponse>(
            request, [this](auto* context, auto& req, auto* resp) {
              return queue_->SetReclaimablePods(context, req, resp);
            });
    if (!response.ok()) {
      return response.status();
    }
    return std::move(*response->mutable_workload());
  }

  absl::StatusOr<v1::ConfigObject> SetStopPolicy(
      const v1::SetStopPolicyRequest& request) override {
    absl::StatusOr<v1::SetStopPolicyResponse> response =
        Once<v1::SetStopPolicyResponse>(
            options_.deadline, request,
            [this](auto* context, auto& req, auto* resp) {
              return admin_->SetStopPolicy(context, req, resp);
            });
    if (!response.ok()) {
      return response.status();
    }
    return std::move(*response->mutable_object());
  }

  using Client::SubmitWorkload;
  absl::StatusOr<v1::SubmitWorkloadResponse> SubmitWorkload(
      const v1::SubmitWorkloadRequest& request) override {
    return Once<v1::SubmitWorkloadResponse>(
        options_.deadline, request,
        [this](auto* context, auto& req, auto* resp) {
          return queue_->SubmitWorkload(context, req, resp);
        });
  }

  void SubmitWorkloadAsync(v1::SubmitWorkloadRequest request,
                           SubmitDone done) override {
    Async<v1::SubmitWorkloadResponse>(
        std::move(request), std::move(done),
        [this](auto* context, auto* req, auto* resp, auto callback) {
          queue_->async()->SubmitWorkload(context, req, resp,
                                          std::move(callback));
        });
  }

  void FinishWorkloadAsync(v1::FinishWorkloadRequest request,
                           FinishDone done) override {
    Async<v1::FinishWorkloadResponse>(
        std::move(request),
        [done = std::move(done)](
            absl::StatusOr<v1::FinishWorkloadResponse> response) {
          if (!response.ok()) return done(response.status());
          done(std::move(*response->mutable_workload()));
        },
        [this](auto* context, auto* req, auto* resp, auto callback) {
          queue_->async()->FinishWorkload(context, req, resp,
                                          std::move(callback));
        });
  }

  using Client::GetWorkload;
  absl::StatusOr<v1::GetWorkloadResponse> GetWorkload(
      const v1::GetWorkloadRequest& request) override {
    return Retried<v1::GetWorkloadResponse>(
        request, [this](auto* context, auto& req, auto* resp) {
          return queue_->GetWorkload(context, req, resp);
        });
  }

  absl::StatusOr<v1::ListWorkloadsResponse> ListWorkloads(
      const v1::ListWorkloadsRequest& request) override {
    return Retried<v1::ListWorkloadsResponse>(
        request, [this](auto* context, auto& req, auto* resp) {
          return queue_->ListWorkloads(context, req, resp);
        });
  }

  absl::StatusOr<v1::Workload> CancelWorkload(
      const std::string& namespace_name, const std::string& name) override {
    v1::CancelWorkloadRequest request;
    request.set_namespace_(namespace_name);
    request.set_name(name);
    absl::StatusOr<v1::CancelWorkloadResponse> response =
        Once<v1::CancelWorkloadResponse>(
            options_.deadline, request,
            [this](auto* context, auto& req, auto* resp) {
              return queue_->CancelWorkload(context, req, resp);
            });
    if (!response.ok()) {
      return response.status();
    }
    return std::move(*response->mutable_workload());
  }

  absl::StatusOr<v1::Workload> FinishWorkload(
      const std::string& namespace_name, const std::string& name,
      bool succeeded, const std::string& message) override {
    v1::FinishWorkloadRequest request;
    request.set_namespace_(namespace_name);
    request.set_name(name);
    request.set_succeeded(succeeded);
    request.set_message(message);
    absl::StatusOr<v1::FinishWorkloadResponse> response =
        Once<v1::FinishWorkloadResponse>(
            options_.deadline, request,
            [this](auto* context, auto& req, auto* resp) {
              return queue_->FinishWorkload(context, req, resp);
            });
    if (!response.ok()) {
      return response.status();
    }
    return std::move(*response->mutable_workload());
  }

  absl::StatusOr<v1::AdmitResponse> Admit(
      const v1::AdmitRequest& request) override {
    const absl::Duration deadline = AdmitTimeout(request) + options_.deadline;
    auto method = [this](auto* context, auto& req, auto* resp) {
      return queue_->Admit(context, req, resp);
    };
    // Waiting for an existing workload changes nothing; a submission that
    // may or may not have been stored is the caller's to retry (see
    // WaitAdmitted).
    if (request.has_workload()) {
      return Once<v1::AdmitResponse>(deadline, request, method);
    }
    return Retried<v1::AdmitResponse>(request, method, deadline);
  }

  absl::StatusOr<v1::AdmitResponse> WaitAdmitted(
      v1::AdmitRequest request, absl::Duration timeout,
      const std::function<void(const v1::AdmitResponse&)>& on_pending,
      absl::Duration poll) override {
    const absl::Time give_up = timeout == absl::InfiniteDuration()
                                   ? absl::InfiniteFuture()
                                   : absl::Now() + timeout;
    if (poll <= absl::ZeroDuration()) poll = absl::Seconds(30);
    // Retrying the submitting call is safe only when the workload has a
    // name: kqd answers an Admit carrying a workload whose name exists by
    // waiting for it, so a retry after a lost answer does not submit twice.
    // A generateName workload would get a second name, so its submission
    // is not retried.
    const bool submission_retryable =
        !request.has_workload() ||
        !request.workload().metadata().name().empty();
    Backoff backoff = NewBackoff();
    std::string last_reason;
    while (true) {
      const absl::Duration remaining = give_up - absl::Now();
      if (remaining < absl::Milliseconds(1)) {
        return absl::DeadlineExceededError(absl::StrCat(
            "not admitted within ", absl::FormatDuration(timeout),
            last_reason.empty() ? "" : absl::StrCat(": ", last_reason)));
      }
      const absl::Duration wait = std::min(poll, remaining);
      *request.mutable_timeout() = ToProtoDuration(wait);
      absl::StatusOr<v1::AdmitResponse> response = Unary<v1::AdmitResponse>(
          wait + options_.deadline, request,
          [this](auto* context, auto& req, auto* resp) {
            return queue_->Admit(context, req, resp);
          });
      if (!response.ok()) {
        // A kqd shutting down may cancel a waiting Admit (this client never
        // cancels its own), which is as good as unreachable.
        const absl::StatusCode code = response.status().code();
        const bool retryable =
            (code == absl::StatusCode::kUnavailable ||
             code == absl::StatusCode::kCancelled) &&
            (!request.has_workload() || submission_retryable);
        if (retryable && backoff.Wait(give_up)) continue;
        return response.status();
      }
      backoff.Reset();
      if (request.has_workload()) {
        // Submitted (or found): wait for it by name from now on.
        request.set_namespace_(response->workload().metadata().namespace_());
        request.set_name(response->workload().metadata().name());
        request.clear_workload();
      }
      if (response->outcome() != v1::AdmitResponse::PENDING) {
        return response;
      }
      last_reason =
          response->message().empty()
              ? response->reason()
              : absl::StrCat(response->reason(), ": ", response->message());
      if (on_pending) on_pending(*response);
    }
  }

  absl::StatusOr<v1::HeartbeatResponse> Heartbeat(
      const v1::HeartbeatRequest& request) override {
    // A renewal repeats harmlessly, and so does a stop confirmation: kqd
    // answers OK to stopped=true once the quota is released.
    return Retried<v1::HeartbeatResponse>(
        request, [this](auto* context, auto& req, auto* resp) {
          return queue_->Heartbeat(context, req, resp);
        });
  }

  absl::StatusOr<v1::ExplainResponse> Explain(
      const std::string& namespace_name, const std::string& name) override {
    v1::ExplainRequest request;
    request.set_namespace_(namespace_name);
    request.set_name(name);
    return Retried<v1::ExplainResponse>(
        request, [this](auto* context, auto& req, auto* resp) {
          return queue_->Explain(context, req, resp);
        });
  }

  absl::StatusOr<v1::SimulateResponse> Simulate(
      const v1::SimulateRequest& request) override {
    return Retried<v1::SimulateResponse>(
        request, [this](auto* context, auto& req, auto* resp) {
          return queue_->Simulate(context, req, resp);
        });
  }

  absl::StatusOr<v1::Workload> SetNominatedClusters(
      const v1::SetNominatedClustersRequest& request) override {
    absl::StatusOr<v1::SetNominatedClustersResponse> response =
        Once<v1::SetNominatedClustersResponse>(
            options_.deadline, request,
            [this](auto* context, auto& req, auto* resp) {
              return admin_->SetNominatedClusters(context, req, resp);
            });
    if (!response.ok()) return response.status();
    return std::move(*response->mutable_workload());
  }

  absl::StatusOr<v1::RemoteResponse> UpsertRemote(
      const v1::UpsertRemoteRequest& request) override {
    return Retried<v1::RemoteResponse>(
        request, [this](auto* context, auto& req, auto* resp) {
          return federation_->UpsertRemote(context, req, resp);
        });
  }

  absl::StatusOr<v1::RemoteResponse> CallRemote(
      RemoteVerb verb, const v1::RemoteRequest& request) override {
    return Retried<v1::RemoteResponse>(
        request, [this, verb](auto* context, auto& req, auto* resp) {
          switch (verb) {
            case RemoteVerb::kDelete:
              return federation_->DeleteRemote(context, req, resp);
            case RemoteVerb::kBind:
              return federation_->BindRemote(context, req, resp);
            case RemoteVerb::kRenew:
              return federation_->RenewRemote(context, req, resp);
            case RemoteVerb::kDeactivate:
              break;
          }
          return federation_->DeactivateRemote(context, req, resp);
        });
  }

  absl::StatusOr<v1::PendingWorkloadsResponse> PendingWorkloads(
      const v1::PendingWorkloadsRequest& request) override {
    return Retried<v1::PendingWorkloadsResponse>(
        request, [this](auto* context, auto& req, auto* resp) {
          return queue_->PendingWorkloads(context, req, resp);
        });
  }

  absl::Status Watch(
      const v1::WatchRequest& request,
      const std::function<bool(const v1::WatchEvent&)>& on_event) override {
    return Watch(request, on_event, std::stop_token());
  }

  absl::Status Watch(const v1::WatchRequest& request,
                     const std::function<bool(const v1::WatchEvent&)>& on_event,
                     std::stop_token cancel) override {
    bool stopped = false;
    absl::Status status = WatchOnce(request, on_event, cancel, &stopped);
    if (stopped) return absl::OkStatus();
    return cancel.stop_requested() ? WatchCancelled() : status;
  }

  absl::Status WatchResumable(
      const v1::WatchRequest& request,
      const std::function<bool(const v1::WatchEvent&)>& on_event,
      WatchProgress* progress) override {
    return WatchResumable(request, on_event, progress, std::stop_token());
  }

  absl::Status WatchResumable(
      const v1::WatchRequest& request,
      const std::function<bool(const v1::WatchEvent&)>& on_event,
      WatchProgress* progress, std::stop_token cancel) override {
    if (cancel.stop_requested()) return WatchCancelled();
    WatchProgress local;
    if (progress == nullptr) progress = &local;
    Backoff backoff = NewBackoff(cancel);
    int64_t from = 0;
    if (request.has_from_revision()) {
      from = request.from_revision();
    } else {
      // "From now on" must mean the same revision on every reconnect, so
      // pin it with a cheap read that reports the current revision.
      absl::StatusOr<int64_t> pinned = PinRevision(request, cancel);
      if (cancel.stop_requested()) return WatchCancelled();
      if (!pinned.ok()) return pinned.status();
      from = *pinned;
    }
    // The last revision delivered and the objects delivered at it: a
    // stream can break between two events of one revision, and the next
    // one starts again at that revision's first event.
    int64_t last = from;
    std::set<EventKey> delivered_at_last;
    progress->revision = from;
    while (true) {
      v1::WatchRequest attempt = request;
      attempt.set_from_revision(delivered_at_last.empty() ? last : last - 1);
      bool delivered = false;
      bool stopped = false;
      const absl::Time started = absl::Now();
      absl::Status status = WatchOnce(
          attempt,
          [&](const v1::WatchEvent& event) {
            EventKey key = KeyOf(event);
            if (event.revision() < last) return true;
            if (event.revision() == last && delivered_at_last.count(key) > 0) {
              return true;
            }
            if (event.revision() > last) {
              last = event.revision();
              delivered_at_last.clear();
            }
            delivered_at_last.insert(std::move(key));
            delivered = true;
            progress->revision = last - 1;
            return on_event(event);
          },
          cancel, &stopped);
      if (stopped) return absl::OkStatus();
      // Checked before the status: the stream's own CANCELLED is worth a
      // reconnection, the caller's is not.
      if (cancel.stop_requested()) return WatchCancelled();
      if (!StreamRetryable(status.code())) return status;
      // A stream that delivered, or stayed open longer than the whole
      // budget, was healthy: the failure now is a new one.
      if (delivered || absl::Now() - started >= options_.retry_budget) {
        backoff.Reset();
      }
      const bool retry = backoff.Wait();
      if (cancel.stop_requested()) return WatchCancelled();
      if (!retry) {
        return status.ok() ? absl::UnavailableError("watch stream ended")
                           : status;
      }
      ++progress->reconnects;
    }
  }

 private:
  static grpc::ChannelArguments ChannelArgs(const ClientOptions& options) {
    grpc::ChannelArguments args;
    // gRPC's own reconnect backoff (up to 120 s by default) would keep the
    // channel failing fast long after kqd is back; follow the retry policy.
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
                ToMillis(options.retry_initial_backoff));
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
                ToMillis(std::max(options.retry_max_backoff,
                                  options.retry_initial_backoff)));
    if (!options.tls_server_name.empty()) {
      args.SetSslTargetNameOverride(options.tls_server_name);
    }
    return args;
  }

  // Prepares `context` for a call: the bearer token (`authorization: Bearer
  // <token>`) and the impersonation metadata. The credential options' error
  // (setup_, or a token file never read) refuses the call before anything
  // is sent.
  absl::Status Authenticate(grpc::ClientContext* context) {
    if (!setup_.ok()) return setup_;
    const std::string* token = &options_.token;
    absl::StatusOr<std::string> from_file;
    if (token_file_ != nullptr) {
      from_file = token_file_->Get();
      if (!from_file.ok()) return from_file.status();
      token = &*from_file;
    }
    if (!token->empty()) {
      context->AddMetadata("authorization", absl::StrCat("Bearer ", *token));
    }
    if (!options_.impersonate_user.empty()) {
      context->AddMetadata("impersonate-user", options_.impersonate_user);
      for (const std::string& group : options_.impersonate_groups) {
        context->AddMetadata("impersonate-group", group);
      }
    }
    return absl::OkStatus();
  }

  // Runs one unary call `method(context, request, response)` with
  // `deadline` and returns the response or the call's status (CANCELLED
  // once `cancel` is requested).
  template <typename Response, typename Request, typename Method>
  absl::StatusOr<Response> Unary(absl::Duration deadline,
                                 const Request& request, Method method,
                                 const std::stop_token& cancel = {}) {
    grpc::ClientContext context;
    if (absl::Status usable = Authenticate(&context); !usable.ok()) {
      return usable;
    }
    context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
    std::stop_callback on_cancel(cancel, [&context] { context.TryCancel(); });
    Response response;
    absl::Status status = FromGrpcStatus(method(&context, request, &response));
    if (!status.ok()) {
      return status;
    }
    return response;
  }

  // The reason gRPC gives for a channel in TRANSIENT_FAILURE. The channel
  // state carries none, but a fail-fast call on such a channel fails at once
  // with it, before anything is sent. The call is a cheap read, so one that
  // does reach a kqd that came up meanwhile does no harm: any answer from a
  // server means the connection is there.
  absl::Status WhyUnreachable(absl::Time deadline) {
    grpc::ClientContext context;
    // Connect checked the credentials; a kqd that requires them would
    // answer UNAUTHENTICATED, which is an answer all the same.
    Authenticate(&context).IgnoreError();
    context.set_wait_for_ready(false);
    context.set_deadline(absl::ToChronoTime(
        std::max(deadline, absl::Now() + absl::Milliseconds(100))));
    v1::ListObjectsRequest request;
    request.set_kind("ResourceFlavor");
    v1::ListObjectsResponse response;
    const grpc::Status status =
        admin_->ListObjects(&context, request, &response);
    if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
        status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      return FromGrpcStatus(status);
    }
    return absl::OkStatus();
  }

  // A call that changes state is sent once, as it is: a lost answer does
  // not mean the change was not made. It is sent fail-fast (UNAVAILABLE at
  // once while kqd is unreachable), but a channel that lost kqd gets a
  // moment to reconnect first: gRPC keeps it failing fast until a
  // reconnection attempt succeeds, which may be a while after kqd is back
  // (see Pause).
  template <typename Response, typename Request, typename Method>
  absl::StatusOr<Response> Once(absl::Duration deadline, const Request& request,
                                Method method) {
    // Unusable credentials: not even a connection attempt.
    if (!setup_.ok()) return setup_;
    if (channel_->GetState(/*try_to_connect=*/true) ==
        GRPC_CHANNEL_TRANSIENT_FAILURE) {
      const absl::Duration wait =
          std::min(deadline, options_.retry_max_backoff + absl::Seconds(1));
      channel_->WaitForConnected(absl::ToChronoTime(absl::Now() + wait));
    }
    return Unary<Response>(deadline, request, method);
  }

  Backoff NewBackoff(std::stop_token cancel = {}) {
    return Backoff(options_,
                   [this, cancel](absl::Time until) { Pause(until, cancel); });
  }

  // Waits until `until`, or less once the channel is connected again or
  // `cancel` is requested. While kqd is unreachable, gRPC keeps the channel
  // in TRANSIENT_FAILURE and fails calls at once, so no thread of this
  // process polls the connection attempts under way; their results would
  // wait for gRPC's 5-second backup poller. Waiting for the channel's state
  // polls them, so a retry follows kqd's return within milliseconds.
  void Pause(absl::Time until, const std::stop_token& cancel) {
    absl::Notification cancelled;
    std::stop_callback on_cancel(cancel, [&cancelled] { cancelled.Notify(); });
    if (channel_->GetState(/*try_to_connect=*/true) == GRPC_CHANNEL_READY) {
      cancelled.WaitForNotificationWithDeadline(until);
      return;
    }
    while (!cancelled.HasBeenNotified()) {
      const absl::Time slice = cancel.stop_possible()
                                   ? std::min(until, absl::Now() + kCancelPoll)
                                   : until;
      if (channel_->WaitForConnected(absl::ToChronoTime(slice)) ||
          slice >= until) {
        return;
      }
    }
  }

  static absl::Duration AdmitTimeout(const v1::AdmitRequest& request) {
    return absl::Seconds(request.timeout().seconds()) +
           absl::Nanoseconds(request.timeout().nanos());
  }

  // A unary call that changes nothing, retried on UNAVAILABLE with backoff
  // within the retry budget. Each attempt has its own deadline. `cancel`
  // ends the attempt and the backoff (CANCELLED).
  template <typename Response, typename Request, typename Method>
  absl::StatusOr<Response> Retried(
      const Request& request, Method method,
      std::optional<absl::Duration> deadline = std::nullopt,
      const std::stop_token& cancel = {}) {
    Backoff backoff = NewBackoff(cancel);
    while (true) {
      absl::StatusOr<Response> response = Unary<Response>(
          deadline.value_or(options_.deadline), request, method, cancel);
      if (response.ok() ||
          response.status().code() != absl::StatusCode::kUnavailable ||
          !backoff.Wait()) {
        return response;
      }
    }
  }

  // The current revision, from a read the watcher is likely allowed to
  // make: ResourceFlavors (the cheapest), else, for a caller kqd's RBAC
  // confines to a namespace (kueue-batch-user-role), the workloads of the
  // watch's namespace in a LocalQueue that cannot exist (a dot is not
  // allowed in its name: an empty answer), else its LocalQueues. Each read
  // is retried on UNAVAILABLE; the next one is tried on PERMISSION_DENIED.
  absl::StatusOr<int64_t> PinRevision(const v1::WatchRequest& request,
                                      const std::stop_token& cancel) {
    v1::ListObjectsRequest flavors;
    flavors.set_kind("ResourceFlavor");
    absl::StatusOr<v1::ListObjectsResponse> listed =
        Retried<v1::ListObjectsResponse>(
            flavors,
            [this](auto* context, auto& req, auto* resp) {
              return admin_->ListObjects(context, req, resp);
            },
            std::nullopt, cancel);
    if (listed.ok()) return listed->revision();
    if (listed.status().code() != absl::StatusCode::kPermissionDenied) {
      return listed.status();
    }
    v1::ListWorkloadsRequest none;
    none.set_namespace_(request.namespace_());
    none.set_queue_name(kNoSuchLocalQueue);
    absl::StatusOr<v1::ListWorkloadsResponse> workloads =
        Retried<v1::ListWorkloadsResponse>(
            none,
            [this](auto* context, auto& req, auto* resp) {
              return queue_->ListWorkloads(context, req, resp);
            },
            std::nullopt, cancel);
    if (workloads.ok()) return workloads->revision();
    if (workloads.status().code() != absl::StatusCode::kPermissionDenied ||
        request.namespace_().empty()) {
      return workloads.status();
    }
    v1::ListObjectsRequest local_queues;
    local_queues.set_kind("LocalQueue");
    local_queues.set_namespace_(request.namespace_());
    listed = Retried<v1::ListObjectsResponse>(
        local_queues,
        [this](auto* context, auto& req, auto* resp) {
          return admin_->ListObjects(context, req, resp);
        },
        std::nullopt, cancel);
    if (listed.ok()) return listed->revision();
    return listed.status();
  }

  // One Watch stream until it fails, `cancel` is requested (the stream is
  // cancelled; its status is then CANCELLED) or `on_event` returns false
  // (then `*stopped` is set and the stream cancelled).
  absl::Status WatchOnce(
      const v1::WatchRequest& request,
      const std::function<bool(const v1::WatchEvent&)>& on_event,
      const std::stop_token& cancel, bool* stopped) {
    if (!watch_batches_unsupported_.load(std::memory_order_relaxed)) {
      bool received = false;
      bool cancelled = false;
      absl::Status status = WatchStream<v1::WatchBatch>(
          request,
          [&](const v1::WatchBatch& batch) {
            received = true;
            for (const v1::WatchEvent& event : batch.events()) {
              // As with Watch, no event is delivered once the caller
              // cancelled.
              if (cancel.stop_requested()) {
                cancelled = true;
                return false;
              }
              if (!on_event(event)) return false;
            }
            return true;
          },
          cancel, stopped);
      if (cancelled) *stopped = false;
      // A kqd from before WatchBatches: Watch, from now on.
      if (received || status.code() != absl::StatusCode::kUnimplemented) {
        return status;
      }
      watch_batches_unsupported_.store(true, std::memory_order_relaxed);
    }
    return WatchStream<v1::WatchEvent>(request, on_event, cancel, stopped);
  }

  // One call through gRPC's callback API, sent once: `done` gets the
  // answer or the call's status on a gRPC thread, after the call is gone
  // (so a caller that has seen every answer may destroy the client).
  template <typename Response, typename Request, typename Done, typename Start>
  void Async(Request request, Done done, Start start) {
    // Lives until gRPC calls back: the context, request and response must.
    using Callback = std::function<void(absl::StatusOr<Response>)>;
    struct Call {
      grpc::ClientContext context;
      Request request;
      Response response;
      Callback done;
    };
    auto call = std::make_unique<Call>();
    if (absl::Status usable = Authenticate(&call->context); !usable.ok()) {
      done(usable);
      return;
    }
    call->context.set_deadline(
        absl::ToChronoTime(absl::Now() + options_.deadline));
    call->request = std::move(request);
    call->done = Callback(std::move(done));
    Call* in_flight = call.release();
    start(&in_flight->context, &in_flight->request, &in_flight->response,
          [in_flight](grpc::Status status) {
            std::unique_ptr<Call> answered(in_flight);
            Callback done = std::move(answered->done);
            absl::Status converted = FromGrpcStatus(status);
            absl::StatusOr<Response> result =
                converted.ok()
                    ? absl::StatusOr<Response>(std::move(answered->response))
                    : absl::StatusOr<Response>(std::move(converted));
            answered.reset();
            done(std::move(result));
          });
  }

  // One stream of Watch (Message WatchEvent) or WatchBatches (WatchBatch).
  template <typename Message>
  absl::Status WatchStream(
      const v1::WatchRequest& request,
      const std::function<bool(const Message&)>& on_message,
      const std::stop_token& cancel, bool* stopped) {
    // No deadline: a watch is meant to stay open until the caller stops it.
    grpc::ClientContext context;
    if (absl::Status usable = Authenticate(&context); !usable.ok()) {
      return usable;
    }
    // Ends a Read() that waits for kqd's next event. Declared after
    // `context` so that it is gone (and no longer running) before it is.
    std::stop_callback on_cancel(cancel, [&context] { context.TryCancel(); });
    std::unique_ptr<grpc::ClientReader<Message>> reader;
    if constexpr (std::is_same_v<Message, v1::WatchBatch>) {
      reader = queue_->WatchBatches(&context, request);
    } else {
      reader = queue_->Watch(&context, request);
    }
    Message message;
    while (reader->Read(&message)) {
      if (cancel.stop_requested()) {
        // A message read just before the cancellation took effect is not
        // delivered. The cancelling thread may not have reached TryCancel
        // yet, and Finish() would wait for it.
        context.TryCancel();
        break;
      }
      if (!on_message(message)) {
        // The caller is done: cancel the stream, then drain Finish() so the
        // call is cleaned up. Its CANCELLED status is expected, not an error.
        *stopped = true;
        context.TryCancel();
        reader->Finish().IgnoreError();
        return absl::OkStatus();
      }
    }
    return FromGrpcStatus(reader->Finish());
  }

  const ClientOptions options_;
  // OK, or why the credential options cannot be used: every call fails
  // with it.
  absl::Status setup_;
  // options_.token_file's token; null without one.
  std::unique_ptr<internal::TokenFile> token_file_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::AdminService::Stub> admin_;
  std::unique_ptr<v1::QueueService::Stub> queue_;
  std::unique_ptr<v1::FederationService::Stub> federation_;
  // The kqd answered WatchBatches with UNIMPLEMENTED once.
  std::atomic<bool> watch_batches_unsupported_{false};
};

}  // namespace

std::unique_ptr<Client> NewGrpcClient(const ClientOptions& options) {
  return std::make_unique<GrpcClient>(options);
}

}  // namespace kq::client
