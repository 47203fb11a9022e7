// QueueService (kq/v1/queue_service.proto): submitting, reading and
// watching workloads, the runner handshake, Explain and Simulate; the
// callback forms hand the engine's answer to the reply queue.

#include <algorithm>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "base/status_macros.h"
#include "proto/util/config_object.h"
#include "server/api/authorization.h"
#include "server/api/proto_convert.h"
#include "server/api/services.h"
#include "server/api/status_convert.h"
#include "server/codec/codec.h"

namespace kq::api {
namespace {

void FillWorkload(
    const engine::WorkloadView& view, v1::TemplateForm form,
    v1::Workload* workload,
    google::protobuf::RepeatedPtrField<v1::PodSetPlacement>* placements) {
  *workload = codec::ToProto(view.workload, form);
  FillPlacements(view, placements);
}

// `was_in_cluster_queue`: the stream last delivered this workload as
// admitted to filter.cluster_queue(), so its release is delivered too.
bool WatchMatches(const v1::WatchRequest& filter, const store::Event& event,
                  bool was_in_cluster_queue = false) {
  const ObjectMeta* meta;
  const char* kind;
  const Workload* wl = std::get_if<Workload>(&event.object);
  if (wl != nullptr) {
    meta = &wl->meta;
    kind = "Workload";
  } else {
    const ConfigObject& o = std::get<ConfigObject>(event.object);
    meta = &kq::MetaOf(o);
    kind = KindName(KindOf(o));
  }
  if (!filter.kinds().empty() &&
      std::find(filter.kinds().begin(), filter.kinds().end(), kind) ==
          filter.kinds().end()) {
    return false;
  }
  if (!filter.namespace_().empty() &&
      meta->namespace_name != filter.namespace_()) {
    return false;
  }
  if (!filter.queue_name().empty() &&
      (wl == nullptr || wl->queue_name != filter.queue_name())) {
    return false;
  }
  if (!filter.workload_name().empty() &&
      (wl == nullptr || wl->meta.name != filter.workload_name())) {
    return false;
  }
  if (!filter.origin().empty() && (wl == nullptr || !wl->remote.has_value() ||
                                   wl->remote->origin != filter.origin())) {
    return false;
  }
  if (!filter.cluster_queue().empty()) {
    if (wl != nullptr) {
      // Admitted there, or just released from there; a pending workload's
      // LocalQueue is not resolved here, so pending ones do not match.
      const bool here = wl->admission.has_value() &&
                        wl->admission->cluster_queue == filter.cluster_queue();
      if (!here && !was_in_cluster_queue) return false;
    } else if (std::string(kind) != "ClusterQueue" ||
               meta->name != filter.cluster_queue()) {
      return false;
    }
  }
  return true;
}

v1::AdmitResponse::Outcome ToProto(engine::AdmitOutcome::Kind kind) {
  switch (kind) {
    case engine::AdmitOutcome::Kind::kAdmitted:
      return v1::AdmitResponse::ADMITTED;
    case engine::AdmitOutcome::Kind::kPending:
      return v1::AdmitResponse::PENDING;
    case engine::AdmitOutcome::Kind::kFinished:
      return v1::AdmitResponse::FINISHED;
    case engine::AdmitOutcome::Kind::kDeactivated:
      return v1::AdmitResponse::DEACTIVATED;
  }
  return v1::AdmitResponse::OUTCOME_UNSPECIFIED;
}

std::string QuantityText(const std::string& resource, Quantity q) {
  return codec::QuantityToProto(resource, q);
}

void FillVictims(
    const std::vector<admission::Victim>& victims,
    google::protobuf::RepeatedPtrField<v1::PreemptionVictim>* out) {
  for (const admission::Victim& victim : victims) {
    v1::PreemptionVictim* v = out->Add();
    v->set_namespace_(victim.workload.first);
    v->set_name(victim.workload.second);
    v->set_cluster_queue(victim.cluster_queue);
    v->set_reason(victim.reason);
  }
}

}  // namespace

template <typename T>
std::function<void(absl::StatusOr<T>)> QueueServiceImpl::Answer(
    grpc::ServerUnaryReactor* reactor,
    std::function<void(const T&)> fill_response) {
  return [this, reactor,
          fill = std::move(fill_response)](absl::StatusOr<T> result) {
    replies_.Post([reactor, fill, result = std::move(result)] {
      if (!result.ok()) {
        reactor->Finish(ToGrpcStatus(result.status()));
        return;
      }
      fill(*result);
      reactor->Finish(grpc::Status::OK);
    });
  };
}

grpc::ServerUnaryReactor* QueueServiceImpl::SubmitWorkload(
    grpc::CallbackServerContext* context,
    const v1::SubmitWorkloadRequest* request,
    v1::SubmitWorkloadResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<auth::Principal> principal = access_.Check(
      *context,
      WorkloadRequest("create", request->workload().metadata().namespace_(),
                      request->workload().metadata().name()));
  if (!principal.ok()) {
    reactor->Finish(ToGrpcStatus(principal.status()));
    return reactor;
  }
  absl::StatusOr<Workload> wl = codec::FromClientProto(request->workload());
  if (!wl.ok()) {
    reactor->Finish(ToGrpcStatus(wl.status()));
    return reactor;
  }
  StampSubmitter(*principal, access_.access().enabled(), *wl);
  // `request` and `response` live until Finish; the engine calls back
  // exactly once, after its commit (a cancelled call still waits for it,
  // as the submission may have been stored).
  engine_.Submit(
      *std::move(wl),
      Answer<engine::WorkloadView>(
          reactor, [request, response](const engine::WorkloadView& view) {
            FillWorkload(view, request->template_form(),
                         response->mutable_workload(),
                         response->mutable_placements());
          }));
  return reactor;
}

grpc::Status QueueServiceImpl::GetWorkload(
    grpc::ServerContext* context, const v1::GetWorkloadRequest* request,
    v1::GetWorkloadResponse* response) {
  if (absl::StatusOr<auth::Principal> p = access_.Check(
          *context,
          WorkloadRequest("get", request->namespace_(), request->name()));
      !p.ok()) {
    return ToGrpcStatus(p.status());
  }
  absl::StatusOr<engine::WorkloadView> view =
      engine_.GetWorkload({request->namespace_(), request->name()});
  if (!view.ok()) return ToGrpcStatus(view.status());
  FillWorkload(*view, request->template_form(), response->mutable_workload(),
               response->mutable_placements());
  return grpc::Status::OK;
}

grpc::Status QueueServiceImpl::ListWorkloads(
    grpc::ServerContext* context, const v1::ListWorkloadsRequest* request,
    v1::ListWorkloadsResponse* response) {
  absl::StatusOr<auth::Principal> principal =
      access_.Check(*context, WorkloadRequest("list", request->namespace_()));
  if (!principal.ok()) return ToGrpcStatus(principal.status());
  // Filtering by ClusterQueue says which workloads it admitted.
  if (!request->cluster_queue().empty()) {
    if (absl::Status s =
            access_.Authorize(*context, *principal,
                              ObjectRequest("get", ObjectKind::kClusterQueue,
                                            "", request->cluster_queue()));
        !s.ok()) {
      return ToGrpcStatus(s);
    }
  }
  engine::WorkloadFilter filter{
      request->namespace_(),
      request->queue_name(),
      request->cluster_queue(),
      request->origin(),
      request->include_finished(),
      request->template_form() == v1::TEMPLATE_FORM_NONE};
  absl::StatusOr<engine::Listed<Workload>> listed =
      engine_.ListWorkloads(filter);
  if (!listed.ok()) return ToGrpcStatus(listed.status());
  for (const Workload& wl : listed->items) {
    *response->add_workloads() = codec::ToProto(wl, request->template_form());
  }
  response->set_revision(listed->revision);
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* QueueServiceImpl::CancelWorkload(
    grpc::CallbackServerContext* context,
    const v1::CancelWorkloadRequest* request,
    v1::CancelWorkloadResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::StatusOr<auth::Principal> p = access_.Check(
          *context,
          WorkloadRequest("cancel", request->namespace_(), request->name()));
      !p.ok()) {
    reactor->Finish(ToGrpcStatus(p.status()));
    return reactor;
  }
  // As SubmitWorkload: the engine calls back once, after its commit.
  engine_.Cancel(
      {request->namespace_(), request->name()},
      Answer<Workload>(reactor, [request, response](const Workload& wl) {
        *response->mutable_workload() =
            codec::ToProto(wl, request->template_form());
      }));
  return reactor;
}

grpc::ServerUnaryReactor* QueueServiceImpl::FinishWorkload(
    grpc::CallbackServerContext* context,
    const v1::FinishWorkloadRequest* request,
    v1::FinishWorkloadResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::Status s =
          AuthorizeRun(*context, request->namespace_(), request->name());
      !s.ok()) {
    reactor->Finish(ToGrpcStatus(s));
    return reactor;
  }
  // As SubmitWorkload: the engine calls back once, after its commit.
  engine_.Finish(
      {request->namespace_(), request->name()}, request->succeeded(),
      request->message(),
      Answer<Workload>(reactor, [request, response](const Workload& wl) {
        *response->mutable_workload() =
            codec::ToProto(wl, request->template_form());
      }));
  return reactor;
}

