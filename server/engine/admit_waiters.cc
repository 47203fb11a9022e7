#include "server/engine/admit_waiters.h"

namespace kq::engine {

void AdmitWaiters::Add(Waiter waiter) {
  fresh_.push_back(waiter.wait.key);
  Restore(std::move(waiter));
}

void AdmitWaiters::Restore(Waiter waiter) {
  deadlines_.insert({waiter.wait.deadline, waiter.id});
  keys_[waiter.id] = waiter.wait.key;
  by_key_[waiter.wait.key].push_back(std::move(waiter));
}

void AdmitWaiters::Cancel(int64_t id) {
  auto key = keys_.find(id);
  if (key == keys_.end()) return;
  auto list = by_key_.find(key->second);
  if (list != by_key_.end()) {
    std::erase_if(list->second, [&](const Waiter& w) {
      if (w.id != id) return false;
      deadlines_.erase({w.wait.deadline, id});
      return true;
    });
    if (list->second.empty()) by_key_.erase(list);
  }
  keys_.erase(key);
}

std::optional<absl::Time> AdmitWaiters::NextDeadline() const {
  if (deadlines_.empty()) return std::nullopt;
  return deadlines_.begin()->first;
}

std::vector<AdmitWaiters::Due> AdmitWaiters::TakeDue(
    const std::map<NamespacedName, admission::Change>& changed,
    absl::Time now) {
  std::vector<Due> due;
  if (by_key_.empty()) {
    fresh_.clear();
    return due;
  }
  std::set<NamespacedName> keys(fresh_.begin(), fresh_.end());
  fresh_.clear();
  for (const auto& [key, change] : changed) {
    if (by_key_.contains(key)) keys.insert(key);
  }
  std::set<int64_t> expired;
  for (auto it = deadlines_.begin(); it != deadlines_.end() && it->first <= now;
       ++it) {
    expired.insert(it->second);
    keys.insert(keys_.at(it->second));
  }
  for (const NamespacedName& key : keys) {
    auto list = by_key_.find(key);
    if (list == by_key_.end()) continue;
    for (Waiter& waiter : list->second) {
      Unindex(waiter);
      const bool is_expired = expired.contains(waiter.id);
      due.push_back(Due{std::move(waiter), is_expired});
    }
    by_key_.erase(list);
  }
  return due;
}

std::vector<AdmitWaiters::Waiter> AdmitWaiters::TakeAll() {
  std::vector<Waiter> all;
  for (auto& [key, list] : by_key_) {
    for (Waiter& waiter : list) all.push_back(std::move(waiter));
  }
  by_key_.clear();
  deadlines_.clear();
  keys_.clear();
  fresh_.clear();
  return all;
}

void AdmitWaiters::Unindex(const Waiter& waiter) {
  deadlines_.erase({waiter.wait.deadline, waiter.id});
  keys_.erase(waiter.id);
}

}  // namespace kq::engine
