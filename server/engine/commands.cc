// The engine's commands: what each public call does on the engine thread,
// and the reads.

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "spdlog/spdlog.h"

#include "base/status_macros.h"
#include "server/core/validation.h"
#include "server/engine/engine.h"
#include "server/engine/engine_call.h"

namespace kq::engine {

void Engine::NameIfGenerated(Workload& wl) {
  if (!wl.meta.name.empty() || wl.meta.generate_name.empty()) return;
  do {
    wl.meta.name = names_.GenerateName(wl.meta.generate_name);
  } while (state_.FindWorkload(KeyOf(wl)) != nullptr);
}

const Workload* Engine::FindInMemory(const NamespacedName& key) const {
  if (const Workload* wl = state_.FindWorkload(key)) return wl;
  auto finished = finished_in_batch_.find(key);
  if (finished != finished_in_batch_.end()) return &finished->second;
  return state_.FindRecentlyFinished(key);
}

absl::StatusOr<std::optional<Workload>> Engine::LookupWorkload(
    const NamespacedName& key) {
  const Workload* in_memory = FindInMemory(key);
  if (in_memory == nullptr) return store_.GetWorkload(key);
  Workload wl = *in_memory;
  KQ_RETURN_IF_ERROR(AttachPodTemplates(wl));
  return wl;
}

absl::Status Engine::AttachPodTemplates(Workload& wl) {
  if (!store::NeedsPodTemplates(wl)) return absl::OkStatus();
  // A workload created by the batch being built: not in the store yet.
  auto pending = batch_templates_.find(wl.meta.uid);
  if (pending != batch_templates_.end()) {
    return store::FillPodTemplates(wl, pending->second);
  }
  return store_.AttachPodTemplates(wl);
}

absl::StatusOr<ApplyResult> Engine::DoSubmit(Workload wl, bool from_apply) {
  NamespacedName key = KeyOf(wl);
  KQ_ASSIGN_OR_RETURN(std::optional<Workload> existing, LookupWorkload(key));
  if (existing.has_value()) {
    if (!from_apply) {
      return absl::AlreadyExistsError(
          absl::StrCat(Describe(key), " already exists"));
    }
    return ApplyResult{"unchanged", *existing, {}};
  }
  // The templates go to disk with this batch; the state holds none.
  wl.meta.uid = names_.NewUid();
  std::vector<store::PodTemplate> templates = store::DetachPodTemplates(wl);
  // Workloads submitted in one batch keep their arrival order: each gets
  // its own creation instant, so FIFO ties never fall to random UIDs.
  const Uid uid = wl.meta.uid;
  const Workload& added = state_.AddWorkload(
      std::move(wl), uid, batch_now_ + absl::Nanoseconds(submitted_++));
  ApplyResult result{"created", added, {}};
  if (templates.empty()) return result;
  std::vector<store::PodTemplate>& kept = batch_templates_[uid];
  kept = std::move(templates);
  KQ_RETURN_IF_ERROR(
      store::FillPodTemplates(std::get<Workload>(result.object), kept));
  return result;
}

absl::StatusOr<std::vector<ApplyResult>> Engine::DoApply(
    std::vector<ConfigObject>& objects, std::vector<Workload>& workloads) {
  // 1. Validate everything before changing anything.
  for (const ConfigObject& object : objects) {
    ObjectKey key = KeyOf(object);
    absl::Status valid = ValidateConfigObject(object);
    if (!valid.ok()) return About(Describe(key), valid);
    if (const auto* lq = std::get_if<LocalQueue>(&object)) {
      auto old = state_.local_queues().find({key.namespace_name, key.name});
      if (old != state_.local_queues().end() &&
          old->second.cluster_queue != lq->cluster_queue) {
        return absl::InvalidArgumentError(absl::StrCat(
            Describe(key), ": spec.clusterQueue: field is immutable (was \"",
            old->second.cluster_queue, "\")"));
      }
    }
  }
  for (Workload& wl : workloads) {
    NameIfGenerated(wl);
    KQ_RETURN_IF_ERROR(ValidateSubmittedWorkload(wl));
    KQ_RETURN_IF_ERROR(state_.CheckPriorityClass(wl, objects));
  }

  // 2. Apply the configuration objects.
  std::vector<ApplyResult> results;
  for (ConfigObject& object : objects) {
    ObjectKey key = KeyOf(object);
    ApplyResult result;
    result.warnings = ConfigWarnings(object);
    result.action =
        state_.PutObject(std::move(object), names_.NewUid(), batch_now_);
    result.object = *state_.FindObject(key);
    results.push_back(std::move(result));
  }
  // References that do not resolve yet: accepted, as Kueue accepts them.
  for (ApplyResult& result : results) {
    const ConfigObject& object = std::get<ConfigObject>(result.object);
    if (const auto* lq = std::get_if<LocalQueue>(&object)) {
      if (!state_.cluster_queues().count(lq->cluster_queue)) {
        result.warnings.push_back(absl::StrCat(
            "LocalQueue \"", lq->meta.namespace_name.str(), "/", lq->meta.name,
            "\": ClusterQueue \"", lq->cluster_queue,
            "\" does not exist yet; the LocalQueue is inactive "
            "(ClusterQueueDoesNotExist) until it does"));
      }
    } else if (const auto* cq = std::get_if<ClusterQueue>(&object)) {
      std::vector<std::string> missing;
      for (const ResourceGroup& g : cq->resource_groups) {
        for (const FlavorQuotas& f : g.flavors) {
          if (!state_.flavors().count(f.name)) missing.push_back(f.name);
        }
      }
      if (!missing.empty()) {
        result.warnings.push_back(
            absl::StrCat("ClusterQueue \"", cq->meta.name,
                         "\": ResourceFlavor(s) ", absl::StrJoin(missing, ", "),
                         " do not exist yet; the ClusterQueue is inactive "
                         "(FlavorNotFound) until they do"));
      }
      std::vector<std::string> missing_checks;
      for (const AdmissionCheckStrategyRule& r : cq->admission_checks) {
        if (!state_.admission_checks().count(r.name)) {
          missing_checks.push_back(r.name);
        }
      }
      if (!missing_checks.empty()) {
        result.warnings.push_back(absl::StrCat(
            "ClusterQueue \"", cq->meta.name, "\": AdmissionCheck(s) ",
            absl::StrJoin(missing_checks, ", "),
            " do not exist yet; the ClusterQueue is inactive "
            "(AdmissionCheckNotFound) until they do"));
      }
    }
  }
  // Workloads submitted below must see the new queues.
  if (state_.config_changed()) state_.Rebuild(batch_now_);

  // 3. Submit the workloads.
  for (Workload& wl : workloads) {
    KQ_ASSIGN_OR_RETURN(ApplyResult result, DoSubmit(std::move(wl), true));
    results.push_back(std::move(result));
  }
  return results;
}

absl::StatusOr<std::vector<ApplyResult>> Engine::Apply(
    std::vector<ConfigObject> objects, std::vector<Workload> workloads) {
  return Call<std::vector<ApplyResult>>(
      [this, objects = std::move(objects),
       workloads = std::move(workloads)]() mutable {
        return DoApply(objects, workloads);
      });
}

absl::Status Engine::Delete(const ObjectKey& key) {
  return Call<bool>([this, key]() -> absl::StatusOr<bool> {
           KQ_RETURN_IF_ERROR(state_.RemoveObject(key));
           return true;
         })
      .status();
}

absl::StatusOr<WorkloadView> Engine::Submit(Workload workload) {
  return Wait<WorkloadView>(
      [&](SubmitDone done) { Submit(std::move(workload), std::move(done)); });
}

void Engine::Submit(Workload workload, SubmitDone done) {
  // Answered after the commit, in the same batch: the view carries the
  // batch's revision and what its passes did (one engine round trip).
  ChangeThenReadAsync<WorkloadView>(
      [this, workload = std::move(
                 workload)]() mutable -> absl::StatusOr<NamespacedName> {
        NameIfGenerated(workload);
        const NamespacedName key = KeyOf(workload);
        KQ_RETURN_IF_ERROR(ValidateSubmittedWorkload(workload));
        KQ_RETURN_IF_ERROR(state_.CheckPriorityClass(workload, {}));
        KQ_RETURN_IF_ERROR(DoSubmit(std::move(workload), false).status());
        return key;
      },
      [this](Workload wl) {
        return state_.ViewOf(std::move(wl), /*with_position=*/false);
      },
      std::move(done));
}

absl::StatusOr<WorkloadView> Engine::GetWorkload(const NamespacedName& key) {
  return Call<WorkloadView>([this, key]() -> absl::StatusOr<WorkloadView> {
    KQ_ASSIGN_OR_RETURN(std::optional<Workload> wl, LookupWorkload(key));
    if (!wl.has_value()) {
      return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
    }
    return state_.ViewOf(*std::move(wl));
  });
}

absl::StatusOr<Listed<Workload>> Engine::ListWorkloads(
    const WorkloadFilter& filter) {
  return Call<Listed<Workload>>([this,
                                 filter]() -> absl::StatusOr<Listed<Workload>> {
    Listed<Workload> listed;
    auto keep = [&](const Workload& wl) {
      if (!filter.namespace_name.empty() &&
          wl.meta.namespace_name != filter.namespace_name) {
        return false;
      }
      if (!filter.queue_name.empty() && wl.queue_name != filter.queue_name) {
        return false;
      }
      if (!filter.cluster_queue.empty() &&
          state_.ClusterQueueForWorkload(wl) != filter.cluster_queue) {
        return false;
      }
      if (!filter.origin.empty() &&
          (!wl.remote.has_value() || wl.remote->origin != filter.origin)) {
        return false;
      }
      return true;
    };
    // Workloads are keyed by namespace first: one namespace is one range.
    const auto& workloads = state_.workloads();
    auto it =
        filter.namespace_name.empty()
            ? workloads.begin()
            : workloads.lower_bound(NamespacedName{filter.namespace_name, ""});
    for (; it != workloads.end(); ++it) {
      if (!filter.namespace_name.empty() &&
          it->meta.namespace_name != filter.namespace_name) {
        break;
      }
      if (!keep(*it)) continue;
      listed.items.push_back(*it);
      if (!filter.without_templates) {
        KQ_RETURN_IF_ERROR(AttachPodTemplates(listed.items.back()));
      }
    }
    if (filter.include_finished) {
      KQ_ASSIGN_OR_RETURN(std::vector<Workload> finished,
                          store_.ListFinishedWorkloads(filter.namespace_name));
      for (Workload& wl : finished) {
        if (keep(wl)) listed.items.push_back(std::move(wl));
      }
      std::sort(listed.items.begin(), listed.items.end(),
                [](const Workload& a, const Workload& b) {
                  return KeyOf(a) < KeyOf(b);
                });
    }
    listed.revision = revision_;
    return listed;
  });
}

template <typename T>
void Engine::ChangeThenReadAsync(
    std::function<absl::StatusOr<NamespacedName>()> change,
    std::function<T(Workload)> read,
    std::function<void(absl::StatusOr<T>)> done) {
  auto shared_done =
      std::make_shared<std::function<void(absl::StatusOr<T>)>>(std::move(done));
  const bool posted = Post(
      [this, change = std::move(change), read = std::move(read), shared_done] {
        absl::StatusOr<NamespacedName> changed = change();
        // Replies run on this thread after the commit, so the workload read
        // here carries the batch's revision and what its passes did.
        replies_.push_back([this, read, shared_done,
                            changed](const absl::Status& commit) {
          if (!changed.ok()) return (*shared_done)(changed.status());
          if (!commit.ok()) return (*shared_done)(commit);
          absl::StatusOr<std::optional<Workload>> wl = LookupWorkload(*changed);
          if (!wl.ok()) return (*shared_done)(wl.status());
          if (!wl->has_value()) {
            return (*shared_done)(absl::NotFoundError(
                absl::StrCat(Describe(*changed), " not found")));
          }
          (*shared_done)(read(**std::move(wl)));
        });
      },
      [shared_done](const absl::Status& status) { (*shared_done)(status); });
  if (!posted) {
    (*shared_done)(absl::UnavailableError("kqd is shutting down"));
  }
}

absl::StatusOr<Workload> Engine::ChangeWorkload(
    const NamespacedName& key, std::function<absl::Status()> change) {
  return Wait<Workload>([&](WorkloadDone done) {
    ChangeWorkload(key, std::move(change), std::move(done));
  });
}

void Engine::ChangeWorkload(const NamespacedName& key,
                            std::function<absl::Status()> change,
                            WorkloadDone done) {
  ChangeThenReadAsync<Workload>(
      [key, change = std::move(change)]() -> absl::StatusOr<NamespacedName> {
        KQ_RETURN_IF_ERROR(change());
        return key;
      },
      [](Workload wl) { return wl; }, std::move(done));
}

absl::StatusOr<Workload> Engine::Cancel(const NamespacedName& key) {
  return Wait<Workload>(
      [&](WorkloadDone done) { Cancel(key, std::move(done)); });
}

void Engine::Cancel(const NamespacedName& key, WorkloadDone done) {
  ChangeWorkload(
      key,
      [this, key]() -> absl::Status {
        KQ_RETURN_IF_ERROR(CheckUnfinished(key));
        return state_
            .FinishWorkload(key, "Cancelled", "The workload was cancelled",
                            batch_now_)
            .status();
      },
      std::move(done));
}

absl::StatusOr<Workload> Engine::Finish(const NamespacedName& key,
                                        bool succeeded,
                                        const std::string& message) {
  return Wait<Workload>([&](WorkloadDone done) {
    Finish(key, succeeded, message, std::move(done));
  });
}

void Engine::Finish(const NamespacedName& key, bool succeeded,
                    const std::string& message, WorkloadDone done) {
  ChangeWorkload(
      key,
      [this, key, succeeded, message]() -> absl::Status {
        KQ_RETURN_IF_ERROR(CheckUnfinished(key));
        const Workload* wl = state_.FindWorkload(key);
        if (!HoldsQuota(*wl)) {
          return absl::FailedPreconditionError(absl::StrCat(
              Describe(key),
              " holds no quota reservation; only admitted workloads finish "
              "(use cancel to drop a pending one)"));
        }
        std::string text = message;
        if (text.empty()) {
          text = succeeded ? "Job finished successfully" : "Job failed";
        }
        return state_
            .FinishWorkload(key, succeeded ? "Succeeded" : "Failed", text,
                            batch_now_)
            .status();
      },
      std::move(done));
}

absl::StatusOr<Workload> Engine::SetAdmissionCheckState(
    const NamespacedName& key, const std::string& check,
    const std::string& state, const std::string& message,
    std::optional<int32_t> requeue_after_seconds,
    std::vector<PodSetUpdate> pod_set_updates) {
  return ChangeWorkload(
      key,
      [this, key, check, state, message, requeue_after_seconds,
       pod_set_updates = std::move(pod_set_updates)]() -> absl::Status {
        KQ_RETURN_IF_ERROR(CheckUnfinished(key));
        // The updates are checked against the templates' labels.
        std::optional<Workload> with_templates;
        const Workload* wl = state_.FindWorkload(key);
        if (!pod_set_updates.empty() && store::NeedsPodTemplates(*wl)) {
          with_templates = *wl;
          KQ_RETURN_IF_ERROR(AttachPodTemplates(*with_templates));
        }
        return state_
            .SetAdmissionCheckState(
                key, check, state, message, requeue_after_seconds, batch_now_,
                pod_set_updates,
                with_templates.has_value() ? &*with_templates : nullptr)
            .status();
      });
}

absl::StatusOr<ExplainResult> Engine::Explain(const NamespacedName& key) {
  return Call<ExplainResult>([this, key]() -> absl::StatusOr<ExplainResult> {
    KQ_RETURN_IF_ERROR(CheckUnfinished(key));
    const absl::Time now = clock_.TimeNow();
    ExplainResult result;
    KQ_ASSIGN_OR_RETURN(result.explanation,
                        admission::Explain(state_, key, now));
    KQ_RETURN_IF_ERROR(AttachPodTemplates(result.explanation.workload));
    const std::string& cq = result.explanation.cluster_queue;
    result.admissions_per_minute = admission_rate_.PerMinute(cq, now);
    if (result.explanation.position_in_cluster_queue.has_value()) {
      result.estimated_start = admission_rate_.EstimatedStart(
          cq, *result.explanation.position_in_cluster_queue, now);
    }
    return result;
  });
}

absl::StatusOr<Listed<admission::PendingWorkload>>
Engine::PendingWorkloadsInClusterQueue(
    const std::string& cluster_queue,
    const admission::PendingWorkloadOptions& options) {
  using Result = Listed<admission::PendingWorkload>;
  return Call<Result>([this, cluster_queue,
                       options]() -> absl::StatusOr<Result> {
    Result listed;
    KQ_ASSIGN_OR_RETURN(listed.items, admission::PendingWorkloadsInClusterQueue(
                                          state_, cluster_queue, options));
    listed.revision = revision_;
    return listed;
  });
}

absl::StatusOr<Listed<admission::PendingWorkload>>
Engine::PendingWorkloadsInLocalQueue(
    const NamespacedName& local_queue,
    const admission::PendingWorkloadOptions& options) {
  using Result = Listed<admission::PendingWorkload>;
  return Call<Result>([this, local_queue, options]() -> absl::StatusOr<Result> {
    Result listed;
    KQ_ASSIGN_OR_RETURN(listed.items, admission::PendingWorkloadsInLocalQueue(
                                          state_, local_queue, options));
    listed.revision = revision_;
    return listed;
  });
}

absl::StatusOr<admission::WhatIf> Engine::Simulate(
    std::optional<Workload> workload, const NamespacedName& key) {
  return Call<admission::WhatIf>(
      [this, workload = std::move(workload),
       key]() mutable -> absl::StatusOr<admission::WhatIf> {
        Workload subject;
        if (workload.has_value()) {
          subject = *std::move(workload);
        } else {
          // CheckUnfinished is OK only for a workload in memory.
          KQ_RETURN_IF_ERROR(CheckUnfinished(key));
          subject = *state_.FindWorkload(key);
        }
        KQ_ASSIGN_OR_RETURN(admission::WhatIf what_if,
                            admission::SimulateAdmission(
                                state_, std::move(subject), clock_.TimeNow()));
        KQ_RETURN_IF_ERROR(AttachPodTemplates(what_if.workload));
        return what_if;
      });
}

absl::Status Engine::CheckUnfinished(const NamespacedName& key) {
  if (state_.FindWorkload(key) != nullptr) return absl::OkStatus();
  KQ_ASSIGN_OR_RETURN(std::optional<Workload> stored, LookupWorkload(key));
  if (stored.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat(Describe(key), " already finished"));
  }
  return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
}