absl::StatusOr<engine::AdmitWait> AdmitWaitOf(const v1::AdmitRequest& request,
                                              absl::Time call_deadline) {
  engine::AdmitWait wait;
  if (request.has_workload()) {
    absl::StatusOr<Workload> wl = codec::FromClientProto(request.workload());
    if (!wl.ok()) return About("workload", wl.status());
    wait.submit = *std::move(wl);
  } else if (request.name().empty() || request.namespace_().empty()) {
    return absl::InvalidArgumentError(
        "namespace and name, or workload: required");
  } else {
    wait.key = {request.namespace_(), request.name()};
  }
  const absl::Duration timeout = codec::FromProto(request.timeout());
  if (timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("timeout: must not be negative");
  }
  // Without a timeout, answer PENDING just before the caller's deadline
  // would cancel the call; with neither, wait for good.
  const absl::Time answer_by = call_deadline == absl::InfiniteFuture()
                                   ? call_deadline
                                   : call_deadline - absl::Milliseconds(100);
  wait.deadline = timeout > absl::ZeroDuration()
                      ? std::min(absl::Now() + timeout, answer_by)
                      : answer_by;
  wait.runner_id = request.runner_id();
  if (request.has_lease() &&
      codec::FromProto(request.lease()) > absl::ZeroDuration()) {
    wait.lease = codec::FromProto(request.lease());
  }
  return wait;
}

