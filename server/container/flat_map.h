#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "server/container/compact_vector.h"

namespace kq {

// A map kept as one sorted array: std::map's interface and order for the
// small maps kqd holds per pod set (a few resources each), at 8 bytes (a
// CompactVector) and one allocation instead of 48 bytes and one allocation
// per entry. Unlike std::map, an insert or erase moves the other entries:
// iterators and references into the map do not outlive the next insert or
// erase, and elements are std::pair<K, V> (their keys must not be changed
// through them). Lookups are binary searches.
template <typename K, typename V>
class FlatMap {
 public:
  using key_type = K;
  using mapped_type = V;
  using value_type = std::pair<K, V>;
  using size_type = size_t;
  using iterator = value_type*;
  using const_iterator = const value_type*;

  FlatMap() = default;
  // As std::map's: of equal keys, the first is kept.
  FlatMap(std::initializer_list<value_type> values) {
    insert(values.begin(), values.end());
  }
  template <typename It>
  FlatMap(It first, It last) {
    insert(first, last);
  }

  bool empty() const { return entries_.empty(); }
  size_type size() const { return entries_.size(); }
  void clear() { entries_.clear(); }

  iterator begin() { return entries_.begin(); }
  iterator end() { return entries_.end(); }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  const_iterator cbegin() const { return entries_.begin(); }
  const_iterator cend() const { return entries_.end(); }

  iterator lower_bound(const K& key) {
    return std::lower_bound(begin(), end(), key, KeyLess());
  }
  const_iterator lower_bound(const K& key) const {
    return std::lower_bound(begin(), end(), key, KeyLess());
  }
  iterator find(const K& key) {
    iterator it = lower_bound(key);
    return it != end() && it->first == key ? it : end();
  }
  const_iterator find(const K& key) const {
    const_iterator it = lower_bound(key);
    return it != end() && it->first == key ? it : end();
  }
  size_type count(const K& key) const { return find(key) != end() ? 1 : 0; }
  bool contains(const K& key) const { return find(key) != end(); }
  // As std::map::at: throws std::out_of_range when absent.
  V& at(const K& key) {
    iterator it = find(key);
    if (it == end()) throw std::out_of_range("FlatMap::at");
    return it->second;
  }
  const V& at(const K& key) const {
    const_iterator it = find(key);
    if (it == end()) throw std::out_of_range("FlatMap::at");
    return it->second;
  }

  V& operator[](const K& key) { return try_emplace(key).first->second; }
  template <typename... Args>
  std::pair<iterator, bool> try_emplace(const K& key, Args&&... args) {
    iterator it = lower_bound(key);
    if (it != end() && it->first == key) return {it, false};
    return {
        Emplace(it - begin(),
                value_type(std::piecewise_construct, std::forward_as_tuple(key),
                           std::forward_as_tuple(std::forward<Args>(args)...))),
        true};
  }
  template <typename M>
  std::pair<iterator, bool> insert_or_assign(const K& key, M&& value) {
    auto [it, inserted] = try_emplace(key, std::forward<M>(value));
    if (!inserted) it->second = std::forward<M>(value);
    return {it, inserted};
  }
  std::pair<iterator, bool> insert(const value_type& value) {
    return try_emplace(value.first, value.second);
  }
  template <typename A, typename B>
  std::pair<iterator, bool> emplace(A&& key, B&& value) {
    return try_emplace(K(std::forward<A>(key)), std::forward<B>(value));
  }
  template <typename It>
  void insert(It first, It last) {
    for (; first != last; ++first) try_emplace(first->first, first->second);
  }
  size_type erase(const K& key) {
    iterator it = find(key);
    if (it == end()) return 0;
    erase(it);
    return 1;
  }
  iterator erase(const_iterator position) { return entries_.erase(position); }

  friend bool operator==(const FlatMap& a, const FlatMap& b) {
    return a.entries_ == b.entries_;
  }

 private:
  struct KeyLess {
    bool operator()(const value_type& entry, const K& key) const {
      return entry.first < key;
    }
  };

  // Inserts `value` at `index`, moving the entries from there one up.
  iterator Emplace(size_type index, value_type value) {
    return entries_.insert(begin() + index, std::move(value));
  }

  CompactVector<value_type> entries_;
};

}  // namespace kq
