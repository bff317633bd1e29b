// Result<T>: a value or an error a person can act on. Errors a user can cause (a bad
// model file, a prompt longer than the context) travel as values and never abort.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace hearth {

struct Error {
    std::string message;
    // A stable name for callers that answer differently (an API's error code, e.g.
    // "context_length_exceeded"); empty for most errors.
    std::string code = {};
};

inline Error make_error(std::string message) {
    return Error{std::move(message)};
}

template <typename T>
class [[nodiscard]] Result {
  public:
    Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
    Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}

    bool ok() const { return state_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & {
        assert(ok());
        return std::get<0>(state_);
    }
    const T& value() const& {
        assert(ok());
        return std::get<0>(state_);
    }
    T&& value() && {
        assert(ok());
        return std::get<0>(std::move(state_));
    }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const {
        assert(!ok());
        return std::get<1>(state_);
    }
    const std::string& message() const { return error().message; }

  private:
    std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
  public:
    Result() = default;
    Result(Error error) : error_(std::move(error)), ok_(false) {}

    bool ok() const { return ok_; }
    explicit operator bool() const { return ok_; }
    const Error& error() const {
        assert(!ok_);
        return error_;
    }
    const std::string& message() const { return error().message; }

  private:
    Error error_;
    bool ok_ = true;
};

}  // namespace hearth