void FillAdmitResponse(const engine::AdmitOutcome& outcome,
                       v1::TemplateForm form, v1::AdmitResponse* response) {
  response->set_outcome(ToProto(outcome.kind));
  FillWorkload(outcome.view, form, response->mutable_workload(),
               response->mutable_placements());
  response->set_reason(outcome.reason);
  response->set_message(outcome.message);
  if (outcome.view.position.has_value()) {
    response->set_position(*outcome.view.position);
  }
}

grpc::ServerUnaryReactor* QueueServiceImpl::Heartbeat(
    grpc::CallbackServerContext* context, const v1::HeartbeatRequest* request,
    v1::HeartbeatResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::Status s =
          AuthorizeRun(*context, request->namespace_(), request->name());
      !s.ok()) {
    reactor->Finish(ToGrpcStatus(s));
    return reactor;
  }
  absl::Duration lease = codec::FromProto(request->lease());
  if (lease <= absl::ZeroDuration()) lease = absl::Seconds(30);
  // As SubmitWorkload: the engine calls back once, after its commit.
  engine_.Heartbeat(
      {request->namespace_(), request->name()}, request->runner_id(), lease,
      request->stopped(),
      Answer<admission::HeartbeatResult>(
          reactor, [response](const admission::HeartbeatResult& result) {
            const Workload& wl = result.workload;
            *response->mutable_workload() = codec::ToProto(wl);
            response->set_stop(result.stop);
            if (wl.stop_deadline.has_value()) {
              *response->mutable_stop_deadline() =
                  codec::ToProto(*wl.stop_deadline);
            }
            if (wl.runner.has_value()) {
              *response->mutable_lease_expire_time() =
                  codec::ToProto(wl.runner->lease_expire_time);
            }
          }));
  return reactor;
}

