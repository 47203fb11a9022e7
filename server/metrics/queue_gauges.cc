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

// The families of one capture, in the order they are first named.
class Families {
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

// A resource amount in Kueue's metric unit: the quantity as a float, so
// cores for cpu and bytes for memory (Kueue's resource.QuantityToFloat).
double AsFloat(const Quantity& q) {
  if (q == Quantity::Max()) return kInf;
  return static_cast<double>(q.milli()) / 1000.0;
}
double AmountAsFloat(const std::string& resource, int64_t amount) {
  return AsFloat(QuantityFromAmount(resource, amount));
}

// One LocalQueue's workloads.
struct LocalQueueTally {
  int active = 0;
  int inadmissible = 0;
  int reserving = 0;
  int admitted = 0;
  cache::FlavorResourceQuantities reserved;
  cache::FlavorResourceQuantities used;
};

void AddUsage(cache::FlavorResourceQuantities& into,
              const cache::FlavorResourceQuantities& usage) {
  for (const auto& [fr, v] : usage) into[fr] = SaturatingAdd(into[fr], v);
}

void CaptureClusterQueue(const admission::AdmissionState& state,
                         const ClusterQueue& cq, Families& out) {
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
                       Families& out) {
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

std::vector<prometheus::MetricFamily> CaptureQueueGauges(
    const admission::AdmissionState& state) {
  Families out;
  // The LocalQueue tallies in one walk of the workloads, keyed by the
  // interned namespace and queue names (stable while the state is).
  absl::flat_hash_map<std::pair<const std::string*, const std::string*>,
                      LocalQueueTally>
      tallies;
  const queue::Manager& queues = state.queues();
  for (const Workload& wl : state.workloads()) {
    LocalQueueTally& tally =
        tallies[{&wl.meta.namespace_name.str(), &wl.queue_name.str()}];
    if (!HoldsQuota(wl)) {
      const NamespacedName key = KeyOf(wl);
      if (!queues.Contains(key)) continue;
      ++(queues.IsInadmissible(key) ? tally.inadmissible : tally.active);
      continue;
    }
    ++tally.reserving;
    const cache::FlavorResourceQuantities usage = cache::UsageOf(wl);
    AddUsage(tally.reserved, usage);
    if (IsConditionTrue(wl.conditions, kConditionAdmitted)) {
      ++tally.admitted;
      AddUsage(tally.used, usage);
    }
  }
  // One lookup by value per LocalQueue with workloads.
  std::map<std::pair<std::string, std::string>, const LocalQueueTally*> by_name;
  for (const auto& [names, tally] : tallies) {
    by_name.emplace(std::make_pair(*names.first, *names.second), &tally);
  }
  const LocalQueueTally none;
  for (const auto& [key, object] : state.objects()) {
    if (const auto* cq = std::get_if<ClusterQueue>(&object)) {
      CaptureClusterQueue(state, *cq, out);
    } else if (const auto* lq = std::get_if<LocalQueue>(&object)) {
      auto found = by_name.find({lq->meta.namespace_name.str(), lq->meta.name});
      const LocalQueueTally* tally =
          found == by_name.end() ? &none : found->second;
      CaptureLocalQueue(state, *lq, *tally, out);
    } else if (const auto* cohort = std::get_if<Cohort>(&object)) {
      if (!state.configuration().fair_sharing.has_value()) continue;
      const cache::CohortSnapshot* node =
          state.cache().FindCohort(cohort->meta.name);
      if (node == nullptr) continue;
      out.Set("kueue_cohort_weighted_share",
              "The cohort's share of what it borrows from its parent, "
              "divided by its fair-sharing weight (0 when not borrowing).",
              {{"cohort", cohort->meta.name}},
              cache::DominantResourceShare(*node).PreciseWeightedShare());
    }
  }
  return out.Take();
}

QueueGauges::QueueGauges(engine::Engine& engine, absl::Duration interval)
    : engine_(engine),
      interval_(interval),
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
    if (dirty_.exchange(false, std::memory_order_relaxed)) {
      auto done = std::make_shared<absl::Notification>();
      engine_.ReadState(
          [this, done](const admission::AdmissionState* state, int64_t) {
            if (state != nullptr) {
              const absl::Time start = absl::Now();
              auto captured =
                  std::make_shared<const std::vector<prometheus::MetricFamily>>(
                      CaptureQueueGauges(*state));
              const absl::Duration took = absl::Now() - start;
              absl::MutexLock lock(&mu_);
              captured_ = std::move(captured);
              capture_duration_ = took;
            } else {
              // Stopping, or the state is not the stored one: try again.
              dirty_.store(true, std::memory_order_relaxed);
            }
            done->Notify();
          });
      // The engine answers even when stopping; wait so that a capture never
      // outlives this object.
      done->WaitForNotification();
    }
    absl::MutexLock lock(&mu_);
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), interval_)) return;
  }
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
