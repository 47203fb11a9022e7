#include "shim/provisioning/controller.h"

#include <algorithm>
#include <iterator>
#include <thread>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "spdlog/spdlog.h"

#include "base/metrics.h"
#include "proto/util/workload.h"
#include "shim/kube/reflector.h"
#include "shim/provisioning/provisioning.h"

namespace kq::shim::provisioning {
using proto_util::IsFinished;
namespace {

constexpr char kReconciled[] = "kq_shim_provisioning_reconciles_total";
constexpr char kCreated[] = "kq_shim_provisioning_requests_created_total";
constexpr char kDeleted[] = "kq_shim_provisioning_requests_deleted_total";
constexpr char kCheckUpdates[] = "kq_shim_provisioning_check_updates_total";
constexpr char kWithoutConfig[] = "kq_shim_provisioning_checks_without_config";

void DescribeMetrics() {
  Metrics& m = Metrics::Global();
  m.Describe(kReconciled, "counter",
             "Provisioning reconciles of workloads, by result (ok, error).");
  m.Describe(kCreated, "counter",
             "ProvisioningRequests created for admission checks.");
  m.Describe(kDeleted, "counter",
             "ProvisioningRequests deleted (old attempts, evicted or "
             "finished workloads).");
  m.Describe(kCheckUpdates, "counter",
             "Admission check states written to kqd.");
  m.Describe(kWithoutConfig, "gauge",
             "AdmissionChecks of kueue.x-k8s.io/provisioning-request whose "
             "ProvisioningRequestConfig is missing or badly referenced.");
}

std::vector<json> Values(const std::map<std::string, json>* objects) {
  std::vector<json> out;
  if (objects == nullptr) return out;
  out.reserve(objects->size());
  for (const auto& [name, object] : *objects) out.push_back(object);
  return out;
}

}  // namespace

ProvisioningController::ProvisioningController(kube::Client& kube,
                                               client::Client& kq,
                                               ProvisioningOptions options)
    : kube_(kube),
      kq_(kq),
      options_(std::move(options)),
      queue_(options_.initial_backoff, options_.max_backoff) {
  DescribeMetrics();
}

ProvisioningController::~ProvisioningController() = default;

bool ProvisioningController::Synced() const {
  absl::MutexLock lock(&mu_);
  return requests_synced_ && templates_synced_ && kq_synced_;
}

bool ProvisioningController::Managed(const std::string& ns) const {
  return options_.namespace_name.empty() || ns == options_.namespace_name;
}

void ProvisioningController::Run(const std::atomic<bool>& stop) {
  if (running_.exchange(true)) {
    spdlog::error("provisioning controller: Run called twice");
    return;
  }
  if (options_.workers < 1 || options_.workers > 4) {
    spdlog::error("provisioning controller: workers must be 1 to 4, not {}",
                  options_.workers);
    return;
  }
  kube::ReflectorOptions reflector_options;
  reflector_options.label_selector =
      absl::StrCat(kManagedLabel, "=", kManagedLabelValue);
  reflector_options.initial_backoff = options_.reflector_initial_backoff;
  reflector_options.max_backoff = options_.reflector_max_backoff;
  kube::Reflector requests(
      kube_, kube::kProvisioningRequests, options_.namespace_name,
      {[this](const std::vector<json>& items) { OnRequestsSync(items); },
       [this](const kube::WatchEvent& event) { OnRequestEvent(event); }},
      reflector_options);
  kube::Reflector templates(
      kube_, kube::kPodTemplates, options_.namespace_name,
      {[this](const std::vector<json>& items) { OnTemplatesSync(items); },
       [this](const kube::WatchEvent& event) { OnTemplateEvent(event); }},
      reflector_options);
  std::thread requests_thread([&] { requests.Run(stop_); });
  std::thread templates_thread([&] { templates.Run(stop_); });

  KqReflector kq_reflector(
      kq_, options_.namespace_name,
      {[this](const KqSnapshot& listed) { OnKqListed(listed); },
       [this](const v1::WatchEvent& event) { OnKqEvent(event); }},
      {.kinds = {"AdmissionCheck", kConfigKind, "Workload"}});
  std::thread kq_thread([&] { kq_reflector.Run(); });
  std::thread ticker([this] { RunTicker(stop_); });
  std::vector<std::thread> workers;
  for (int i = 0; i < options_.workers; ++i) {
    workers.emplace_back([this] { RunWorker(); });
  }
  spdlog::info("provisioning controller started namespace={} workers={}",
               options_.namespace_name.empty() ? "*" : options_.namespace_name,
               options_.workers);

  while (!stop.load()) absl::SleepFor(absl::Milliseconds(100));

  stop_ = true;
  queue_.ShutDown();
  kq_reflector.Stop();
  requests_thread.join();
  templates_thread.join();
  kq_thread.join();
  ticker.join();
  for (std::thread& worker : workers) worker.join();
  spdlog::info("provisioning controller stopped");
}

// ---- Kubernetes inputs ----------------------------------------------------

void ProvisioningController::StoreObject(
    const std::string& plural,
    std::map<std::string, std::map<std::string, json>>& cache,
    const json& object) {
  auto tombstone = deleted_.find({plural, NamespaceOf(object), NameOf(object)});
  if (tombstone != deleted_.end()) {
    if (tombstone->second == UidOf(object)) return;
    // Another object by that name since.
    deleted_.erase(tombstone);
  }
  std::map<std::string, json>& ns = cache[NamespaceOf(object)];
  auto it = ns.find(NameOf(object));
  if (it == ns.end()) {
    ns.emplace(NameOf(object), object);
  } else if (kube::NotOlder(object, it->second)) {
    it->second = object;
  }
}

void ProvisioningController::EraseObject(
    const std::string& plural,
    std::map<std::string, std::map<std::string, json>>& cache,
    const std::string& ns, const std::string& name, bool tombstone) {
  auto objects = cache.find(ns);
  if (objects == cache.end()) return;
  auto it = objects->second.find(name);
  if (it == objects->second.end()) return;
  if (tombstone) {
    deleted_[{plural, ns, name}] = UidOf(it->second);
  } else {
    deleted_.erase({plural, ns, name});
  }
  objects->second.erase(it);
}

void ProvisioningController::QueueOwnerOf(const json& object) {
  std::optional<WorkloadRef> owner = OwnerOf(object);
  if (!owner.has_value() || !Managed(owner->namespace_name)) return;
  queue_.Add(Key{owner->namespace_name, owner->name});
}

void ProvisioningController::OnRequestsSync(const std::vector<json>& items) {
  std::vector<json> previous;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [ns, objects] : requests_) {
      for (const auto& [name, object] : objects) previous.push_back(object);
    }
    requests_.clear();
    for (auto it = deleted_.begin(); it != deleted_.end();) {
      it = std::get<0>(it->first) == kube::kProvisioningRequests.plural
               ? deleted_.erase(it)
               : std::next(it);
    }
    for (const json& item : items) {
      StoreObject(kube::kProvisioningRequests.plural, requests_, item);
    }
    requests_synced_ = true;
  }
  // Requests deleted while unwatched, and every current one.
  for (const json& object : previous) QueueOwnerOf(object);
  for (const json& object : items) QueueOwnerOf(object);
}

