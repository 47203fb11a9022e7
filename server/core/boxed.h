#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace kq {

// std::optional's interface with the value on the heap: for a field most
// objects leave unset, which then costs a pointer instead of the value's
// size. kqd holds every pending workload in memory, and a pending one has
// no admission, runner or deadlines. Copies are deep; comparison compares
// values. Unlike std::optional, a moved-from Boxed is empty, and comparing
// with a T makes a Boxed of it first.
template <typename T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(std::nullopt_t) {}  // NOLINT: as std::optional
  Boxed(const T& value) : value_(std::make_unique<T>(value)) {}  // NOLINT
  Boxed(T&& value)  // NOLINT: as std::optional
      : value_(std::make_unique<T>(std::move(value))) {}
  Boxed(const std::optional<T>& value) {  // NOLINT: as std::optional
    if (value.has_value()) value_ = std::make_unique<T>(*value);
  }
  Boxed(const Boxed& other)
      : value_(other.value_ ? std::make_unique<T>(*other.value_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;

  Boxed& operator=(const Boxed& other) {
    if (this == &other) return *this;
    if (!other.value_) {
      value_.reset();
    } else if (value_) {
      *value_ = *other.value_;
    } else {
      value_ = std::make_unique<T>(*other.value_);
    }
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(std::nullopt_t) {
    value_.reset();
    return *this;
  }
  Boxed& operator=(const T& value) {
    if (value_) {
      *value_ = value;
    } else {
      value_ = std::make_unique<T>(value);
    }
    return *this;
  }
  Boxed& operator=(T&& value) {
    if (value_) {
      *value_ = std::move(value);
    } else {
      value_ = std::make_unique<T>(std::move(value));
    }
    return *this;
  }
  Boxed& operator=(const std::optional<T>& value) {
    if (value.has_value()) return *this = *value;
    value_.reset();
    return *this;
  }

  bool has_value() const { return value_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return value_.get(); }
  const T* operator->() const { return value_.get(); }
  template <typename U>
  T value_or(U&& fallback) const {
    return value_ ? *value_ : static_cast<T>(std::forward<U>(fallback));
  }
  void reset() { value_.reset(); }
  template <typename... Args>
  T& emplace(Args&&... args) {
    value_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *value_;
  }
  // As std::optional<T>: for callers that keep a copy.
  std::optional<T> ToOptional() const {
    return value_ ? std::optional<T>(*value_) : std::nullopt;
  }

  friend bool operator==(const Boxed& a, const Boxed& b) {
    if (!a.value_ || !b.value_) return !a.value_ && !b.value_;
    return *a.value_ == *b.value_;
  }
  friend bool operator==(const Boxed& a, std::nullopt_t) {
    return !a.has_value();
  }

 private:
  std::unique_ptr<T> value_;
};

// std::map's interface with the map on the heap, made by the first insert:
// for a map most objects leave empty (labels, annotations, node selectors,
// reclaimable pods), which then costs a pointer instead of std::map's 48
// bytes. Iteration, lookups and element references behave as std::map's,
// with one difference: an iterator taken while the map is empty (only
// ever an end()) is not the end() of the map after its first insert.
// Copies are deep; an empty BoxedMap equals one whose map was emptied.
template <typename K, typename V>
class BoxedMap {
 public:
  using Map = std::map<K, V>;
  using key_type = typename Map::key_type;
  using mapped_type = typename Map::mapped_type;
  using value_type = typename Map::value_type;
  using size_type = typename Map::size_type;
  using iterator = typename Map::iterator;
  using const_iterator = typename Map::const_iterator;

  BoxedMap() = default;
  BoxedMap(std::initializer_list<value_type> values) {
    if (values.size() > 0) map_ = std::make_unique<Map>(values);
  }
  template <typename It>
  BoxedMap(It first, It last) {
    if (first != last) map_ = std::make_unique<Map>(first, last);
  }
  BoxedMap(const Map& map) {  // NOLINT: as the std::map it stands for
    if (!map.empty()) map_ = std::make_unique<Map>(map);
  }
  BoxedMap(Map&& map) {  // NOLINT: as the std::map it stands for
    if (!map.empty()) map_ = std::make_unique<Map>(std::move(map));
  }
  BoxedMap(const BoxedMap& other)
      : map_(other.empty() ? nullptr : std::make_unique<Map>(*other.map_)) {}
  BoxedMap(BoxedMap&&) noexcept = default;

  BoxedMap& operator=(const BoxedMap& other) {
    if (this == &other) return *this;
    if (other.empty()) {
      map_.reset();
    } else if (map_) {
      *map_ = *other.map_;
    } else {
      map_ = std::make_unique<Map>(*other.map_);
    }
    return *this;
  }
  BoxedMap& operator=(BoxedMap&&) noexcept = default;
  BoxedMap& operator=(std::initializer_list<value_type> values) {
    return *this = BoxedMap(values);
  }

  bool empty() const { return !map_ || map_->empty(); }
  size_type size() const { return map_ ? map_->size() : 0; }

  iterator begin() { return map_ ? map_->begin() : EmptyMap().begin(); }
  iterator end() { return map_ ? map_->end() : EmptyMap().end(); }
  const_iterator begin() const { return cbegin(); }
  const_iterator end() const { return cend(); }
  const_iterator cbegin() const {
    return map_ ? map_->cbegin() : EmptyMap().cbegin();
  }
  const_iterator cend() const {
    return map_ ? map_->cend() : EmptyMap().cend();
  }

  iterator find(const K& key) { return map_ ? map_->find(key) : end(); }
  const_iterator find(const K& key) const {
    return map_ ? map_->find(key) : cend();
  }
  size_type count(const K& key) const { return map_ ? map_->count(key) : 0; }
  bool contains(const K& key) const { return map_ && map_->contains(key); }
  // As std::map::at: throws std::out_of_range when absent.
  V& at(const K& key) { return Made().at(key); }
  const V& at(const K& key) const {
    return map_ ? map_->at(key) : EmptyMap().at(key);
  }

  V& operator[](const K& key) { return Made()[key]; }
  V& operator[](K&& key) { return Made()[std::move(key)]; }
  std::pair<iterator, bool> insert(const value_type& value) {
    return Made().insert(value);
  }
  std::pair<iterator, bool> insert(value_type&& value) {
    return Made().insert(std::move(value));
  }
  template <typename It>
  void insert(It first, It last) {
    if (first != last) Made().insert(first, last);
  }
  template <typename M>
  std::pair<iterator, bool> insert_or_assign(const K& key, M&& value) {
    return Made().insert_or_assign(key, std::forward<M>(value));
  }
  template <typename... Args>
  std::pair<iterator, bool> emplace(Args&&... args) {
    return Made().emplace(std::forward<Args>(args)...);
  }
  template <typename... Args>
  std::pair<iterator, bool> try_emplace(const K& key, Args&&... args) {
    return Made().try_emplace(key, std::forward<Args>(args)...);
  }
  size_type erase(const K& key) { return map_ ? map_->erase(key) : 0; }
  iterator erase(iterator it) { return map_->erase(it); }
  iterator erase(const_iterator it) { return map_->erase(it); }
  void clear() { map_.reset(); }

  // The map as a std::map, for callers that need one.
  Map ToMap() const { return map_ ? *map_ : Map(); }

  friend bool operator==(const BoxedMap& a, const BoxedMap& b) {
    if (a.size() != b.size()) return false;
    return a.empty() || *a.map_ == *b.map_;
  }

 private:
  // The end() of every BoxedMap that holds no map. Never changed.
  static Map& EmptyMap() {
    static Map* const empty = new Map();
    return *empty;
  }
  Map& Made() {
    if (!map_) map_ = std::make_unique<Map>();
    return *map_;
  }

  std::unique_ptr<Map> map_;
};

// std::vector's interface with the vector on the heap, made by the first
// insert: for a list most objects leave empty (a workload's admission
// checks, a pod set's tolerations and required node affinity), which then
// costs a pointer instead of std::vector's 24 bytes. Iterators and element
// references behave as std::vector's, except that an iterator taken while
// the list is empty (only ever an end()) is not the end() of the list
// after its first insert. Copies are deep; an empty BoxedVector equals one
// that was emptied.
template <typename T>
class BoxedVector {
 public:
  using Vector = std::vector<T>;
  using value_type = typename Vector::value_type;
  using size_type = typename Vector::size_type;
  using reference = typename Vector::reference;
  using const_reference = typename Vector::const_reference;
  using iterator = typename Vector::iterator;
  using const_iterator = typename Vector::const_iterator;

  BoxedVector() = default;
  BoxedVector(std::initializer_list<T> values) {
    if (values.size() > 0) vector_ = std::make_unique<Vector>(values);
  }
  BoxedVector(const Vector& vector) {  // NOLINT: as the vector it stands for
    if (!vector.empty()) vector_ = std::make_unique<Vector>(vector);
  }
  BoxedVector(Vector&& vector) {  // NOLINT: as the vector it stands for
    if (!vector.empty()) vector_ = std::make_unique<Vector>(std::move(vector));
  }
  BoxedVector(const BoxedVector& other)
      : vector_(other.empty() ? nullptr
                              : std::make_unique<Vector>(*other.vector_)) {}
  BoxedVector(BoxedVector&&) noexcept = default;

  BoxedVector& operator=(const BoxedVector& other) {
    if (this == &other) return *this;
    if (other.empty()) {
      vector_.reset();
    } else if (vector_) {
      *vector_ = *other.vector_;
    } else {
      vector_ = std::make_unique<Vector>(*other.vector_);
    }
    return *this;
  }
  BoxedVector& operator=(BoxedVector&&) noexcept = default;
  BoxedVector& operator=(std::initializer_list<T> values) {
    return *this = BoxedVector(values);
  }

  bool empty() const { return !vector_ || vector_->empty(); }
  size_type size() const { return vector_ ? vector_->size() : 0; }

  iterator begin() { return vector_ ? vector_->begin() : iterator(); }
  iterator end() { return vector_ ? vector_->end() : iterator(); }
  const_iterator begin() const { return cbegin(); }
  const_iterator end() const { return cend(); }
  const_iterator cbegin() const {
    return vector_ ? vector_->cbegin() : const_iterator();
  }
  const_iterator cend() const {
    return vector_ ? vector_->cend() : const_iterator();
  }

  // As std::vector's: `i` must be below size().
  reference operator[](size_type i) { return (*vector_)[i]; }
  const_reference operator[](size_type i) const { return (*vector_)[i]; }
  reference front() { return vector_->front(); }
  const_reference front() const { return vector_->front(); }
  reference back() { return vector_->back(); }
  const_reference back() const { return vector_->back(); }

  void push_back(const T& value) { Made().push_back(value); }
  void push_back(T&& value) { Made().push_back(std::move(value)); }
  template <typename... Args>
  reference emplace_back(Args&&... args) {
    return Made().emplace_back(std::forward<Args>(args)...);
  }
  iterator insert(const_iterator pos, const T& value) {
    if (!vector_) {
      // `pos` can only be this empty list's end().
      Vector& made = Made();
      return made.insert(made.end(), value);
    }
    return vector_->insert(pos, value);
  }
  iterator erase(const_iterator pos) { return vector_->erase(pos); }
  iterator erase(const_iterator first, const_iterator last) {
    if (first == last) return begin() + (first - cbegin());
    return vector_->erase(first, last);
  }
  void reserve(size_type n) {
    if (n > 0) Made().reserve(n);
  }
  void clear() { vector_.reset(); }

  // The list as a std::vector, for callers that need one.
  Vector ToVector() const { return vector_ ? *vector_ : Vector(); }

  friend bool operator==(const BoxedVector& a, const BoxedVector& b) {
    if (a.size() != b.size()) return false;
    return a.empty() || *a.vector_ == *b.vector_;
  }

 private:
  Vector& Made() {
    if (!vector_) vector_ = std::make_unique<Vector>();
    return *vector_;
  }

  std::unique_ptr<Vector> vector_;
};

}  // namespace kq
