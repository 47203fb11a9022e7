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

namespace kq {

// A map kept as one sorted array: std::map's interface and order for the
// small maps kqd holds per pod set (a few resources each), at 16 bytes and
// one allocation instead of 48 bytes and one allocation per entry. Unlike
// std::map, an insert or erase moves the other entries: iterators and
// references into the map do not outlive the next insert or erase, and
// elements are std::pair<K, V> (their keys must not be changed through
// them). Lookups are binary searches.
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
  FlatMap(const FlatMap& other) {
    Reserve(other.size_);
    std::uninitialized_copy(other.begin(), other.end(), data_);
    size_ = other.size_;
  }
  FlatMap(FlatMap&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        capacity_(std::exchange(other.capacity_, 0)) {}
  FlatMap& operator=(const FlatMap& other) {
    if (this != &other) *this = FlatMap(other);
    return *this;
  }
  FlatMap& operator=(FlatMap&& other) noexcept {
    if (this != &other) {
      Free();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      capacity_ = std::exchange(other.capacity_, 0);
    }
    return *this;
  }
  ~FlatMap() { Free(); }

  bool empty() const { return size_ == 0; }
  size_type size() const { return size_; }
  void clear() {
    std::destroy_n(data_, size_);
    size_ = 0;
  }

  iterator begin() { return data_; }
  iterator end() { return data_ + size_; }
  const_iterator begin() const { return data_; }
  const_iterator end() const { return data_ + size_; }
  const_iterator cbegin() const { return data_; }
  const_iterator cend() const { return data_ + size_; }

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
  iterator erase(const_iterator position) {
    iterator it = begin() + (position - cbegin());
    std::move(it + 1, end(), it);
    std::destroy_at(end() - 1);
    --size_;
    return it;
  }

  friend bool operator==(const FlatMap& a, const FlatMap& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  struct KeyLess {
    bool operator()(const value_type& entry, const K& key) const {
      return entry.first < key;
    }
  };

  // Makes room for `capacity` entries, moving those held.
  void Reserve(size_type capacity) {
    if (capacity <= capacity_) return;
    value_type* data = std::allocator<value_type>().allocate(capacity);
    std::uninitialized_move(begin(), end(), data);
    const uint32_t size = size_;
    Free();
    data_ = data;
    size_ = size;
    capacity_ = static_cast<uint32_t>(capacity);
  }
  // Inserts `value` at `index`, moving the entries from there one up.
  iterator Emplace(size_type index, value_type value) {
    if (size_ == capacity_) Reserve(capacity_ == 0 ? 1 : 2 * capacity_);
    iterator it = begin() + index;
    if (it == end()) {
      std::construct_at(it, std::move(value));
    } else {
      std::construct_at(end(), std::move(*(end() - 1)));
      std::move_backward(it, end() - 1, end());
      *it = std::move(value);
    }
    ++size_;
    return it;
  }
  void Free() {
    std::destroy_n(data_, size_);
    if (data_ != nullptr) {
      std::allocator<value_type>().deallocate(data_, capacity_);
    }
    data_ = nullptr;
    size_ = 0;
    capacity_ = 0;
  }

  value_type* data_ = nullptr;
  uint32_t size_ = 0;
  uint32_t capacity_ = 0;
};

}  // namespace kq