void ProvisioningController::OnRequestEvent(const kube::WatchEvent& event) {
  {
    absl::MutexLock lock(&mu_);
    if (event.type == kube::WatchEventType::kDeleted) {
      EraseObject(kube::kProvisioningRequests.plural, requests_,
                  NamespaceOf(event.object), NameOf(event.object),
                  /*tombstone=*/false);
      deleted_.erase({kube::kProvisioningRequests.plural,
                      NamespaceOf(event.object), NameOf(event.object)});
    } else {
      StoreObject(kube::kProvisioningRequests.plural, requests_, event.object);
    }
  }
  QueueOwnerOf(event.object);
}

void ProvisioningController::OnTemplatesSync(const std::vector<json>& items) {
  absl::MutexLock lock(&mu_);
  templates_.clear();
  for (auto it = deleted_.begin(); it != deleted_.end();) {
    it = std::get<0>(it->first) == kube::kPodTemplates.plural
             ? deleted_.erase(it)
             : std::next(it);
  }
  for (const json& item : items) {
    StoreObject(kube::kPodTemplates.plural, templates_, item);
  }
  templates_synced_ = true;
}

void ProvisioningController::OnTemplateEvent(const kube::WatchEvent& event) {
  absl::MutexLock lock(&mu_);
  if (event.type == kube::WatchEventType::kDeleted) {
    EraseObject(kube::kPodTemplates.plural, templates_,
                NamespaceOf(event.object), NameOf(event.object),
                /*tombstone=*/false);
    deleted_.erase({kube::kPodTemplates.plural, NamespaceOf(event.object),
                    NameOf(event.object)});
  } else {
    StoreObject(kube::kPodTemplates.plural, templates_, event.object);
  }
}

// ---- kqd inputs ------------------------------------------------------------

