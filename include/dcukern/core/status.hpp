// Status: the result of every dcukern call. Never throws across the API; an error carries a readable
// message. The success path allocates nothing (the message is built only for errors).
#pragma once
#include <string>
#include <utility>

namespace dcukern {

enum class StatusCode { ok, invalid_argument, unsupported, runtime_error, no_device };

inline const char* to_string(StatusCode c) {
  switch (c) {
    case StatusCode::ok: return "ok";
    case StatusCode::invalid_argument: return "invalid argument";
    case StatusCode::unsupported: return "unsupported";
    case StatusCode::runtime_error: return "runtime error";
    case StatusCode::no_device: return "no device";
  }
  return "unknown";
}

class Status {
 public:
  Status() = default;
  static Status success() { return Status(); }
  static Status error(StatusCode code, std::string message) { return Status(code, std::move(message)); }
  static Status invalid(std::string message) { return error(StatusCode::invalid_argument, std::move(message)); }
  static Status unsupported(std::string message) { return error(StatusCode::unsupported, std::move(message)); }

  bool ok() const { return code_ == StatusCode::ok; }
  explicit operator bool() const { return ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string to_string() const {
    return ok() ? std::string("ok") : std::string(dcukern::to_string(code_)) + ": " + message_;
  }

 private:
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  StatusCode code_ = StatusCode::ok;
  std::string message_;
};

}  // namespace dcukern
