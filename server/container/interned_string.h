#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"

namespace kq {

// An immutable string kept once per process for all its equal copies, in 8
// bytes: for the names that thousands of workloads repeat (their namespace,
// their LocalQueue, their pod sets'), which a std::string keeps in 32 bytes
// of each, and kqd holds every pending workload in memory. Equal texts share
// one counted entry of a process-wide table, freed with its last copy, so a
// name no workload uses any more costs nothing. Copies count atomically:
// values are thread-compatible, as a std::string is, and the table is
// thread-safe. Reads see a `const std::string&` (or absl::string_view);
// equality compares pointers; order and hashing are the text's.
class InternedString {
 public:
  InternedString() = default;
  // Implicit: the fields it stands for are assigned from text.
  InternedString(absl::string_view text) : entry_(Intern(text)) {}  // NOLINT
  InternedString(const std::string& text)                           // NOLINT
      : entry_(Intern(text)) {}
  InternedString(const char* text)  // NOLINT
      : entry_(Intern(absl::string_view(text))) {}
  InternedString(const InternedString& other) : entry_(other.entry_) {
    if (entry_ != nullptr) entry_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  InternedString(InternedString&& other) noexcept
      : entry_(std::exchange(other.entry_, nullptr)) {}
  ~InternedString() { Unref(entry_); }

  InternedString& operator=(const InternedString& other) {
    InternedString copy(other);
    std::swap(entry_, copy.entry_);
    return *this;
  }
  InternedString& operator=(InternedString&& other) noexcept {
    if (this != &other) {
      Unref(entry_);
      entry_ = std::exchange(other.entry_, nullptr);
    }
    return *this;
  }
  InternedString& operator=(absl::string_view text) {
    return *this = InternedString(text);
  }
  InternedString& operator=(const std::string& text) {
    return *this = InternedString(text);
  }
  InternedString& operator=(const char* text) {
    return *this = InternedString(text);
  }

  const std::string& str() const {
    return entry_ == nullptr ? Empty() : entry_->text;
  }
  operator const std::string&() const { return str(); }  // NOLINT
  // As a std::string converts (absl::StrCat, string_view parameters).
  operator absl::string_view() const { return str(); }  // NOLINT
  absl::string_view view() const { return str(); }
  bool empty() const { return entry_ == nullptr; }
  size_t size() const { return str().size(); }
  const char* data() const { return str().data(); }
  const char* c_str() const { return str().c_str(); }
  void clear() { *this = InternedString(); }
  int compare(const InternedString& other) const {
    return entry_ == other.entry_ ? 0 : str().compare(other.str());
  }

  friend bool operator==(const InternedString& a, const InternedString& b) {
    return a.entry_ == b.entry_;
  }
  friend bool operator==(const InternedString& a, const std::string& b) {
    return a.str() == b;
  }
  friend bool operator==(const InternedString& a, absl::string_view b) {
    return a.view() == b;
  }
  friend bool operator==(const InternedString& a, const char* b) {
    return a.view() == absl::string_view(b);
  }
  friend bool operator<(const InternedString& a, const InternedString& b) {
    return a.compare(b) < 0;
  }
  friend bool operator<(const InternedString& a, const std::string& b) {
    return a.str() < b;
  }
  friend bool operator<(const std::string& a, const InternedString& b) {
    return a < b.str();
  }
  friend bool operator>(const InternedString& a, const InternedString& b) {
    return b < a;
  }
  friend bool operator<=(const InternedString& a, const InternedString& b) {
    return !(b < a);
  }
  friend bool operator>=(const InternedString& a, const InternedString& b) {
    return !(a < b);
  }
  template <typename H>
  friend H AbslHashValue(H h, const InternedString& s) {
    return H::combine(std::move(h), s.view());
  }
  friend std::ostream& operator<<(std::ostream& os, const InternedString& s) {
    return os << s.str();
  }

  // How many distinct texts the table holds (for tests and statistics).
  static size_t TableSizeForTest();

 private:
  struct Entry {
    // Copies of this entry alive; the table's own reference is not counted.
    std::atomic<uint32_t> refs;
    const std::string text;
  };

  // The table's entry for `text`, counted once more; null for "".
  static Entry* Intern(absl::string_view text);
  static void Unref(Entry* entry) {
    if (entry == nullptr) return;
    // Not the last copy: no lock. Only the table's Release takes a count
    // from 1 to 0, under the lock that Intern takes to find an entry.
    uint32_t refs = entry->refs.load(std::memory_order_relaxed);
    while (refs > 1) {
      if (entry->refs.compare_exchange_weak(refs, refs - 1,
                                            std::memory_order_release,
                                            std::memory_order_relaxed)) {
        return;
      }
    }
    Release(entry);
  }
  // Drops a count that may be the last; frees the entry if it was.
  static void Release(Entry* entry);
  static const std::string& Empty();

  Entry* entry_ = nullptr;  // null for the empty string
};

}  // namespace kq
