#include "sinks/http_plugin/http_error.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tv {
namespace {

// Why a TCP connection to host:port fails now: the resolver's or connect's
// message; empty when it succeeds this time.
std::string ConnectFailure(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return fmt::format("cannot resolve {}: {}", host, ::gai_strerror(rc));
  }
  std::string why;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int err = 0;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      err = errno;
      if (err == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        if (::poll(&p, 1, 1000) == 1) {
          socklen_t len = sizeof(err);
          ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        } else {
          err = ETIMEDOUT;
        }
      }
    }
    ::close(fd);
    if (err == 0) {
      why.clear();
      break;
    }
    why = std::strerror(err);
  }
  ::freeaddrinfo(found);
  return why;
}

}  // namespace

std::string DescribeHttpError(httplib::Error error, const std::string& host, int port) {
  std::string where = fmt::format("{}:{}", host, port);
  switch (error) {
    case httplib::Error::Connection: {
      std::string why = ConnectFailure(host, port);
      return fmt::format("cannot connect to {}: {}", where,
                         why.empty() ? "connection failed (it answers now)" : why);
    }
    case httplib::Error::ConnectionTimeout:
      return fmt::format("cannot connect to {}: no answer within the timeout", where);
    case httplib::Error::Read:
      return fmt::format("no reply from {} (read failed or timed out)", where);
    case httplib::Error::Write:
      return fmt::format("sending to {} failed (the connection broke)", where);
    case httplib::Error::BindIPAddress:
      return fmt::format("cannot bind the local address to reach {}", where);
    case httplib::Error::ExceedRedirectCount:
      return fmt::format("{} redirected too many times", where);
    case httplib::Error::Canceled:
      return fmt::format("the request to {} was cancelled", where);
    case httplib::Error::SSLConnection:
    case httplib::Error::SSLLoadingCerts:
    case httplib::Error::SSLServerVerification:
      return fmt::format("TLS with {} failed ({})", where, httplib::to_string(error));
    default:
      return fmt::format("request to {} failed ({})", where, httplib::to_string(error));
  }
}

}  // namespace tv
