#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
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

// A string most objects leave empty (metadata.generateName,
// spec.priorityClassName, a held pod set's template) at 8 bytes instead of a
// std::string's 32: the text is on the heap while there is one. Reads as a
// const std::string&.
class BoxedString {
 public:
  BoxedString() = default;
  BoxedString(std::string value) { Assign(std::move(value)); }  // NOLINT
  BoxedString(const char* value) { Assign(value); }             // NOLINT
  BoxedString(const BoxedString& other) { Assign(other.str()); }
  BoxedString(BoxedString&&) noexcept = default;
  BoxedString& operator=(const BoxedString& other) {
    if (this != &other) Assign(other.str());
    return *this;
  }
  BoxedString& operator=(BoxedString&&) noexcept = default;
  BoxedString& operator=(std::string value) {
    Assign(std::move(value));
    return *this;
  }
  BoxedString& operator=(const char* value) {
    Assign(value);
    return *this;
  }

  bool empty() const { return value_ == nullptr; }
  void clear() { value_.reset(); }
  const std::string& str() const { return value_ ? *value_ : Empty(); }
  // Moves the text out, leaving this empty.
  std::string Release() {
    std::string text = value_ ? std::move(*value_) : std::string();
    value_.reset();
    return text;
  }
  operator const std::string&() const { return str(); }  // NOLINT

  friend bool operator==(const BoxedString& a, const BoxedString& b) {
    return a.str() == b.str();
  }
  friend std::ostream& operator<<(std::ostream& os, const BoxedString& s) {
    return os << s.str();
  }

 private:
  void Assign(std::string value) {
    if (value.empty()) {
      value_.reset();
    } else if (value_) {
      *value_ = std::move(value);
    } else {
      value_ = std::make_unique<std::string>(std::move(value));
    }
  }
  static const std::string& Empty() {
    static const std::string* const empty = new std::string();
    return *empty;
  }

  std::unique_ptr<std::string> value_;  // null while empty
};

namespace boxed_internal {

// A container on the heap, made by the first insert and null while empty:
// what BoxedMap and BoxedVector share. Copies are deep; an empty one
// equals one that was emptied.
template <typename C>
class Held {
 public:
  Held() = default;
  explicit Held(C c) {
    if (!c.empty()) c_ = std::make_unique<C>(std::move(c));
  }
  Held(const Held& other)
      : c_(other.empty() ? nullptr : std::make_unique<C>(*other.c_)) {}
  Held(Held&&) noexcept = default;
  Held& operator=(const Held& other) {
    if (this == &other) return *this;
    if (other.empty()) {
      c_.reset();
    } else if (c_) {
      *c_ = *other.c_;
    } else {
      c_ = std::make_unique<C>(*other.c_);
    }
    return *this;
  }
  Held& operator=(Held&&) noexcept = default;

  bool empty() const { return !c_ || c_->empty(); }
  typename C::size_type size() const { return c_ ? c_->size() : 0; }
  // The container, or null while none was made.
  C* get() const { return c_.get(); }
  // The container, or while there is none a shared empty one, only ever
  // read (threads holding different objects read it at once).
  C& OrEmpty() const {
    static C* const empty = new C();
    return c_ ? *c_ : *empty;
  }
  C& Made() {
    if (!c_) c_ = std::make_unique<C>();
    return *c_;
  }
  void reset() { c_.reset(); }
  C Copy() const { return c_ ? *c_ : C(); }

  friend bool operator==(const Held& a, const Held& b) {
    if (a.size() != b.size()) return false;
    return a.empty() || *a.c_ == *b.c_;
  }

