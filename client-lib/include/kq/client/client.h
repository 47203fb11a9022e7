#pragma once

// The C++ client of kqd. One public header; gRPC stays behind it.
//
// Example:
//   auto client = kq::client::NewGrpcClient({.target = "127.0.0.1:7070"});
//   absl::StatusOr<kq::v1::SubmitWorkloadResponse> r =
//       client->SubmitWorkload(workload);

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kq/v1/admin_service.pb.h"
#include "kq/v1/federation_service.pb.h"
#include "kq/v1/queue_service.pb.h"

namespace kq::client {

struct ClientOptions {
  // host:port of kqd.
  std::string target = "127.0.0.1:7070";
  // Deadline of each unary call.
  absl::Duration deadline = absl::Seconds(30);
  // Idempotent calls (reads, Explain, Simulate, Heartbeat, Admit of an
  // existing workload, Watch reconnections) that fail with UNAVAILABLE are
  // retried with exponential backoff (from `retry_initial_backoff`,
  // doubling, at most `retry_max_backoff`, with jitter) until
  // `retry_budget` has passed since the first failure; a retry is made as
  // soon as the channel reconnects. Calls that change state (Apply, Delete,
  // Submit, Cancel, Finish, Preempt, SetWorkloadActive, SetStopPolicy,
  // SetAdmissionCheckState, Admit with a workload) are sent once: a lost
  // answer does not mean the change was not made. They fail with
  // UNAVAILABLE while kqd is unreachable, after waiting up to
  // `retry_max_backoff` + 1 s for a channel that lost kqd to reconnect.
  absl::Duration retry_initial_backoff = absl::Milliseconds(100);
  absl::Duration retry_max_backoff = absl::Seconds(5);
  absl::Duration retry_budget = absl::Seconds(60);

  // Credentials (the security contract of issue 30). With none of them set
  // the channel is plaintext and calls carry no identity, which kqd
  // accepts only without --authz-file.
  //
  // PEM file of the CA (bundle) that signed kqd's certificate. Turns TLS
  // on: kqd's certificate must chain to it and name the host of `target`
  // (or `tls_server_name`). Read when the client is made.
  std::string tls_ca_file;
  // PEM files of a client certificate and its private key, for mutual TLS:
  // kqd takes the user from its CN and the groups from its O values. Both
  // or neither, and only with `tls_ca_file`. Read when the client is made.
  std::string tls_cert_file;
  std::string tls_key_file;
  // The name kqd's certificate must carry, instead of the host of
  // `target` (e.g. an address whose certificate names a DNS name).
  std::string tls_server_name;
  // A bearer token, sent as `authorization: Bearer <token>` with every
  // call; or a file holding one (a Kubernetes service-account token works),
  // read at the first call and again every minute so a rotated token is
  // picked up. At most one of the two. A token goes only over TLS or to a
  // loopback target (127.0.0.0/8, ::1, localhost, unix:); otherwise every
  // call fails with INVALID_ARGUMENT before anything is sent.
  std::string token;
  std::string token_file;
  // Impersonation, for a caller acting for another identity (the shim for
  // a Kubernetes user): `impersonate-user` and one `impersonate-group`
  // metadata entry per group on every call. kqd honours them only when the
  // caller's own identity may impersonate. Groups need a user.
  std::string impersonate_user;
  std::vector<std::string> impersonate_groups;
};

// What a Watch consumer sees besides events.
struct WatchProgress {
  // A plain Watch from this revision misses nothing: every event of the
  // revisions up to it was delivered. It trails the newest event delivered
  // by one revision, since more events of that revision may follow.
  int64_t revision = 0;
  // Reconnections so far (kqd restarted or the stream broke).
  int reconnects = 0;
};

// A connection to one kqd. Thread-safe: calls may be made concurrently.
// Every call returns kqd's status code and message unchanged
// (INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION, ...), or UNAVAILABLE /
// DEADLINE_EXCEEDED when kqd cannot be reached in time.
class Client {
 public:
  virtual ~Client() = default;

  // Waits up to `timeout` for a connection to kqd, sending no call. OK once
  // connected. UNAVAILABLE with gRPC's reason (e.g. "... Connection
  // refused", or a name that does not resolve) as soon as a connection
  // attempt failed, which for a closed port is at once; DEADLINE_EXCEEDED
  // when no attempt ended within `timeout` (an address that drops packets,
  // a slow resolver). A TLS handshake that fails (kqd's certificate not
  // signed by the CA given, or kqd refusing the client's certificate) is
  // UNAVAILABLE with gRPC's reason. INVALID_ARGUMENT, before any attempt,
  // for credential options that cannot be used (see NewGrpcClient). Never
  // retries, and changes nothing about the calls:
  // they keep their own deadlines and retries. A command-line tool calls it
  // first so that a wrong address fails in a second rather than after the
  // retry budget. This default, for clients with nothing to connect (fakes),
  // returns OK.
  virtual absl::Status Connect(absl::Duration timeout);

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
  // Operator eviction (requeue, or deactivate). Returns the workload.
  virtual absl::StatusOr<v1::Workload> Preempt(
      const v1::PreemptRequest& request) = 0;
  // spec.active: false stops (deactivates) a workload, true resumes it.
  virtual absl::StatusOr<v1::Workload> SetWorkloadActive(
      const std::string& namespace_name, const std::string& name,
      bool active) = 0;
  // spec.stopPolicy of a ClusterQueue or LocalQueue (None, Hold,
  // HoldAndDrain). Returns the object.
  virtual absl::StatusOr<v1::ConfigObject> SetStopPolicy(
      const v1::SetStopPolicyRequest& request) = 0;

