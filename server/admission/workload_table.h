#pragma once

// The unfinished workloads of an AdmissionState: in key order for listings
// and ordered walks, with a hash index for lookups.

#include <cstddef>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"

#include "server/core/objects.h"

namespace kq::admission {

// Thread-compatible.
class WorkloadTable {
 public:
  using const_iterator = WorkloadSet::const_iterator;

  WorkloadTable() = default;
  WorkloadTable(const WorkloadTable&) = delete;
  WorkloadTable& operator=(const WorkloadTable&) = delete;

  // In key order (namespace, name).
  const WorkloadSet& set() const { return set_; }
  const_iterator begin() const { return set_.begin(); }
  const_iterator end() const { return set_.end(); }
  const_iterator lower_bound(const NamespacedName& key) const {
    return set_.lower_bound(key);
  }
  bool empty() const { return set_.empty(); }
  size_t size() const { return set_.size(); }

  const Workload* Find(const NamespacedName& key) const;
  // The held workload of `key`, to change anything but its name (its key
  // here), or nullptr.
  Workload* FindMutable(const NamespacedName& key);
  // The workload of `key`, which must be held (a broken invariant aborts).
  Workload& At(const NamespacedName& key);
  // A held workload, to change: anything but its name.
  static Workload& Mutable(const Workload& wl) {
    return const_cast<Workload&>(wl);
  }
  // Inserts `workload` under `key` (which must be its name) or replaces the
  // one held there.
  Workload& Put(const NamespacedName& key, Workload workload);
  // Removes and returns the workload of `key`, which must be held.
  Workload Take(const NamespacedName& key);
  void Clear();

 private:
  using Iterator = WorkloadSet::iterator;

  // set_'s elements by key. A lookup in the set walks ~17 nodes of 100,000,
  // each a string comparison and a likely cache miss, and the engine looks
  // workloads up many times per batch; the set's order still serves
  // listings and ordered walks. Its elements are the set's (whose nodes do
  // not move), 8 bytes each.
  struct Hash {
    using is_transparent = void;
    size_t operator()(const NamespacedName& key) const {
      return Of(key.first, key.second);
    }
    size_t operator()(Iterator it) const {
      return Of(it->meta.namespace_name, it->meta.name);
    }
    static size_t Of(absl::string_view namespace_name, absl::string_view name);
  };
  struct Eq {
    using is_transparent = void;
    bool operator()(Iterator a, Iterator b) const { return a == b; }
    bool operator()(Iterator a, const NamespacedName& key) const {
      return a->meta.name == key.second && a->meta.namespace_name == key.first;
    }
    bool operator()(const NamespacedName& key, Iterator a) const {
      return (*this)(a, key);
    }
  };

  // set_.find(key) through the index.
  Iterator FindIt(const NamespacedName& key) const;

  WorkloadSet set_;
  absl::flat_hash_set<Iterator, Hash, Eq> index_;
};

}  // namespace kq::admission
