#include "server/container/interned_string.h"

#include <array>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/synchronization/mutex.h"

namespace kq {
namespace {

// The table of texts, in shards so that threads converting workloads at
// once (gRPC's) seldom wait for one another. Never destroyed: a copy may be
// dropped during static destruction.
template <typename Entry>
class Table {
 public:
  static Table& Get() {
    static Table* const table = new Table();
    return *table;
  }

  Entry* Intern(absl::string_view text) {
    Shard& shard = ShardOf(text);
    absl::MutexLock lock(&shard.mu);
    auto it = shard.entries.find(text);
    if (it != shard.entries.end()) {
      (*it)->refs.fetch_add(1, std::memory_order_relaxed);
      return *it;
    }
    Entry* entry = new Entry{{1}, std::string(text)};
    shard.entries.insert(entry);
    return entry;
  }

  void Release(Entry* entry) {
    Shard& shard = ShardOf(entry->text);
    {
      absl::MutexLock lock(&shard.mu);
      if (entry->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
      shard.entries.erase(entry->text);
    }
    delete entry;
  }

  size_t size() {
    size_t total = 0;
    for (Shard& shard : shards_) {
      absl::MutexLock lock(&shard.mu);
      total += shard.entries.size();
    }
    return total;
  }

 private:
  static constexpr int kShardBits = 4;
  static constexpr size_t kShards = size_t{1} << kShardBits;
  struct EntryHash {
    using is_transparent = void;
    size_t operator()(absl::string_view text) const {
      return absl::Hash<absl::string_view>()(text);
    }
    size_t operator()(const Entry* entry) const { return (*this)(entry->text); }
  };
  struct EntryEq {
    using is_transparent = void;
    static absl::string_view TextOf(absl::string_view text) { return text; }
    static absl::string_view TextOf(const Entry* entry) { return entry->text; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return TextOf(a) == TextOf(b);
    }
  };
  struct Shard {
    absl::Mutex mu;
    absl::flat_hash_set<Entry*, EntryHash, EntryEq> entries ABSL_GUARDED_BY(mu);
  };
  // By the hash's top bits: the shard's table places entries by the rest.
  Shard& ShardOf(absl::string_view text) {
    const uint64_t hash = absl::Hash<absl::string_view>()(text);
    return shards_[hash >> (64 - kShardBits)];
  }

  std::array<Shard, kShards> shards_;
};

}  // namespace

InternedString::Entry* InternedString::Intern(absl::string_view text) {
  if (text.empty()) return nullptr;
  return Table<Entry>::Get().Intern(text);
}

void InternedString::Release(Entry* entry) {
  Table<Entry>::Get().Release(entry);
}

size_t InternedString::TableSizeForTest() { return Table<Entry>::Get().size(); }

const std::string& InternedString::Empty() {
  static const std::string* const empty = new std::string();
  return *empty;
}

}  // namespace kq
