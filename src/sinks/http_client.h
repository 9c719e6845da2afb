// One HTTP request (the Pushgateway's pushes, the alerts' webhooks and
// Alertmanager), made by the HTTP plugin: cpp-httplib with OpenSSL, built into
// libtrainvitals_http.so and embedded in this program. It is loaded on the
// first request, so a run that makes none never loads OpenSSL, whose start-up
// alone cost every run about 4 ms and 4 MiB. TRAINVITALS_HTTP_LIBRARY names
// another build of the plugin to load instead.
//
// Thread safety: safe from any thread; each call is its own connection.
#pragma once

#include <string>

namespace tv {

struct HttpCall {
  std::string method = "POST";  // "POST", "PUT" or "DELETE"
  std::string host;             // without brackets
  int port = 80;
  bool https = false;
  std::string path = "/";  // with its query
  std::string body;
  std::string content_type = "application/json";
  int connect_timeout_s = 1;
  int read_timeout_s = 2;
  bool follow_location = false;
};

struct HttpReply {
  int status = 0;  // 0: no reply came, `error` says why
  std::string body;
  std::string error;         // "cannot connect to 127.0.0.1:9091: Connection refused", ...
  bool tls_refused = false;  // the certificate was refused: trying again will not help
};

HttpReply HttpRequest(const HttpCall& call);

// "http://host:port" ("[::1]" for an IPv6 address).
std::string HttpOrigin(const std::string& host, int port, bool https);

}  // namespace tv