grpc::Status QueueServiceImpl::SetReclaimablePods(
    grpc::ServerContext* context, const v1::SetReclaimablePodsRequest* request,
    v1::SetReclaimablePodsResponse* response) {
  if (absl::Status s =
          AuthorizeRun(*context, request->namespace_(), request->name());
      !s.ok()) {
    return ToGrpcStatus(s);
  }
  std::vector<ReclaimablePod> pods;
  for (const v1::ReclaimablePod& p : request->reclaimable_pods()) {
    pods.push_back(ReclaimablePod{p.name(), p.count()});
  }
  absl::StatusOr<Workload> wl = engine_.SetReclaimablePods(
      {request->namespace_(), request->name()}, std::move(pods));
  if (!wl.ok()) return ToGrpcStatus(wl.status());
  *response->mutable_workload() = codec::ToProto(*wl);
  return grpc::Status::OK;
}

grpc::Status QueueServiceImpl::Explain(grpc::ServerContext* context,
                                       const v1::ExplainRequest* request,
                                       v1::ExplainResponse* response) {
  absl::StatusOr<auth::Principal> principal = access_.Check(
      *context, WorkloadRequest("get", request->namespace_(), request->name()));
  if (!principal.ok()) return ToGrpcStatus(principal.status());
  absl::StatusOr<engine::ExplainResult> result =
      engine_.Explain({request->namespace_(), request->name()});
  if (!result.ok()) return ToGrpcStatus(result.status());
  const admission::Explanation& e = result->explanation;
  *response->mutable_workload() = codec::ToProto(e.workload);
  response->set_state(e.state);
  response->set_cluster_queue(e.cluster_queue);
  response->set_reason(e.reason);
  response->set_message(e.message);
  if (e.position_in_cluster_queue.has_value()) {
    response->set_position_in_cluster_queue(*e.position_in_cluster_queue);
  }
  if (e.position_in_local_queue.has_value()) {
    response->set_position_in_local_queue(*e.position_in_local_queue);
  }
  for (const admission::FlavorAttemptView& attempt : e.attempts) {
    v1::FlavorAttempt* a = response->add_attempts();
    a->set_pod_set(attempt.pod_set);
    a->set_flavor(attempt.flavor);
    a->set_mode(attempt.mode);
    for (const std::string& reason : attempt.reasons) a->add_reasons(reason);
    for (const admission::ResourceShortage& shortage : attempt.shortages) {
      v1::ResourceShortage* out = a->add_shortages();
      out->set_resource(shortage.resource);
      out->set_requested(QuantityText(shortage.resource, shortage.requested));
      out->set_available(QuantityText(shortage.resource, shortage.available));
      out->set_nominal_quota(
          QuantityText(shortage.resource, shortage.nominal_quota));
      if (shortage.borrowing_limit.has_value()) {
        out->set_borrowing_limit(
            QuantityText(shortage.resource, *shortage.borrowing_limit));
      }
    }
  }
  FillVictims(e.victims, response->mutable_victims());
  HideVictimsOutOfSight(*principal, response->mutable_victims());
  response->set_admissions_per_minute(result->admissions_per_minute);
  if (result->estimated_start.has_value()) {
    *response->mutable_estimated_start_time() =
        codec::ToProto(*result->estimated_start);
  }
  if (copies_) {
    for (v1::MultiKueueCopyState& copy :
         copies_({request->namespace_(), request->name()})) {
      *response->add_multikueue_copies() = std::move(copy);
    }
  }
  return grpc::Status::OK;
}

