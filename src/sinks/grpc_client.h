// One unary gRPC call on a Unix socket (the kubelet's pod-resources API), made
// by the HTTP plugin (sinks/http_client.h) with nghttp2: loaded on the first
// call, so a run that makes none never loads it.
//
// Thread safety: safe from any thread; each call is its own connection.
#pragma once

#include <cstddef>
#include <string>

namespace tv {

struct GrpcCall {
  std::string socket_path;
  std::string method;   // "/v1.PodResourcesLister/List"
  std::string message;  // the request message's protobuf bytes
  double timeout_s = 2;
  std::size_t max_reply_bytes = std::size_t{16} << 20;
};

struct GrpcReply {
  int status = -1;      // gRPC's status (0: OK); -1: no status came
  std::string message;  // the reply message's protobuf bytes, when OK
  std::string error;    // what went wrong (the server's words for a status)
};

GrpcReply GrpcUnixCall(const GrpcCall& call);

}  // namespace tv