 private:
  std::unique_ptr<C> c_;
};

}  // namespace boxed_internal

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
  BoxedMap(std::initializer_list<value_type> values) : held_(Map(values)) {}
  template <typename It>
  BoxedMap(It first, It last) : held_(Map(first, last)) {}
  BoxedMap(const Map& map) : held_(map) {}  // NOLINT: as the std::map it is
  BoxedMap(Map&& map) : held_(std::move(map)) {}  // NOLINT: as above
  BoxedMap& operator=(std::initializer_list<value_type> values) {
    held_ = Held(Map(values));
    return *this;
  }

  bool empty() const { return held_.empty(); }
  size_type size() const { return held_.size(); }

  iterator begin() { return Or().begin(); }
  iterator end() { return Or().end(); }
  const_iterator begin() const { return cbegin(); }
  const_iterator end() const { return cend(); }
  const_iterator cbegin() const { return Or().cbegin(); }
  const_iterator cend() const { return Or().cend(); }

  iterator find(const K& key) { return Or().find(key); }
  const_iterator find(const K& key) const { return Or().find(key); }
  size_type count(const K& key) const { return Or().count(key); }
  bool contains(const K& key) const { return Or().contains(key); }
  // As std::map::at: throws std::out_of_range when absent.
  V& at(const K& key) { return Or().at(key); }
  const V& at(const K& key) const { return Or().at(key); }

  V& operator[](const K& key) { return held_.Made()[key]; }
  V& operator[](K&& key) { return held_.Made()[std::move(key)]; }
  std::pair<iterator, bool> insert(const value_type& value) {
    return held_.Made().insert(value);
  }
  std::pair<iterator, bool> insert(value_type&& value) {
    return held_.Made().insert(std::move(value));
  }
  template <typename It>
  void insert(It first, It last) {
    if (first != last) held_.Made().insert(first, last);
  }
  template <typename M>
  std::pair<iterator, bool> insert_or_assign(const K& key, M&& value) {
    return held_.Made().insert_or_assign(key, std::forward<M>(value));
  }
  template <typename... Args>
  std::pair<iterator, bool> emplace(Args&&... args) {
    return held_.Made().emplace(std::forward<Args>(args)...);
  }
  template <typename... Args>
  std::pair<iterator, bool> try_emplace(const K& key, Args&&... args) {
    return held_.Made().try_emplace(key, std::forward<Args>(args)...);
  }
  size_type erase(const K& key) {
    // Not through Or(): std::map's erase of nothing clears an empty map,
    // which writes to it, and the shared empty map is read concurrently.
    Map* map = held_.get();
    return map != nullptr ? map->erase(key) : 0;
  }
  iterator erase(iterator it) { return held_.get()->erase(it); }
  iterator erase(const_iterator it) { return held_.get()->erase(it); }
  void clear() { held_.reset(); }

  // The map as a std::map, for callers that need one.
  Map ToMap() const { return held_.Copy(); }

  friend bool operator==(const BoxedMap&, const BoxedMap&) = default;

 private:
  using Held = boxed_internal::Held<Map>;

  Map& Or() const { return held_.OrEmpty(); }

  Held held_;
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
  BoxedVector(std::initializer_list<T> values) : held_(Vector(values)) {}
  BoxedVector(const Vector& vector) : held_(vector) {}  // NOLINT: as it is
  BoxedVector(Vector&& vector) : held_(std::move(vector)) {}  // NOLINT
  BoxedVector& operator=(std::initializer_list<T> values) {
    held_ = Held(Vector(values));
    return *this;
  }

  bool empty() const { return held_.empty(); }
  size_type size() const { return held_.size(); }

  iterator begin() { return Or().begin(); }
  iterator end() { return Or().end(); }
  const_iterator begin() const { return cbegin(); }
  const_iterator end() const { return cend(); }
  const_iterator cbegin() const { return Or().cbegin(); }
  const_iterator cend() const { return Or().cend(); }

  // As std::vector's: `i` must be below size().
  reference operator[](size_type i) { return (*held_.get())[i]; }
  const_reference operator[](size_type i) const { return (*held_.get())[i]; }
  reference front() { return held_.get()->front(); }
  const_reference front() const { return held_.get()->front(); }
  reference back() { return held_.get()->back(); }
  const_reference back() const { return held_.get()->back(); }

  void push_back(const T& value) { held_.Made().push_back(value); }
  void push_back(T&& value) { held_.Made().push_back(std::move(value)); }
  template <typename... Args>
  reference emplace_back(Args&&... args) {
    return held_.Made().emplace_back(std::forward<Args>(args)...);
  }
  iterator insert(const_iterator pos, const T& value) {
    if (held_.get() == nullptr) {
      // `pos` can only be this empty list's end().
      Vector& made = held_.Made();
      return made.insert(made.end(), value);
    }
    return held_.get()->insert(pos, value);
  }
  iterator erase(const_iterator pos) { return held_.get()->erase(pos); }
  iterator erase(const_iterator first, const_iterator last) {
    if (first == last) return begin() + (first - cbegin());
    return held_.get()->erase(first, last);
  }
  void reserve(size_type n) {
    if (n > 0) held_.Made().reserve(n);
  }
  void clear() { held_.reset(); }

  // The list as a std::vector, for callers that need one.
  Vector ToVector() const { return held_.Copy(); }

  friend bool operator==(const BoxedVector&, const BoxedVector&) = default;

 private:
  using Held = boxed_internal::Held<Vector>;

  Vector& Or() const { return held_.OrEmpty(); }

  Held held_;
};

}  // namespace kq
