// Result<T, E>: a value or an error, for expected failures (bad input) that
// the caller must look at. C++20 has no std::expected; this is the small
// part of it that swarmcast uses.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace swarmcast {

template <class E>
struct Unexpected {
  explicit Unexpected(E e) : error(std::move(e)) {}
  E error;
};
template <class E>
Unexpected(E) -> Unexpected<E>;
// A message written as a literal is a std::string error.
Unexpected(const char*)->Unexpected<std::string>;

template <class T, class E>
class [[nodiscard]] Result {
 public:
  Result(T value) : storage_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit
  Result(Unexpected<E> u) : storage_(std::in_place_index<1>, std::move(u.error)) {}  // NOLINT

  bool ok() const { return storage_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(storage_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(storage_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(storage_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const E& error() const {
    assert(!ok());
    return std::get<1>(storage_);
  }

 private:
  std::variant<T, E> storage_;
};

}  // namespace swarmcast