grpc::Status QueueServiceImpl::Simulate(grpc::ServerContext* context,
                                        const v1::SimulateRequest* request,
                                        v1::SimulateResponse* response) {
  // Kubernetes authorizes a dry run as the request itself: a create.
  const v1::ObjectMeta& meta = request->workload().metadata();
  absl::StatusOr<auth::Principal> principal = access_.Check(
      *context,
      request->has_workload()
          ? WorkloadRequest("create", meta.namespace_(), meta.name())
          : WorkloadRequest("get", request->namespace_(), request->name()));
  if (!principal.ok()) return ToGrpcStatus(principal.status());
  std::optional<Workload> workload;
  if (request->has_workload()) {
    absl::StatusOr<Workload> wl = codec::FromClientProto(request->workload());
    if (!wl.ok()) return ToGrpcStatus(About("workload", wl.status()));
    workload = *std::move(wl);
  } else if (request->name().empty() || request->namespace_().empty()) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        "namespace and name, or workload: required"));
  }
  absl::StatusOr<admission::WhatIf> what_if = engine_.Simulate(
      std::move(workload), {request->namespace_(), request->name()});
  if (!what_if.ok()) return ToGrpcStatus(what_if.status());
  response->set_admissible(what_if->admissible);
  *response->mutable_workload() =
      codec::ToProto(what_if->workload, request->template_form());
  FillVictims(what_if->victims, response->mutable_victims());
  HideVictimsOutOfSight(*principal, response->mutable_victims());
  response->set_reason(what_if->reason);
  response->set_message(what_if->message);
  return grpc::Status::OK;
}

absl::Status ValidatePendingWorkloadsRequest(
    const v1::PendingWorkloadsRequest& request) {
  if (!request.cluster_queue().empty()) {
    if (!request.local_queue().empty()) {
      return absl::InvalidArgumentError(
          "local_queue: must be empty when cluster_queue is set");
    }
    if (!request.namespace_().empty()) {
      return absl::InvalidArgumentError(
          "namespace: must be empty when cluster_queue is set (a "
          "ClusterQueue has no namespace)");
    }
  } else if (request.local_queue().empty()) {
    return absl::InvalidArgumentError(
        request.namespace_().empty()
            ? "cluster_queue: required, or namespace and local_queue"
            : "local_queue: required with namespace");
  } else if (request.namespace_().empty()) {
    return absl::InvalidArgumentError("namespace: required with local_queue");
  }
  if (absl::Status s = engine::ValidatePendingWorkloadsOffset(request.offset());
      !s.ok()) {
    return s;
  }
  return engine::ValidatePendingWorkloadsLimit(request.limit());
}

