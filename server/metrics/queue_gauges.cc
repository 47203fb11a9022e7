#include "server/metrics/queue_gauges.h"

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"

#include "server/cache/cache.h"
#include "server/cache/fair_sharing.h"
#include "server/core/conditions.h"
#include "server/core/quantity.h"
#include "server/metrics/kueue_metrics.h"

namespace kq::metrics {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

// The families of one capture, in the order they are first named.
class GaugeFamilies {
 public:
  MetricFamily& Family(const std::string& name, const std::string& help) {
    auto [it, inserted] = index_.try_emplace(name, families_.size());
    if (inserted) {
      families_.push_back({name, help, MetricType::Gauge, {}});
    }
    return families_[it->second];
  }
  void Set(const std::string& name, const std::string& help, Labels labels,
           double value) {
    labels.push_back({kReplicaRole, kStandalone});
    ClientMetric metric;
    metric.label = std::move(labels);
    metric.gauge.value = value;
    Family(name, help).metric.push_back(std::move(metric));
  }
  std::vector<MetricFamily> Take() { return std::move(families_); }

 private:
  std::vector<MetricFamily> families_;
  std::map<std::string, size_t> index_;
};

namespace {

// A resource amount in Kueue's metric unit: the quantity as a float, so
// cores for cpu and bytes for memory (Kueue's resource.QuantityToFloat).
double AsFloat(const Quantity& q) {
  if (q == Quantity::Max()) return kInf;
  return static_cast<double>(q.milli()) / 1000.0;
}
double AmountAsFloat(const std::string& resource, int64_t amount) {
  return AsFloat(QuantityFromAmount(resource, amount));
}

void AddUsage(cache::FlavorResourceQuantities& into,
              const cache::FlavorResourceQuantities& usage) {
  for (const auto& [fr, v] : usage) into[fr] = SaturatingAdd(into[fr], v);
}

void CaptureClusterQueue(const admission::AdmissionState& state,
                         const ClusterQueue& cq, GaugeFamilies& out) {
  const std::string& name = cq.meta.name;
  const admission::ObjectView view = state.ViewOf(ConfigObject(cq));
  const admission::QueueStatus& status = *view.status;
  const queue::Manager& queues = state.queues();
  out.Set("kueue_pending_workloads",
          "Pending workloads, per cluster_queue and status (active: in the "
          "queue's heap; inadmissible: parked until quota or configuration "
          "changes).",
          {{"cluster_queue", name}, {"status", "active"}},
          queues.PendingActive(name));
  out.Set("kueue_pending_workloads", "",
          {{"cluster_queue", name}, {"status", "inadmissible"}},
          queues.PendingInadmissible(name));
  out.Set("kueue_reserving_active_workloads",
          "Workloads holding a quota reservation, per cluster_queue.",
          {{"cluster_queue", name}}, status.reserving_workloads);
  out.Set("kueue_admitted_active_workloads",
          "Admitted workloads that have not finished, per cluster_queue.",
          {{"cluster_queue", name}}, status.admitted_workloads);
  const bool active = IsConditionTrue(status.conditions, kConditionActive);
  // Kueue sets one series per status, 1 for the current one; kq refuses to
  // delete a ClusterQueue that holds workloads, so it never terminates.
  for (const char* s : {"pending", "active", "terminating"}) {
    out.Set("kueue_cluster_queue_status",
            "1 for the cluster_queue's status (pending, active or "
            "terminating), 0 for the others.",
            {{"cluster_queue", name}, {"status", s}},
            (std::string(s) == "active") == active ? 1 : 0);
  }
  const std::string& cohort = cq.cohort_name;
  auto usage_series = [&](const char* metric, const char* help,
                          const std::vector<admission::FlavorUsage>& usage) {
    for (const admission::FlavorUsage& flavor : usage) {
      for (const admission::ResourceUsage& r : flavor.resources) {
        out.Set(metric, help,
                {{"cohort", cohort},
                 {"cluster_queue", name},
                 {"flavor", flavor.name},
                 {"resource", r.name}},
                AsFloat(r.total));
      }
    }
  };
  usage_series("kueue_cluster_queue_resource_reservation",
               "Quota reserved in the cluster_queue, per flavor and resource.",
               status.flavors_reservation);
  usage_series("kueue_cluster_queue_resource_usage",
               "Quota used by admitted workloads of the cluster_queue, per "
               "flavor and resource.",
               status.flavors_usage);
  for (const ResourceGroup& group : cq.resource_groups) {
    for (const FlavorQuotas& flavor : group.flavors) {
      for (const ResourceQuota& r : flavor.resources) {
        const Labels labels{{"cohort", cohort},
                            {"cluster_queue", name},
                            {"flavor", flavor.name},
                            {"resource", r.name}};
        out.Set("kueue_cluster_queue_nominal_quota",
                "The cluster_queue's nominal quota, per flavor and resource.",
                labels, AsFloat(r.nominal_quota));
        out.Set(
            "kueue_cluster_queue_borrowing_limit",
            "The cluster_queue's borrowing limit, per flavor and "
            "resource; +Inf when unset.",
            labels,
            r.borrowing_limit.has_value() ? AsFloat(*r.borrowing_limit) : kInf);
        out.Set("kueue_cluster_queue_lending_limit",
                "The cluster_queue's lending limit, per flavor and resource; "
                "+Inf when unset.",
                labels,
                r.lending_limit.has_value() ? AsFloat(*r.lending_limit) : kInf);
      }
    }
  }
  if (state.configuration().fair_sharing.has_value()) {
    if (const cache::ClusterQueueSnapshot* node =
            state.cache().FindClusterQueue(name)) {
      double share = cache::DominantResourceShare(*node).PreciseWeightedShare();
      // As Kueue: a weight of 0 reports NaN rather than +Inf.
      if (std::isinf(share)) share = std::nan("");
      out.Set("kueue_cluster_queue_weighted_share",
              "The cluster_queue's share of what it borrows from its cohort, "
              "divided by its fair-sharing weight (0 when not borrowing).",
              {{"cluster_queue", name}, {"cohort", cohort}}, share);
    }
  }
}

void CaptureLocalQueue(const admission::AdmissionState& state,
                       const LocalQueue& lq, const LocalQueueTally& tally,
                       GaugeFamilies& out) {
  const Labels who{{"name", lq.meta.name},
                   {"namespace", lq.meta.namespace_name.str()}};
  auto with = [&who](Labels more) {
    Labels labels = who;
    labels.insert(labels.end(), more.begin(), more.end());
    return labels;
  };
  out.Set("kueue_local_queue_pending_workloads",
          "Pending workloads, per local_queue and status.",
          with({{"status", "active"}}), tally.active);
  out.Set("kueue_local_queue_pending_workloads", "",
          with({{"status", "inadmissible"}}), tally.inadmissible);
  out.Set("kueue_local_queue_reserving_active_workloads",
          "Workloads holding a quota reservation, per local_queue.", who,
          tally.reserving);
  out.Set("kueue_local_queue_admitted_active_workloads",
          "Admitted workloads that have not finished, per local_queue.", who,
          tally.admitted);
  for (const auto& [why, count] : tally.unadmitted) {
    out.Set("kueue_local_queue_unadmitted_workloads",
            "Workloads not admitted, per local_queue, by the reason of their "
            "Admitted condition and the QuotaReserved reason under it.",
            with({{"cluster_queue", lq.cluster_queue},
                  {"reason", why.reason},
                  {"underlying_cause", why.underlying_cause}}),
            static_cast<double>(count));
  }
  const Condition active = state.LocalQueueActiveCondition(lq);
  for (const char* s : {kConditionTrue, kConditionFalse, "Unknown"}) {
    out.Set("kueue_local_queue_status",
            "1 for the local_queue's Active condition status (True, False or "
            "Unknown), 0 for the others.",
            with({{"active", s}}), active.status == s ? 1 : 0);
  }
  const cache::ClusterQueueSnapshot* cq =
      state.cache().FindClusterQueue(lq.cluster_queue);
  if (cq == nullptr) return;
  // Every flavor and resource the ClusterQueue covers, 0 when unused, as
  // its status lists them.
  for (const ResourceGroup& group : cq->spec.resource_groups) {
    for (const FlavorQuotas& flavor : group.flavors) {
      for (const std::string& resource : group.covered_resources) {
        const cache::FlavorResource fr{flavor.name, resource};
        auto reserved = tally.reserved.find(fr);
        auto used = tally.used.find(fr);
        const Labels labels =
            with({{"flavor", flavor.name}, {"resource", resource}});
        out.Set("kueue_local_queue_resource_reservation",
                "Quota reserved by the local_queue's workloads, per flavor "
                "and resource.",
                labels,
                reserved == tally.reserved.end()
                    ? 0
                    : AmountAsFloat(resource, reserved->second));
        out.Set("kueue_local_queue_resource_usage",
                "Quota used by the local_queue's admitted workloads, per "
                "flavor and resource.",
                labels,
                used == tally.used.end()
                    ? 0
                    : AmountAsFloat(resource, used->second));
      }
    }
  }
}

}  // namespace

GaugeCapture::GaugeCapture() : out_(std::make_unique<GaugeFamilies>()) {}
GaugeCapture::~GaugeCapture() = default;

bool GaugeCapture::Step(const admission::AdmissionState& state,
                        absl::Duration budget) {
  const absl::Time deadline = absl::Now() + budget;
  int since_check = 0;
  // The clock is read once every 256 workloads: a read costs about what a
  // workload does.
  auto out_of_time = [&](int every) {
    if (++since_check < every) return false;
    since_check = 0;
    return absl::Now() > deadline;
  };
  if (phase_ == Phase::kWorkloads) {
    const queue::Manager& queues = state.queues();
    const auto& workloads = state.workloads();
    auto it =
        started_ ? workloads.lower_bound(next_workload_) : workloads.begin();
    started_ = true;
    // The tallies of this step's LocalQueues by their interned names
    // (stable within the step), to look each name up by value once.
    absl::flat_hash_map<std::pair<const std::string*, const std::string*>,
                        LocalQueueTally*>
        by_pointer;
    for (bool first = true; it != workloads.end(); ++it, first = false) {
      const Workload& wl = *it;
      if (!first && out_of_time(256)) {
        next_workload_ = KeyOf(wl);
        return false;
      }
      LocalQueueTally*& tally =
          by_pointer[{&wl.meta.namespace_name.str(), &wl.queue_name.str()}];
      if (tally == nullptr) {
        tally = &tallies_[{wl.meta.namespace_name.str(), wl.queue_name.str()}];
      }
      if (std::optional<UnadmittedReason> why = UnadmittedReasonOf(wl)) {
        ++tally->unadmitted[*why];
      }
      if (!HoldsQuota(wl)) {
        switch (queues.WhereQueued(KeyOf(wl))) {
          case queue::Manager::Queued::kNo:
            break;
          case queue::Manager::Queued::kActive:
            ++tally->active;
            break;
          case queue::Manager::Queued::kInadmissible:
            ++tally->inadmissible;
            break;
        }
        continue;
      }
      ++tally->reserving;
      const cache::FlavorResourceQuantities usage = cache::UsageOf(wl);
      AddUsage(tally->reserved, usage);
      if (IsConditionTrue(wl.conditions, kConditionAdmitted)) {
        ++tally->admitted;
        AddUsage(tally->used, usage);
      }
    }
    phase_ = Phase::kObjects;
    started_ = false;
  }
  if (phase_ == Phase::kObjects) {
    const auto& objects = state.objects();
    auto it = started_ ? objects.lower_bound(next_object_) : objects.begin();
    started_ = true;
    const LocalQueueTally none;
    // Each step takes at least one object, so that a capture always ends.
    for (bool first = true; it != objects.end(); ++it, first = false) {
      if (!first && out_of_time(1)) {
        next_object_ = it->first;
        return false;
      }
      const ConfigObject& object = it->second;
      if (const auto* cq = std::get_if<ClusterQueue>(&object)) {
        CaptureClusterQueue(state, *cq, *out_);
      } else if (const auto* lq = std::get_if<LocalQueue>(&object)) {
        auto found =
            tallies_.find({lq->meta.namespace_name.str(), lq->meta.name});
        const LocalQueueTally& tally =
            found == tallies_.end() ? none : found->second;
        CaptureLocalQueue(state, *lq, tally, *out_);
        // As Kueue, a workload counts under the ClusterQueue its
        // LocalQueue names, which may not exist.
        for (const auto& [why, count] : tally.unadmitted) {
          unadmitted_[lq->cluster_queue][why] += count;
        }
      } else if (const auto* cohort = std::get_if<Cohort>(&object)) {
        if (!state.configuration().fair_sharing.has_value()) continue;
        const cache::CohortSnapshot* node =
            state.cache().FindCohort(cohort->meta.name);
        if (node == nullptr) continue;
        out_->Set("kueue_cohort_weighted_share",
                  "The cohort's share of what it borrows from its parent, "
                  "divided by its fair-sharing weight (0 when not borrowing).",
                  {{"cohort", cohort->meta.name}},
                  cache::DominantResourceShare(*node).PreciseWeightedShare());
      }
    }
    for (const auto& [cluster_queue, reasons] : unadmitted_) {
      for (const auto& [why, count] : reasons) {
        out_->Set("kueue_unadmitted_workloads",
                  "Workloads not admitted, per cluster_queue, by the reason "
                  "of their Admitted condition and the QuotaReserved reason "
                  "under it (Kueue's UnadmittedWorkloadsObservability).",
                  {{"cluster_queue", cluster_queue},
                   {"reason", why.reason},
                   {"underlying_cause", why.underlying_cause}},
                  static_cast<double>(count));
      }
    }
    phase_ = Phase::kDone;
  }
  return true;
}

std::vector<prometheus::MetricFamily> GaugeCapture::Take() {
  return out_->Take();
}

std::vector<prometheus::MetricFamily> CaptureQueueGauges(
    const admission::AdmissionState& state) {
  GaugeCapture capture;
  capture.Step(state, absl::InfiniteDuration());
  return capture.Take();
}

QueueGauges::QueueGauges(engine::Engine& engine, absl::Duration interval,
                         absl::Duration step)
    : engine_(engine),
      interval_(interval),
      step_(step),
      captured_(
          std::make_shared<const std::vector<prometheus::MetricFamily>>()) {}

QueueGauges::~QueueGauges() { Stop(); }

void QueueGauges::OnCommitted(const engine::CommittedBatch&) {
  dirty_.store(true, std::memory_order_relaxed);
}

void QueueGauges::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void QueueGauges::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void QueueGauges::Loop() {
  while (true) {
    if (dirty_.exchange(false, std::memory_order_relaxed)) Capture();
    absl::MutexLock lock(&mu_);
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), interval_)) return;
  }
}

