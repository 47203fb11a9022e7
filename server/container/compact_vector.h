#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "server/common/check.h"

namespace kq {

// std::vector's interface in 8 bytes: one pointer to a block that holds the
// size and capacity in front of the elements, null while the vector has no
// capacity. For the lists every workload carries (its pod sets and
// conditions), which a std::vector would keep in 24 bytes of the Workload,
// and kqd holds every pending workload in memory: a Workload small enough
// for its allocator's smaller size class saves its whole difference
// (tests/server/core/sizes_test.cc). The block of one element costs 8 bytes
// more than a std::vector's array would. Iterators are pointers and are
// invalidated as a std::vector's are.
template <typename T>
class CompactVector {
 public:
  using value_type = T;
  using size_type = size_t;
  using difference_type = ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  CompactVector() = default;
  CompactVector(std::initializer_list<T> values) {
    assign(values.begin(), values.end());
  }
  explicit CompactVector(size_type count) { resize(count); }
  CompactVector(size_type count, const T& value) { resize(count, value); }
  template <typename It,
            typename = typename std::iterator_traits<It>::iterator_category>
  CompactVector(It first, It last) {
    assign(first, last);
  }
  explicit CompactVector(const std::vector<T>& values) {
    assign(values.begin(), values.end());
  }
  CompactVector(const CompactVector& other) {
    assign(other.begin(), other.end());
  }
  CompactVector(CompactVector&& other) noexcept
      : block_(std::exchange(other.block_, nullptr)) {}
  ~CompactVector() { Free(); }

  // Copy and swap: `other` may live inside one of this vector's elements.
  CompactVector& operator=(const CompactVector& other) {
    if (this != &other) CompactVector(other).swap(*this);
    return *this;
  }
  CompactVector& operator=(CompactVector&& other) noexcept {
    if (this != &other) CompactVector(std::move(other)).swap(*this);
    return *this;
  }
  CompactVector& operator=(std::initializer_list<T> values) {
    CompactVector(values).swap(*this);
    return *this;
  }

  // The range must not be this vector's own.
  template <typename It>
  void assign(It first, It last) {
    clear();
    if constexpr (std::is_base_of_v<
                      std::forward_iterator_tag,
                      typename std::iterator_traits<It>::iterator_category>) {
      reserve(static_cast<size_type>(std::distance(first, last)));
    }
    for (; first != last; ++first) emplace_back(*first);
  }
  void assign(std::initializer_list<T> values) {
    assign(values.begin(), values.end());
  }

  size_type size() const { return block_ == nullptr ? 0 : block_->size; }
  size_type capacity() const {
    return block_ == nullptr ? 0 : block_->capacity;
  }
  bool empty() const { return size() == 0; }

  T* data() { return block_ == nullptr ? nullptr : Elements(block_); }
  const T* data() const {
    return block_ == nullptr ? nullptr : Elements(block_);
  }
  iterator begin() { return data(); }
  iterator end() { return data() + size(); }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size(); }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const {
    return const_reverse_iterator(end());
  }
  const_reverse_iterator rend() const {
    return const_reverse_iterator(begin());
  }

