// One unary gRPC call over HTTP/2 (nghttp2, prior knowledge: no TLS, no
// upgrade) on a Unix socket, behind the C interface of sinks/http_plugin_abi.h.
// What the kubelet's pod-resources API needs, and no more: one stream, the
// reply's one message, its status from the trailers (or a trailers-only reply).
#include <fcntl.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "sinks/http_plugin_abi.h"

namespace {

char* CopyOut(const std::string& s) {
  auto* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out != nullptr) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

struct Stream {
  int fd = -1;
  std::string request;  // the framed message: flag, length, bytes
  size_t sent = 0;
  int32_t id = -1;
  std::string http_status;
  std::string content_type;
  std::string grpc_status;
  std::string grpc_message;
  std::string body;  // the framed reply
  size_t max_body = 0;
  bool too_long = false;
  bool closed = false;
  uint32_t reset_code = 0;
  int send_errno = 0;
};

ssize_t OnSend(nghttp2_session*, const uint8_t* data, size_t length, int, void* user) {
  auto* s = static_cast<Stream*>(user);
  ssize_t n = ::send(s->fd, data, length, MSG_NOSIGNAL);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    return NGHTTP2_ERR_WOULDBLOCK;
  }
  if (n >= 0) return n;
  s->send_errno = errno;
  return NGHTTP2_ERR_CALLBACK_FAILURE;
}

int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name, size_t name_len,
             const uint8_t* value, size_t value_len, uint8_t, void* user) {
  auto* s = static_cast<Stream*>(user);
  if (frame->hd.type != NGHTTP2_HEADERS || frame->hd.stream_id != s->id) return 0;
  std::string_view n(reinterpret_cast<const char*>(name), name_len);
  std::string v(reinterpret_cast<const char*>(value), value_len);
  if (n == ":status") s->http_status = v;
  if (n == "content-type") s->content_type = v;
  if (n == "grpc-status") s->grpc_status = v;
  if (n == "grpc-message") s->grpc_message = v;
  return 0;
}

int OnData(nghttp2_session*, uint8_t, int32_t id, const uint8_t* data, size_t len, void* user) {
  auto* s = static_cast<Stream*>(user);
  if (id != s->id) return 0;
  if (s->body.size() + len > s->max_body) {
    s->too_long = true;
    return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  s->body.append(reinterpret_cast<const char*>(data), len);
  return 0;
}

int OnClose(nghttp2_session*, int32_t id, uint32_t error_code, void* user) {
  auto* s = static_cast<Stream*>(user);
  if (id == s->id) {
    s->closed = true;
    s->reset_code = error_code;
  }
  return 0;
}

ssize_t ReadRequest(nghttp2_session*, int32_t, uint8_t* buf, size_t length, uint32_t* flags,
                    nghttp2_data_source* source, void*) {
  auto* s = static_cast<Stream*>(source->ptr);
  size_t n = std::min(length, s->request.size() - s->sent);
  std::copy_n(s->request.data() + s->sent, n, buf);
  s->sent += n;
  if (s->sent == s->request.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return static_cast<ssize_t>(n);
}

// grpc-message is percent-encoded.
std::string PercentDecoded(std::string_view in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%' && i + 2 < in.size()) {
      out += static_cast<char>(std::strtol(std::string(in.substr(i + 1, 2)).c_str(), nullptr, 16));
      i += 2;
    } else {
      out += in[i];
    }
  }
  return out;
}

int Connect(const char* path, std::string* error) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (std::strlen(path) >= sizeof addr.sun_path) {
    *error = std::string("the socket path is too long: ") + path;
    return -1;
  }
  std::strcpy(addr.sun_path, path);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
    *error = std::string("cannot connect to ") + path + ": " + std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

// Drives the session until the stream closes; "" then, else why not.
std::string Exchange(nghttp2_session* session, Stream& s, int timeout_ms, const char* path) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  uint8_t buffer[16384];
  std::string head;  // the first bytes that came: a server of HTTP/1 says "HTTP/"
  auto failed = [&](const std::string& why) {
    return head.starts_with("HTTP/") ? std::string(path) + " answered in HTTP/1, not HTTP/2" : why;
  };
  while (!s.closed) {
    if (int rv = nghttp2_session_send(session); rv != 0) {
      // A server that does not speak HTTP/2 may have answered and hung up
      // before its answer was read.
      char peek[5];
      ssize_t got = ::recv(s.fd, peek, sizeof peek, MSG_DONTWAIT | MSG_PEEK);
      if (head.empty() && got > 0) head.assign(peek, static_cast<size_t>(got));
      return failed(std::string("cannot send to ") + path + ": " +
                    (s.send_errno != 0 ? std::strerror(s.send_errno) : nghttp2_strerror(rv)));
    }
    if (nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0) {
      return failed(std::string("the answer from ") + path + " is not HTTP/2");
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) return std::string("no answer from ") + path + " in time";
    pollfd p{.fd = s.fd, .events = POLLIN, .revents = 0};
    if (nghttp2_session_want_write(session) != 0) p.events |= POLLOUT;
    int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno != EINTR) return std::string("poll: ") + std::strerror(errno);
    if (ready <= 0 || (p.revents & (POLLIN | POLLHUP)) == 0) continue;
    ssize_t n = ::recv(s.fd, buffer, sizeof buffer, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) return failed(std::string(path) + " closed the connection before it answered");
    if (head.size() < 5) head.append(reinterpret_cast<char*>(buffer), std::min<size_t>(n, 5));
    if (nghttp2_session_mem_recv(session, buffer, static_cast<size_t>(n)) < 0) {
      if (s.too_long) return "the answer is longer than " + std::to_string(s.max_body) + " bytes";
      return failed(std::string("the answer from ") + path + " is not HTTP/2");
    }
  }
  return "";
}