grpc::Status QueueServiceImpl::PendingWorkloads(
    grpc::ServerContext* context, const v1::PendingWorkloadsRequest* request,
    v1::PendingWorkloadsResponse* response) {
  // Kueue's visibility API: the pendingworkloads subresource of the queue.
  auth::Attributes asked;
  asked.verb = "get";
  asked.api_group = auth::kVisibilityGroup;
  asked.subresource = "pendingworkloads";
  if (!request->cluster_queue().empty()) {
    asked.resource = "clusterqueues";
    asked.name = request->cluster_queue();
  } else {
    asked.resource = "localqueues";
    asked.namespace_name = request->namespace_();
    asked.name = request->local_queue();
  }
  if (absl::StatusOr<auth::Principal> p = access_.Check(*context, asked);
      !p.ok()) {
    return ToGrpcStatus(p.status());
  }
  if (absl::Status s = ValidatePendingWorkloadsRequest(*request); !s.ok()) {
    return ToGrpcStatus(s);
  }
  const engine::PendingWorkloadOptions options{.offset = request->offset(),
                                               .limit = request->limit()};
  absl::StatusOr<engine::Listed<engine::PendingWorkload>> listed =
      request->cluster_queue().empty()
          ? engine_.PendingWorkloadsInLocalQueue(
                {request->namespace_(), request->local_queue()}, options)
          : engine_.PendingWorkloadsInClusterQueue(request->cluster_queue(),
                                                   options);
  if (!listed.ok()) return ToGrpcStatus(listed.status());
  response->mutable_items()->Reserve(static_cast<int>(listed->items.size()));
  for (const engine::PendingWorkload& p : listed->items) {
    v1::PendingWorkload* item = response->add_items();
    v1::ObjectMeta* meta = item->mutable_metadata();
    meta->set_name(p.name);
    meta->set_namespace_(p.namespace_name);
    meta->set_uid(p.uid.str());
    *meta->mutable_creation_timestamp() = codec::ToProto(p.creation_timestamp);
    item->set_priority(p.priority);
    item->set_local_queue_name(p.local_queue_name);
    item->set_position_in_cluster_queue(p.position_in_cluster_queue);
    item->set_position_in_local_queue(p.position_in_local_queue);
  }
  response->set_revision(listed->revision);
  return grpc::Status::OK;
}

void QueueServiceImpl::HideVictimsOutOfSight(
    const auth::Principal& principal,
    google::protobuf::RepeatedPtrField<v1::PreemptionVictim>* victims) const {
  if (!access_.access().enabled()) return;
  for (v1::PreemptionVictim& v : *victims) {
    if (!access_.Allows(principal,
                        WorkloadRequest("get", v.namespace_(), v.name()))) {
      // Another team's workload: that one would be preempted, and why,
      // but not whose or where.
      v.clear_namespace_();
      v.clear_name();
      v.clear_cluster_queue();
    }
  }
}

absl::Status QueueServiceImpl::AuthorizeRun(
    const grpc::ServerContextBase& context, const std::string& namespace_name,
    const std::string& name) {
  KQ_ASSIGN_OR_RETURN(auth::Principal principal, access_.Authenticate(context));
  const auth::Attributes run = WorkloadRequest("run", namespace_name, name);
  if (!access_.Allows(principal, run) && access_.access().owner_may_run()) {
    // A workload that does not exist, or is someone else's, is refused
    // alike below.
    absl::StatusOr<engine::WorkloadView> view =
        engine_.GetWorkload({namespace_name, name});
    if (view.ok()) {
      auto submitter =
          view->workload.meta.annotations.find(auth::kSubmitterAnnotation);
      if (submitter != view->workload.meta.annotations.end() &&
          submitter->second == principal.user.name) {
        access_.RecordAllowed(context, run, kOwnerRuleReason);
        return absl::OkStatus();
      }
    }
  }
  return access_.Authorize(context, principal, run);
}

absl::StatusOr<auth::Principal> QueueServiceImpl::AuthorizeAdmit(
    const grpc::ServerContextBase& context, const v1::AdmitRequest& request) {
  const bool submits = request.has_workload();
  const std::string& ns = submits ? request.workload().metadata().namespace_()
                                  : request.namespace_();
  const std::string& name =
      submits ? request.workload().metadata().name() : request.name();
  KQ_ASSIGN_OR_RETURN(
      auth::Principal principal,
      access_.Check(context,
                    WorkloadRequest(submits ? "create" : "get", ns, name)));
  if (submits) {
    KQ_RETURN_IF_ERROR(access_.Authorize(context, principal,
                                         WorkloadRequest("get", ns, name)));
  }
  // A runner_id takes the runner's lease: the runner's right, as
  // Heartbeat's, or the owner rule (the caller submits it here, or did).
  if (!request.runner_id().empty()) {
    const auth::Attributes run = WorkloadRequest("run", ns, name);
    if (submits && access_.access().owner_may_run()) {
      // The workload it submits is its own; the audit keeps the create.
    } else if (!submits) {
      KQ_RETURN_IF_ERROR(AuthorizeRun(context, ns, name));
    } else {
      KQ_RETURN_IF_ERROR(access_.Authorize(context, principal, run));
    }
  }
  return principal;
}