void QueueGauges::Capture() {
  GaugeCapture capture;
  absl::Duration longest;
  while (true) {
    struct Answer {
      absl::Notification done;
      bool complete = false;
      bool refused = false;
      absl::Duration took;
    };
    auto answer = std::make_shared<Answer>();
    engine_.ReadState([this, &capture, answer](
                          const admission::AdmissionState* state, int64_t) {
      if (state == nullptr) {
        answer->refused = true;
      } else {
        const absl::Time start = absl::Now();
        answer->complete = capture.Step(*state, step_);
        answer->took = absl::Now() - start;
      }
      answer->done.Notify();
    });
    // The engine answers even when stopping; waiting also keeps `capture`
    // alive for the step.
    answer->done.WaitForNotification();
    if (answer->refused) {
      // Stopping, or the state is not the stored one: try again later.
      dirty_.store(true, std::memory_order_relaxed);
      return;
    }
    longest = std::max(longest, answer->took);
    if (answer->complete) break;
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
  }
  auto captured = std::make_shared<const std::vector<prometheus::MetricFamily>>(
      capture.Take());
  absl::MutexLock lock(&mu_);
  captured_ = std::move(captured);
  capture_duration_ = longest;
}

std::vector<prometheus::MetricFamily> QueueGauges::Collect() const {
  std::shared_ptr<const std::vector<prometheus::MetricFamily>> captured;
  {
    absl::MutexLock lock(&mu_);
    captured = captured_;
  }
  return *captured;
}

absl::Duration QueueGauges::last_capture_duration() const {
  absl::MutexLock lock(&mu_);
  return capture_duration_;
}

}  // namespace kq::metrics