  T& operator[](size_type i) { return data()[i]; }
  const T& operator[](size_type i) const { return data()[i]; }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size() - 1]; }
  const T& back() const { return data()[size() - 1]; }

  void reserve(size_type capacity) {
    if (capacity > this->capacity()) Grow(capacity);
  }
  void shrink_to_fit() {
    if (size() < capacity()) {
      if (empty()) {
        Free();
      } else {
        Grow(size());
      }
    }
  }

  template <typename... Args>
  T& emplace_back(Args&&... args) {
    const size_type at = size();
    if (at < capacity()) {
      T* slot = Elements(block_) + at;
      ::new (static_cast<void*>(slot)) T(std::forward<Args>(args)...);
      ++block_->size;
      return *slot;
    }
    // The new element first: `args` may refer to one of the old ones.
    Block* grown = Allocate(NextCapacity());
    T* slot = Elements(grown) + at;
    ::new (static_cast<void*>(slot)) T(std::forward<Args>(args)...);
    MoveInto(grown);
    grown->size = static_cast<uint32_t>(at + 1);
    return *slot;
  }
  void push_back(const T& value) { emplace_back(value); }
  void push_back(T&& value) { emplace_back(std::move(value)); }
  void pop_back() {
    back().~T();
    --block_->size;
  }

  template <typename... Args>
  iterator emplace(const_iterator pos, Args&&... args) {
    const size_type at = static_cast<size_type>(pos - begin());
    emplace_back(std::forward<Args>(args)...);
    std::rotate(begin() + at, end() - 1, end());
    return begin() + at;
  }
  iterator insert(const_iterator pos, const T& value) {
    return emplace(pos, value);
  }
  iterator insert(const_iterator pos, T&& value) {
    return emplace(pos, std::move(value));
  }
  template <typename It,
            typename = typename std::iterator_traits<It>::iterator_category>
  iterator insert(const_iterator pos, It first, It last) {
    const size_type at = static_cast<size_type>(pos - begin());
    const size_type before = size();
    for (; first != last; ++first) emplace_back(*first);
    std::rotate(begin() + at, begin() + before, end());
    return begin() + at;
  }

  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    T* from = begin() + (first - cbegin());
    T* to = begin() + (last - cbegin());
    if (from == to) return from;
    T* kept_end = std::move(to, end(), from);
    for (T* p = kept_end; p != end(); ++p) p->~T();
    block_->size = static_cast<uint32_t>(kept_end - begin());
    return from;
  }
  void clear() {
    if (block_ == nullptr) return;
    std::destroy(begin(), end());
    block_->size = 0;
  }
  void resize(size_type count) {
    while (size() > count) pop_back();
    reserve(count);
    while (size() < count) emplace_back();
  }
  void resize(size_type count, const T& value) {
    while (size() > count) pop_back();
    if (count <= size()) return;
    // A copy first: `value` may be one of the elements that reserve moves.
    const T copy(value);
    reserve(count);
    while (size() < count) emplace_back(copy);
  }
  void swap(CompactVector& other) noexcept { std::swap(block_, other.block_); }

  friend bool operator==(const CompactVector& a, const CompactVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const CompactVector& a, const std::vector<T>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  // The block's header; the elements follow it.
  struct Block {
    uint32_t size;
    uint32_t capacity;
  };
  static_assert(alignof(T) <= alignof(std::max_align_t));
  // Where the elements start: after the header, aligned for T.
  static constexpr size_t kElementsOffset =
      (sizeof(Block) + alignof(T) - 1) / alignof(T) * alignof(T);

  // The elements' storage, as std::vector's allocator hands it out: the
  // elements are made there with placement new.
  static T* Elements(Block* block) {
    return reinterpret_cast<T*>(reinterpret_cast<char*>(block) +
                                kElementsOffset);
  }
  static const T* Elements(const Block* block) {
    return reinterpret_cast<const T*>(reinterpret_cast<const char*>(block) +
                                      kElementsOffset);
  }
  size_type NextCapacity() const {
    const size_type now = capacity();
    return now == 0 ? 1 : 2 * now;
  }
  static Block* Allocate(size_type capacity) {
    KQ_CHECK(capacity <= UINT32_MAX)
        << "a CompactVector of " << capacity << " elements";
    void* raw = ::operator new(kElementsOffset + capacity * sizeof(T));
    return ::new (raw) Block{0, static_cast<uint32_t>(capacity)};
  }
  // Moves the elements into `grown`, which becomes the block, and frees the
  // old one. Sets grown's size to theirs.
  void MoveInto(Block* grown) {
    if (block_ != nullptr) {
      T* from = Elements(block_);
      std::uninitialized_move(from, from + block_->size, Elements(grown));
    }
    const uint32_t moved = block_ == nullptr ? 0 : block_->size;
    Free();
    block_ = grown;
    block_->size = moved;
  }
  // Moves the elements to a block of `capacity` (at least size()).
  void Grow(size_type capacity) { MoveInto(Allocate(capacity)); }
  void Free() {
    if (block_ == nullptr) return;
    std::destroy(begin(), end());
    ::operator delete(static_cast<void*>(block_));
    block_ = nullptr;
  }

  Block* block_ = nullptr;
};

}  // namespace kq