void Call(const GrpcPluginCall& call, GrpcPluginReply* reply) {
  std::string error;
  Stream s;
  s.max_body = call.max_reply_bytes + 5;
  s.fd = Connect(call.socket_path, &error);
  if (s.fd < 0) {
    reply->error = CopyOut(error);
    return;
  }
  uint32_t size = static_cast<uint32_t>(call.message_size);
  s.request = std::string(1, '\0');
  for (int shift = 24; shift >= 0; shift -= 8) s.request += static_cast<char>(size >> shift);
  s.request.append(call.message, call.message_size);

  nghttp2_session_callbacks* callbacks = nullptr;
  nghttp2_session_callbacks_new(&callbacks);
  nghttp2_session_callbacks_set_send_callback(callbacks, OnSend);
  nghttp2_session_callbacks_set_on_header_callback(callbacks, OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, OnData);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, OnClose);
  nghttp2_session* session = nullptr;
  nghttp2_session_client_new(&session, callbacks, &s);
  nghttp2_session_callbacks_del(callbacks);

  nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0}};
  nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, settings, 1);
  auto header = [](const char* name, const char* value) {
    return nghttp2_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(name)),
                      reinterpret_cast<uint8_t*>(const_cast<char*>(value)), std::strlen(name),
                      std::strlen(value), NGHTTP2_NV_FLAG_NONE};
  };
  nghttp2_nv headers[] = {header(":method", "POST"),
                          header(":scheme", "http"),
                          header(":authority", "localhost"),
                          header(":path", call.method),
                          header("content-type", "application/grpc"),
                          header("te", "trailers"),
                          header("user-agent", "trainvitals")};
  nghttp2_data_provider body{};
  body.source.ptr = &s;
  body.read_callback = ReadRequest;
  s.id = nghttp2_submit_request(session, nullptr, headers, std::size(headers), &body, &s);
  if (s.id < 0) {
    error = std::string("cannot make the request: ") + nghttp2_strerror(s.id);
  } else {
    error = Exchange(session, s, call.timeout_ms, call.socket_path);
  }
  nghttp2_session_del(session);
  ::close(s.fd);
  if (error.empty() && s.grpc_status.empty()) {
    error = s.reset_code != 0
                ? "the stream was reset (HTTP/2 error " + std::to_string(s.reset_code) + ")"
            : s.http_status != "200" ? "the answer was HTTP " + s.http_status + ", not gRPC"
                                     : "the answer carried no gRPC status";
  }
  if (!error.empty()) {
    reply->error = CopyOut(error);
    return;
  }
  reply->grpc_status = std::atoi(s.grpc_status.c_str());
  if (reply->grpc_status != 0) {
    reply->error = CopyOut(PercentDecoded(s.grpc_message));
    return;
  }
  // The reply's one message: a flag byte (1: compressed, which was not
  // offered), its length, its bytes.
  if (s.body.size() < 5 || s.body[0] != 0) {
    reply->grpc_status = -1;
    reply->error = CopyOut(s.body.empty() ? "the answer carried no message"
                                          : "the answer's message is compressed or cut short");
    return;
  }
  size_t length = 0;
  for (int i = 1; i < 5; ++i) length = (length << 8) | static_cast<uint8_t>(s.body[i]);
  if (s.body.size() < 5 + length) {
    reply->grpc_status = -1;
    reply->error = CopyOut("the answer's message is cut short");
    return;
  }
  std::string message = s.body.substr(5, length);
  reply->message = CopyOut(message);
  reply->message_size = message.size();
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int TvGrpcPluginCall(const GrpcPluginCall* call,
                                                                       GrpcPluginReply* reply) {
  *reply = GrpcPluginReply{};
  reply->grpc_status = -1;
  try {
    Call(*call, reply);
  } catch (const std::exception& e) {
    reply->grpc_status = -1;
    reply->error = CopyOut(std::string("the call failed: ") + e.what());
  }
  return 0;
}

extern "C" __attribute__((visibility("default"))) void TvGrpcPluginFree(GrpcPluginReply* reply) {
  std::free(reply->message);
  std::free(reply->error);
  *reply = GrpcPluginReply{};
}