absl::StatusOr<admission::HeartbeatResult> Engine::Heartbeat(
    const NamespacedName& key, const std::string& runner_id,
    absl::Duration lease, bool stopped) {
  return Wait<admission::HeartbeatResult>([&](HeartbeatDone done) {
    Heartbeat(key, runner_id, lease, stopped, std::move(done));
  });
}

void Engine::Heartbeat(const NamespacedName& key, const std::string& runner_id,
                       absl::Duration lease, bool stopped, HeartbeatDone done) {
  ChangeThenReadAsync<admission::HeartbeatResult>(
      [this, key, runner_id, lease,
       stopped]() -> absl::StatusOr<NamespacedName> {
        KQ_RETURN_IF_ERROR(CheckUnfinished(key));
        KQ_RETURN_IF_ERROR(
            state_.Heartbeat(key, runner_id, lease, stopped, batch_now_)
                .status());
        return key;
      },
      [](Workload wl) {
        // As committed: still evicted and holding quota means stop.
        const bool stop = IsEvicting(wl);
        return admission::HeartbeatResult{std::move(wl), stop};
      },
      std::move(done));
}

absl::StatusOr<Workload> Engine::Preempt(const NamespacedName& key,
                                         const std::string& message,
                                         const std::string& actor,
                                         bool deactivate) {
  return ChangeWorkload(
      key, [this, key, message, actor, deactivate]() -> absl::Status {
        KQ_RETURN_IF_ERROR(CheckUnfinished(key));
        return state_.Preempt(key, message, actor, deactivate, batch_now_)
            .status();
      });
}

