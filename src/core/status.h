// Status: the result of an operation that touches the OS. Cheap to copy when ok.
// Code that meets the OS returns a Status instead of throwing; errno becomes a
// Status in one place (ErrnoStatus).
#pragma once

#include <string>
#include <string_view>

namespace tv {

class Status {
 public:
  enum class Code { kOk, kNotFound, kPermissionDenied, kInvalid, kIoError, kUnavailable };

  Status() = default;
  static Status Ok() { return {}; }
  static Status NotFound(std::string msg) { return {Code::kNotFound, std::move(msg)}; }
  static Status PermissionDenied(std::string msg) {
    return {Code::kPermissionDenied, std::move(msg)};
  }
  static Status Invalid(std::string msg) { return {Code::kInvalid, std::move(msg)}; }
  static Status IoError(std::string msg) { return {Code::kIoError, std::move(msg)}; }
  static Status Unavailable(std::string msg) { return {Code::kUnavailable, std::move(msg)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// Turns errno `err` met while working on `context` (usually a path) into a Status.
Status ErrnoStatus(std::string_view context, int err);

}  // namespace tv
