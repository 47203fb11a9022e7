#include "server/admission/workload_table.h"

#include <utility>

#include "absl/hash/hash.h"

#include "server/common/check.h"

namespace kq::admission {

size_t WorkloadTable::Hash::Of(absl::string_view namespace_name,
                               absl::string_view name) {
  return absl::Hash<std::pair<absl::string_view, absl::string_view>>()(
      {namespace_name, name});
}

WorkloadTable::Iterator WorkloadTable::FindIt(const NamespacedName& key) const {
  auto it = index_.find(key);
  // The set's iterator and const_iterator are one type (std::set).
  return it == index_.end() ? Iterator(set_.end()) : *it;
}

const Workload* WorkloadTable::Find(const NamespacedName& key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &**it;
}

Workload* WorkloadTable::FindMutable(const NamespacedName& key) {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &Mutable(**it);
}

Workload& WorkloadTable::At(const NamespacedName& key) {
  Workload* wl = FindMutable(key);
  KQ_CHECK(wl != nullptr) << Describe(key) << " is not held";
  return *wl;
}

Workload& WorkloadTable::Put(const NamespacedName& key, Workload workload) {
  // The name is the element's key in set_: a replacement keeps it.
  KQ_CHECK(workload.meta.name == key.second &&
           workload.meta.namespace_name == key.first)
      << Describe(key) << " put under another name";
  if (Workload* held = FindMutable(key); held != nullptr) {
    *held = std::move(workload);
    return *held;
  }
  // A store loads in key order: then the end is where each one goes.
  const bool last = set_.empty() || WorkloadKeyLess()(*set_.rbegin(), key);
  Iterator it = last ? set_.emplace_hint(set_.end(), std::move(workload))
                     : set_.emplace(std::move(workload)).first;
  index_.insert(it);
  return Mutable(*it);
}

Workload WorkloadTable::Take(const NamespacedName& key) {
  Iterator it = FindIt(key);
  KQ_CHECK(it != set_.end()) << Describe(key) << " is not held";
  // The index hashes the element's name: out of it before the name moves.
  index_.erase(it);
  return std::move(set_.extract(it).value());
}

void WorkloadTable::Clear() {
  index_.clear();
  set_.clear();
}

}  // namespace kq::admission