  // QueueService.
  virtual absl::StatusOr<v1::SubmitWorkloadResponse> SubmitWorkload(
      const v1::SubmitWorkloadRequest& request) = 0;
  // SubmitWorkload of `workload`, answered with its templates as Structs.
  // (A class overriding the request form adds `using
  // Client::SubmitWorkload;` to keep this one.)
  absl::StatusOr<v1::SubmitWorkloadResponse> SubmitWorkload(
      const v1::Workload& workload) {
    v1::SubmitWorkloadRequest request;
    *request.mutable_workload() = workload;
    return SubmitWorkload(request);
  }
  // SubmitWorkload without waiting for the answer: a launcher keeps many
  // submissions in flight from one thread instead of one thread each
  // (kqd acknowledges them in the same commits). `done` receives what
  // SubmitWorkload would return, exactly once, on a thread of the client's
  // (gRPC's callback threads for NewGrpcClient's), and must not block.
  // Sent once, like SubmitWorkload, but answered UNAVAILABLE at once while
  // kqd is unreachable, without waiting for the channel to reconnect. The
  // client may be destroyed once every `done` has returned, not before.
  // When the credential options cannot be used, `done` gets their
  // INVALID_ARGUMENT on the caller's thread before this returns.
  // This default waits for SubmitWorkload and calls `done` on the caller's
  // thread before returning (a caller that sends its next call from `done`
  // then recurses).
  using SubmitDone =
      std::function<void(absl::StatusOr<v1::SubmitWorkloadResponse>)>;
  virtual void SubmitWorkloadAsync(v1::SubmitWorkloadRequest request,
                                   SubmitDone done) {
    done(SubmitWorkload(request));
  }
  virtual absl::StatusOr<v1::GetWorkloadResponse> GetWorkload(
      const v1::GetWorkloadRequest& request) = 0;
  // GetWorkload of `namespace_name`/`name`, answered with its templates as
  // Structs (an override of the request form adds `using
  // Client::GetWorkload;`).
  absl::StatusOr<v1::GetWorkloadResponse> GetWorkload(
      const std::string& namespace_name, const std::string& name) {
    v1::GetWorkloadRequest request;
    request.set_namespace_(namespace_name);
    request.set_name(name);
    return GetWorkload(request);
  }
  virtual absl::StatusOr<v1::ListWorkloadsResponse> ListWorkloads(
      const v1::ListWorkloadsRequest& request) = 0;
  virtual absl::StatusOr<v1::Workload> CancelWorkload(
      const std::string& namespace_name, const std::string& name) = 0;
  virtual absl::StatusOr<v1::Workload> FinishWorkload(
      const std::string& namespace_name, const std::string& name,
      bool succeeded, const std::string& message) = 0;
  // FinishWorkload without waiting for the answer, as SubmitWorkloadAsync
  // is to SubmitWorkload (a runner fleet's agent finishing many workloads
  // from one thread); the same threads, rules and default.
  using FinishDone = std::function<void(absl::StatusOr<v1::Workload>)>;
  virtual void FinishWorkloadAsync(v1::FinishWorkloadRequest request,
                                   FinishDone done) {
    done(FinishWorkload(request.namespace_(), request.name(),
                        request.succeeded(), request.message()));
  }