absl::StatusOr<Workload> Engine::SetWorkloadActive(const NamespacedName& key,
                                                   bool active) {
  return ChangeWorkload(key, [this, key, active]() -> absl::Status {
    KQ_RETURN_IF_ERROR(CheckUnfinished(key));
    return state_.SetActive(key, active, batch_now_).status();
  });
}

absl::StatusOr<Workload> Engine::SetReclaimablePods(
    const NamespacedName& key, std::vector<ReclaimablePod> pods) {
  return ChangeWorkload(
      key, [this, key, pods = std::move(pods)]() -> absl::Status {
        KQ_RETURN_IF_ERROR(CheckUnfinished(key));
        return state_.SetReclaimablePods(key, pods, batch_now_).status();
      });
}

absl::StatusOr<ObjectView> Engine::SetStopPolicy(const ObjectKey& key,
                                                 StopPolicy policy) {
  if (key.kind != ObjectKind::kClusterQueue &&
      key.kind != ObjectKind::kLocalQueue) {
    return absl::InvalidArgumentError(
        "kind: only a ClusterQueue or a LocalQueue has a stopPolicy");
  }
  KQ_RETURN_IF_ERROR(
      Call<std::string>([this, key, policy]() -> absl::StatusOr<std::string> {
        const ConfigObject* found = state_.FindObject(key);
        if (found == nullptr) {
          return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
        }
        ConfigObject object = *found;
        if (auto* cq = std::get_if<ClusterQueue>(&object)) {
          cq->stop_policy = policy;
        } else if (auto* lq = std::get_if<LocalQueue>(&object)) {
          lq->stop_policy = policy;
        }
        return state_.PutObject(std::move(object), names_.NewUid(), batch_now_);
      }).status());
  return GetObject(key);
}

absl::StatusOr<ObjectView> Engine::GetObject(const ObjectKey& key) {
  return Call<ObjectView>([this, key]() -> absl::StatusOr<ObjectView> {
    const ConfigObject* object = state_.FindObject(key);
    if (object == nullptr) {
      return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
    }
    return state_.ViewOf(*object);
  });
}

absl::StatusOr<Listed<ObjectView>> Engine::ListObjects(
    ObjectKind kind, const std::string& namespace_name) {
  return Call<Listed<ObjectView>>(
      [this, kind, namespace_name]() -> absl::StatusOr<Listed<ObjectView>> {
        Listed<ObjectView> listed;
        for (const auto& [key, object] : state_.objects()) {
          if (key.kind != kind) continue;
          if (!namespace_name.empty() && key.namespace_name != namespace_name) {
            continue;
          }
          listed.items.push_back(state_.ViewOf(object));
        }
        listed.revision = revision_;
        return listed;
      });
}

}  // namespace kq::engine