bool ProvisioningController::HasProvisioningCheckLocked(
    const Cached& cached) const {
  for (const std::string& check : cached.checks) {
    auto ac = checks_.find(check);
    if (ac != checks_.end() &&
        ac->second.spec().controller_name() == kControllerName) {
      return true;
    }
  }
  return false;
}

void ProvisioningController::StoreWorkloadLocked(const v1::Workload& wl) {
  const Key key{wl.metadata().namespace_(), wl.metadata().name()};
  if (IsFinished(wl) || wl.status().admission_checks().empty()) {
    workloads_.erase(key);
    return;
  }
  Cached& cached = workloads_[key];
  cached.uid = wl.metadata().uid();
  cached.checks.clear();
  for (const v1::AdmissionCheckState& check : wl.status().admission_checks()) {
    cached.checks.push_back(check.name());
  }
}

void ProvisioningController::ConfigChangedLocked() {
  std::set<std::string> missing;
  for (const auto& [name, ac] : checks_) {
    if (ac.spec().controller_name() != kControllerName) continue;
    absl::StatusOr<std::string> config = ConfigNameOf(ac);
    if (!config.ok()) {
      missing.insert(name);
      if (without_config_.count(name) == 0) {
        spdlog::warn("AdmissionCheck {}: {}; nothing is provisioned for it",
                     name, std::string(config.status().message()));
      }
    } else if (configs_.count(*config) == 0) {
      missing.insert(name);
      if (without_config_.count(name) == 0) {
        spdlog::warn(
            "AdmissionCheck {}: ProvisioningRequestConfig \"{}\" not found; "
            "the check is not active",
            name, *config);
      }
    } else if (without_config_.count(name) > 0) {
      spdlog::info("AdmissionCheck {}: ProvisioningRequestConfig \"{}\" found",
                   name, *config);
    }
  }
  without_config_ = std::move(missing);
  Metrics::Global().Set(kWithoutConfig, {},
                        static_cast<double>(without_config_.size()));
  for (const auto& [key, cached] : workloads_) {
    if (Managed(key.namespace_name) && HasProvisioningCheckLocked(cached)) {
      queue_.Add(key);
    }
  }
}

void ProvisioningController::OnKqListed(const KqSnapshot& listed) {
  std::set<Key> before;
  absl::MutexLock lock(&mu_);
  for (const auto& [key, cached] : workloads_) before.insert(key);
  checks_.clear();
  configs_.clear();
  for (const v1::ConfigObject& o : listed.objects) {
    if (o.has_admission_check()) {
      checks_[o.admission_check().metadata().name()] = o.admission_check();
    } else if (o.has_provisioning_request_config()) {
      configs_[o.provisioning_request_config().metadata().name()] =
          o.provisioning_request_config();
    }
  }
  workloads_.clear();
  for (const v1::Workload& wl : listed.workloads) {
    if (Managed(wl.metadata().namespace_())) StoreWorkloadLocked(wl);
  }
  kq_synced_ = true;
  // Workloads that ended while unwatched keep their objects until
  // reconciled.
  for (const Key& key : before) {
    if (workloads_.count(key) == 0) queue_.Add(key);
  }
  ConfigChangedLocked();
}

void ProvisioningController::OnKqEvent(const v1::WatchEvent& event) {
  if (event.has_config_object()) {
    const v1::ConfigObject& object = event.config_object();
    const bool deleted = event.type() == v1::WatchEvent::DELETED;
    absl::MutexLock lock(&mu_);
    if (object.has_admission_check()) {
      const std::string& name = object.admission_check().metadata().name();
      if (deleted) {
        checks_.erase(name);
      } else {
        checks_[name] = object.admission_check();
      }
    } else if (object.has_provisioning_request_config()) {
      const std::string& name =
          object.provisioning_request_config().metadata().name();
      if (deleted) {
        configs_.erase(name);
      } else {
        configs_[name] = object.provisioning_request_config();
      }
    } else {
      return;
    }
    ConfigChangedLocked();
    return;
  }
  if (!event.has_workload()) return;
  const v1::Workload& wl = event.workload();
  const Key key{wl.metadata().namespace_(), wl.metadata().name()};
  if (!Managed(key.namespace_name)) return;
  bool queue = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = workloads_.find(key);
    queue = it != workloads_.end() && HasProvisioningCheckLocked(it->second);
    if (event.type() == v1::WatchEvent::DELETED) {
      workloads_.erase(key);
    } else {
      StoreWorkloadLocked(wl);
      it = workloads_.find(key);
      queue = queue || (it != workloads_.end() &&
                        HasProvisioningCheckLocked(it->second));
    }
    // A workload that owns objects is looked at whatever its checks are.
    if (!queue) {
      for (const auto* cache : {&requests_, &templates_}) {
        auto ns = cache->find(key.namespace_name);
        if (ns == cache->end()) continue;
        for (const auto& [name, object] : ns->second) {
          std::optional<WorkloadRef> owner = OwnerOf(object);
          if (owner.has_value() && owner->name == key.name) queue = true;
        }
      }
    }
  }
  if (queue) queue_.Add(key);
}