  // One Admit call: waits up to request.timeout (or the call's deadline,
  // which for Admit is the timeout plus `deadline`) for admission.
  virtual absl::StatusOr<v1::AdmitResponse> Admit(
      const v1::AdmitRequest& request) = 0;
  // Waits until the workload is admitted, finished or deactivated, asking
  // kqd with Admit calls of `poll` each (retrying UNAVAILABLE) and calling
  // `on_pending` (may be null) with every PENDING answer so the caller can
  // show the reason and position. Gives up with DEADLINE_EXCEEDED after
  // `timeout` (InfiniteDuration: never). With request.workload set it is
  // submitted by the first call only; later calls wait by namespace/name.
  // An UNAVAILABLE first call is retried with the workload still set: kqd
  // treats an Admit whose workload name exists as a wait for it, so the
  // workload is never submitted twice. A workload named only by
  // metadata.generateName would get a second name, so that first call is
  // not retried. With request.runner_id set, every call attaches (or
  // renews) that runner once admitted.
  virtual absl::StatusOr<v1::AdmitResponse> WaitAdmitted(
      v1::AdmitRequest request, absl::Duration timeout,
      const std::function<void(const v1::AdmitResponse&)>& on_pending,
      absl::Duration poll = absl::Seconds(30)) = 0;
  // Kueue's status.reclaimablePods as the runner reports them (pod set ->
  // pods that finished and will not run again): the workload holds that
  // much less quota. Replaces the earlier report; returns the workload as
  // committed.
  virtual absl::StatusOr<v1::Workload> SetReclaimablePods(
      const std::string& namespace_name, const std::string& name,
      const std::map<std::string, int32_t>& reclaimable_pods) = 0;
  // The runner handshake: attach / renew / learn to stop / confirm.
  virtual absl::StatusOr<v1::HeartbeatResponse> Heartbeat(
      const v1::HeartbeatRequest& request) = 0;
  virtual absl::StatusOr<v1::ExplainResponse> Explain(
      const std::string& namespace_name, const std::string& name) = 0;
  virtual absl::StatusOr<v1::SimulateResponse> Simulate(
      const v1::SimulateRequest& request) = 0;
  // Kueue's visibility API: a page of the pending workloads of
  // request.cluster_queue, or of the LocalQueue request.namespace /
  // request.local_queue, in the order its ClusterQueue tries them, with
  // each one's position in its ClusterQueue and LocalQueue. A read:
  // retried. INVALID_ARGUMENT naming the field for a bad request, NOT_FOUND
  // for an unknown queue. This default, for clients that do not implement
  // it, returns UNIMPLEMENTED.
  virtual absl::StatusOr<v1::PendingWorkloadsResponse> PendingWorkloads(
      const v1::PendingWorkloadsRequest& request);

  // FederationService: a MultiKueue manager's calls on a worker kqd. Every
  // item is safe to repeat, so a call that fails with UNAVAILABLE is
  // retried within the retry budget like a read; each item's own outcome
  // is in its result. These defaults, for clients that do not implement
  // them, return UNIMPLEMENTED.
  // AdminService.SetNominatedClusters: an external MultiKueue dispatcher's
  // nominations. Sent once. This default returns UNIMPLEMENTED.
  virtual absl::StatusOr<v1::Workload> SetNominatedClusters(
      const v1::SetNominatedClustersRequest& request);
  virtual absl::StatusOr<v1::RemoteResponse> UpsertRemote(
      const v1::UpsertRemoteRequest& request);
  enum class RemoteVerb { kDelete, kBind, kRenew, kDeactivate };
  virtual absl::StatusOr<v1::RemoteResponse> CallRemote(
      RemoteVerb verb, const v1::RemoteRequest& request);

  // Streams events to `on_event` until it returns false (then returns OK) or
  // the stream fails (returns its status). Blocks the calling thread. No
  // reconnection: see WatchResumable.
  virtual absl::Status Watch(
      const v1::WatchRequest& request,
      const std::function<bool(const v1::WatchEvent&)>& on_event) = 0;
  // Watch that survives kqd restarts and broken streams: reconnects with
  // backoff and resumes right after the last revision delivered, with no
  // gap and no duplicate (events of a revision cut in the middle are not
  // repeated). Without request.from_revision, "from now on" is pinned to
  // the revision of a ListObjects made first, so reconnections resume from
  // there too. Gives up with the stream's status once `retry_budget`
  // passes without an event delivered (a stream that stayed open that
  // long counts as progress). OUT_OF_RANGE (the revision left kqd's event
  // log) and errors about the request (INVALID_ARGUMENT, ...) are returned
  // at once; on OUT_OF_RANGE the caller must re-list. `progress` (may be
  // null) is updated before each event is delivered.
  virtual absl::Status WatchResumable(
      const v1::WatchRequest& request,
      const std::function<bool(const v1::WatchEvent&)>& on_event,
      WatchProgress* progress = nullptr) = 0;

  // Watch and WatchResumable that another thread can end: once `cancel` is
  // requested they return CANCELLED promptly, whether waiting for kqd's
  // next event, reconnecting or backing off between reconnections, and
  // deliver no event after they see the request (one being delivered
  // finishes). They return OK when on_event returns false, as above. A
  // default-constructed std::stop_token is never requested.
  // The defaults here, for clients that implement only the forms above,
  // look at `cancel` before starting and as each event arrives: they cannot
  // interrupt a wait for the next event. The gRPC client can. (A class that
  // overrides only the forms above adds `using Client::Watch;` and `using
  // Client::WatchResumable;` to keep these callable through it.)
  virtual absl::Status Watch(
      const v1::WatchRequest& request,
      const std::function<bool(const v1::WatchEvent&)>& on_event,
      std::stop_token cancel);
  virtual absl::Status WatchResumable(
      const v1::WatchRequest& request,
      const std::function<bool(const v1::WatchEvent&)>& on_event,
      WatchProgress* progress, std::stop_token cancel);
};

// Creates a client of the kqd at options.target: over TLS with
// options.tls_ca_file, else over a plaintext channel. Never fails: when the
// credential options do not fit together or a credential file cannot be
// read, Connect and every call fail with INVALID_ARGUMENT naming the
// option or the file (e.g. `cannot read the TLS CA file "/etc/kq/ca.crt":
// No such file or directory`), and nothing is sent to kqd.
std::unique_ptr<Client> NewGrpcClient(const ClientOptions& options);

}  // namespace kq::client
