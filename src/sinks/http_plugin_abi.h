// The C interface of the HTTP plugin (libtrainvitals_http.so, built from
// sinks/http_plugin/ with cpp-httplib and OpenSSL, and nghttp2 for gRPC),
// which sinks/http_client.cc loads on the first request. Plain C types, so the
// plugin and its loader need not agree on anything else.
#pragma once

#include <cstddef>

extern "C" {

struct HttpPluginCall {
  const char* method;  // "POST", "PUT", "DELETE"
  const char* origin;  // "http://host:port", "https://host"
  const char* host;    // for the words of an error, without brackets
  int port;
  const char* path;  // with its query; "/" for the root
  const char* body;  // ignored for DELETE
  std::size_t body_size;
  const char* content_type;
  int connect_timeout_s;
  int read_timeout_s;  // also the write timeout
  int follow_location;
};

struct HttpPluginReply {
  int status;  // the HTTP status; 0 when no reply came (`error` says why)
  char* body;  // the reply's body (malloc'd, NUL-terminated), or null
  std::size_t body_size;
  char* error;      // why no reply came, in plain words (malloc'd), or null
  int tls_refused;  // 1: the server's certificate was refused, or none loaded
};

// TvHttpPluginCall makes the request and fills `reply` (0 always), which
// TvHttpPluginFree releases.
using HttpPluginCallFn = int (*)(const HttpPluginCall* call, HttpPluginReply* reply);
using HttpPluginFreeFn = void (*)(HttpPluginReply* reply);

// One unary gRPC call over HTTP/2 on a Unix socket (nghttp2), as the
// kubelet's pod-resources API is asked.
struct GrpcPluginCall {
  const char* socket_path;
  const char* method;   // "/package.Service/Method"
  const char* message;  // the request message's protobuf bytes
  std::size_t message_size;
  int timeout_ms;               // for the whole call
  std::size_t max_reply_bytes;  // a longer reply is refused
};

struct GrpcPluginReply {
  int grpc_status;  // gRPC's status (0: OK); -1 when no status came (`error` says why)
  char* message;    // the reply message's bytes (malloc'd), or null
  std::size_t message_size;
  char* error;  // what went wrong, in plain words (malloc'd), or null
};

// TvGrpcPluginCall makes the call and fills `reply` (0 always), which
// TvGrpcPluginFree releases.
using GrpcPluginCallFn = int (*)(const GrpcPluginCall* call, GrpcPluginReply* reply);
using GrpcPluginFreeFn = void (*)(GrpcPluginReply* reply);

}  // extern "C"
