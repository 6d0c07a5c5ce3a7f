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
  // The error's message; only valid when !ok().
  const std::string& message() const { return error().message; }

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
  // The failure as an Error (to return it from a function returning a Result).
  Error error() const { return Error{err_}; }

 private:
  std::string err_;
  bool failed_ = false;
};

// Error plumbing, one spelling for every layer:
//   RETURN_IF_ERROR(writeFileAtomic(path, text));        // Status or Result: return its error
//   ASSIGN_OR_RETURN(auto trace, readKinetoTrace(path));  // declare from a Result, or return its error
// The enclosing function returns a Status or a Result<U> (both take an Error).
#define GPUDOCTOR_CONCAT_INNER_(a, b) a##b
#define GPUDOCTOR_CONCAT_(a, b) GPUDOCTOR_CONCAT_INNER_(a, b)
#define RETURN_IF_ERROR(expr)                                     \
  do {                                                            \
    if (auto gpudoctor_status_ = (expr); !gpudoctor_status_.ok()) \
      return ::gpudoctor::Error{gpudoctor_status_.message()};     \
  } while (0)
#define ASSIGN_OR_RETURN(lhs, expr) ASSIGN_OR_RETURN_IMPL_(GPUDOCTOR_CONCAT_(gpudoctor_result_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr)             \
  auto tmp = (expr);                                       \
  if (!tmp.ok()) return ::gpudoctor::Error{tmp.message()}; \
  lhs = std::move(tmp.value())

}  // namespace gpudoctor