namespace {

// Every kind a Watch may carry.
constexpr ObjectKind kWatchableKinds[] = {
    ObjectKind::kWorkload,
    ObjectKind::kNamespace,
    ObjectKind::kResourceFlavor,
    ObjectKind::kClusterQueue,
    ObjectKind::kCohort,
    ObjectKind::kLocalQueue,
    ObjectKind::kWorkloadPriorityClass,
    ObjectKind::kAdmissionCheck,
    ObjectKind::kProvisioningRequestConfig,
    ObjectKind::kMultiKueueConfig,
    ObjectKind::kMultiKueueCluster};

}  // namespace

// Where a watch's events go: Watch writes each as it comes, WatchBatches
// gathers the events of one read of the log into one message.
class QueueServiceImpl::WatchSink {
 public:
  virtual ~WatchSink() = default;
  // False once the client is gone.
  virtual bool Add(v1::WatchEvent event) = 0;
  // Sends what Add gathered; false once the client is gone.
  virtual bool Flush() = 0;
};

namespace {

class EventSink : public QueueServiceImpl::WatchSink {
 public:
  explicit EventSink(grpc::ServerWriter<v1::WatchEvent>* writer)
      : writer_(writer) {}
  // One write per event: gRPC 1.51's buffer hint (one flush per read)
  // stalled streams, python_watch_test hung in 5 of 10 runs.
  bool Add(v1::WatchEvent event) override { return writer_->Write(event); }
  bool Flush() override { return true; }

 private:
  grpc::ServerWriter<v1::WatchEvent>* const writer_;
};

class BatchSink : public QueueServiceImpl::WatchSink {
 public:
  explicit BatchSink(grpc::ServerWriter<v1::WatchBatch>* writer)
      : writer_(writer) {}
  bool Add(v1::WatchEvent event) override {
    const size_t size = event.ByteSizeLong();
    // A message stays well under gRPC's 4 MiB default receive limit: it
    // grows past kMaxBytes only by one event, and an event that large
    // would not pass Watch either.
    if (bytes_ > 0 && bytes_ + size > kMaxBytes && !Flush()) return false;
    *batch_.add_events() = std::move(event);
    bytes_ += size;
    return true;
  }
  bool Flush() override {
    if (batch_.events().empty()) return true;
    const bool ok = writer_->Write(batch_);
    batch_.Clear();
    bytes_ = 0;
    return ok;
  }

 private:
  static constexpr size_t kMaxBytes = 1 << 20;
  grpc::ServerWriter<v1::WatchBatch>* const writer_;
  v1::WatchBatch batch_;
  size_t bytes_ = 0;
};

}  // namespace

grpc::Status QueueServiceImpl::Watch(
    grpc::ServerContext* context, const v1::WatchRequest* request,
    grpc::ServerWriter<v1::WatchEvent>* writer) {
  EventSink sink(writer);
  return ServeWatch(context, *request, sink);
}

grpc::Status QueueServiceImpl::WatchBatches(
    grpc::ServerContext* context, const v1::WatchRequest* request,
    grpc::ServerWriter<v1::WatchBatch>* writer) {
  BatchSink sink(writer);
  return ServeWatch(context, *request, sink);
}

