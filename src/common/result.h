// Error values for expected failures (bad input, missing files): a parse or probe failure is a
// value that names what was wrong, never an exception on a hot path and never a crash.
#pragma once
#include <string>
#include <utility>
#include <variant>

namespace gpudoctor {

// What went wrong, as one line a user can act on (names the file, offset or device).
struct Error {
  std::string message;
};

// Either a value or an Error.
template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error e) : v_(std::move(e)) {}      // NOLINT
  // True when a value is held.
  bool ok() const { return v_.index() == 0; }
  // The value; only valid when ok().
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  // The error; only valid when !ok().
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Success or an Error, for operations without a value.
class Status {
 public:
  Status() = default;
  Status(Error e) : err_(std::move(e.message)), failed_(true) {}  // NOLINT
  // True on success.
  bool ok() const { return !failed_; }
  // The message of a failure.
  const std::string& message() const { return err_; }

 private:
  std::string err_;
  bool failed_ = false;
};

}  // namespace gpudoctor