// ---- Work -------------------------------------------------------------------

void ProvisioningController::RunTicker(const std::atomic<bool>& stop) {
  absl::Time next = absl::Now() + options_.resync;
  while (!stop.load()) {
    absl::SleepFor(absl::Milliseconds(100));
    if (absl::Now() < next) continue;
    next = absl::Now() + options_.resync;
    std::vector<Key> keys;
    {
      absl::MutexLock lock(&mu_);
      for (const auto& [key, cached] : workloads_) {
        if (HasProvisioningCheckLocked(cached)) keys.push_back(key);
      }
      for (const auto* cache : {&requests_, &templates_}) {
        for (const auto& [ns, objects] : *cache) {
          for (const auto& [name, object] : objects) {
            std::optional<WorkloadRef> owner = OwnerOf(object);
            if (owner.has_value()) {
              keys.push_back(Key{owner->namespace_name, owner->name});
            }
          }
        }
      }
    }
    for (const Key& key : keys) {
      if (Managed(key.namespace_name)) queue_.Add(key);
    }
  }
}

void ProvisioningController::RunWorker() {
  while (std::optional<Key> key = queue_.Get()) {
    absl::Status status = Reconcile(*key);
    ++reconciles_;
    if (status.ok()) {
      queue_.Forget(*key);
      Metrics::Global().Increment(kReconciled, {{"result", "ok"}});
    } else {
      spdlog::warn("provisioning reconcile workload={} failed (retried): {}",
                   key->String(), status.ToString());
      Metrics::Global().Increment(kReconciled, {{"result", "error"}});
      if (!stop_.load()) queue_.AddRateLimited(*key);
    }
    queue_.Done(*key);
  }
}

absl::Status ProvisioningController::Reconcile(const Key& key) {
  absl::StatusOr<v1::GetWorkloadResponse> got =
      kq_.GetWorkload(key.namespace_name, key.name);
  if (!got.ok() && !absl::IsNotFound(got.status())) return got.status();

  std::map<std::string, v1::AdmissionCheck> checks;
  std::map<std::string, v1::ProvisioningRequestConfig> configs;
  ReconcileInput input;
  input.namespace_name = key.namespace_name;
  input.name = key.name;
  {
    absl::MutexLock lock(&mu_);
    if (!requests_synced_ || !templates_synced_ || !kq_synced_) {
      return absl::UnavailableError("caches not synced yet");
    }
    checks = checks_;
    configs = configs_;
    auto requests = requests_.find(key.namespace_name);
    input.requests =
        Values(requests == requests_.end() ? nullptr : &requests->second);
    auto templates = templates_.find(key.namespace_name);
    input.templates =
        Values(templates == templates_.end() ? nullptr : &templates->second);
  }
  if (got.ok()) {
    input.workload = &got->workload();
    input.placements = &got->placements();
  }
  input.admission_checks = &checks;
  input.configs = &configs;

  ReconcileHooks hooks;
  hooks.set_check_state = [this](const v1::SetAdmissionCheckStateRequest& r) {
    return kq_.SetAdmissionCheckState(r);
  };
  hooks.on_stored = [this](const kube::Resource& resource, const json& object) {
    absl::MutexLock lock(&mu_);
    StoreObject(
        resource.plural,
        resource.plural == kube::kPodTemplates.plural ? templates_ : requests_,
        object);
  };
  hooks.on_deleted = [this](const kube::Resource& resource,
                            const std::string& ns, const std::string& name) {
    absl::MutexLock lock(&mu_);
    EraseObject(
        resource.plural,
        resource.plural == kube::kPodTemplates.plural ? templates_ : requests_,
        ns, name, /*tombstone=*/true);
  };
  ReconcileResult result;
  absl::Status status = ReconcileWorkload(kube_, hooks, input, &result);
  Metrics& m = Metrics::Global();
  if (result.requests_created > 0)
    m.Increment(kCreated, {}, result.requests_created);
  if (result.requests_deleted > 0)
    m.Increment(kDeleted, {}, result.requests_deleted);
  if (result.check_updates > 0)
    m.Increment(kCheckUpdates, {}, result.check_updates);
  return status;
}

}  // namespace kq::shim::provisioning