grpc::Status QueueServiceImpl::ServeWatch(grpc::ServerContext* context,
                                          const v1::WatchRequest& asked,
                                          WatchSink& sink) {
  absl::StatusOr<auth::Principal> principal = access_.Authenticate(*context);
  if (!principal.ok()) return ToGrpcStatus(principal.status());
  // Kinds named are each authorized (a refusal names the first); with
  // none named, the stream carries the kinds the caller may watch, and is
  // refused only when that is none.
  v1::WatchRequest filter = asked;
  if (!access_.access().enabled()) {
    access_.RecordAllowed(*context, WorkloadRequest("watch", ""),
                          "authorization is off");
  } else if (!asked.kinds().empty()) {
    for (const std::string& text : asked.kinds()) {
      ObjectKind kind;
      if (!ParseKind(text, &kind)) {
        return ToGrpcStatus(absl::InvalidArgumentError(
            absl::StrCat("kinds: unknown kind \"", text, "\"")));
      }
      if (absl::Status s = access_.Authorize(
              *context, *principal,
              ObjectRequest("watch", kind, asked.namespace_(), ""));
          !s.ok()) {
        return ToGrpcStatus(s);
      }
    }
  } else {
    for (ObjectKind kind : kWatchableKinds) {
      if (access_.Allows(*principal, ObjectRequest("watch", kind,
                                                   asked.namespace_(), ""))) {
        filter.add_kinds(KindName(kind));
      }
    }
    const auth::Attributes workloads =
        WorkloadRequest("watch", asked.namespace_());
    if (filter.kinds().empty()) {
      return ToGrpcStatus(access_.Authorize(*context, *principal, workloads));
    }
    access_.RecordAllowed(*context, workloads,
                          absl::StrCat("RBAC: watching the kinds allowed: ",
                                       absl::StrJoin(filter.kinds(), ", ")));
  }
  const v1::WatchRequest* request = &filter;
  engine::EventLog& log = engine_.event_log();
  int64_t after =
      request->has_from_revision() ? request->from_revision() : log.revision();
  // Workloads this stream delivered as holding quota in the filtered
  // ClusterQueue.
  std::set<NamespacedName> in_cluster_queue;
  const absl::Duration bookmark_every =
      request->has_bookmark_interval()
          ? codec::FromProto(request->bookmark_interval())
          : absl::InfiniteDuration();
  if (bookmark_every <= absl::ZeroDuration()) {
    return ToGrpcStatus(
        absl::InvalidArgumentError("bookmark_interval: must be positive"));
  }
  absl::Time last_sent = absl::Now();
  while (!context->IsCancelled()) {
    absl::StatusOr<std::vector<engine::SharedEvent>> events =
        log.Read(after, 1000, std::min(absl::Seconds(1), bookmark_every));
    if (!events.ok()) return ToGrpcStatus(events.status());
    if (absl::Now() - last_sent >= bookmark_every) {
      // Every event up to `after` was read, whether it matched or not.
      v1::WatchEvent bookmark;
      bookmark.set_type(v1::WatchEvent::BOOKMARK);
      bookmark.set_revision(after);
      if (!sink.Add(std::move(bookmark))) return grpc::Status::OK;
      last_sent = absl::Now();
    }
    for (const engine::SharedEvent& shared : *events) {
      const store::Event& event = *shared;
      after = event.revision;
      bool was_here = false;
      if (!request->cluster_queue().empty()) {
        if (const Workload* wl = std::get_if<Workload>(&event.object)) {
          const NamespacedName key = KeyOf(*wl);
          was_here = in_cluster_queue.count(key) > 0;
          if (HoldsQuota(*wl) &&
              !IsConditionTrue(wl->conditions, kConditionFinished) &&
              wl->admission->cluster_queue == request->cluster_queue()) {
            in_cluster_queue.insert(key);
          } else {
            in_cluster_queue.erase(key);
          }
        }
      }
      if (!WatchMatches(*request, event, was_here)) continue;
      if (!sink.Add(encodings_.Encode(shared, request->template_form()))) {
        return grpc::Status::OK;
      }
      last_sent = absl::Now();
    }
    if (!sink.Flush()) return grpc::Status::OK;
  }
  return grpc::Status::OK;
}

}  // namespace kq::api
