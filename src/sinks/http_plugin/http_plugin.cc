// The HTTP plugin: one request with cpp-httplib (http and https), behind the C
// interface of sinks/http_plugin_abi.h. Loaded only by a run that pushes or
// posts, so that OpenSSL, which cpp-httplib initialises as it loads, costs
// nothing to the others.
#include <httplib.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "sinks/http_plugin/http_error.h"
#include "sinks/http_plugin_abi.h"

namespace {

char* Copy(const std::string& s) {
  auto* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out != nullptr) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

void Request(const HttpPluginCall& call, HttpPluginReply* reply) {
  httplib::Client client(call.origin);
  client.set_connection_timeout(call.connect_timeout_s, 0);
  client.set_read_timeout(call.read_timeout_s, 0);
  client.set_write_timeout(call.read_timeout_s, 0);
  client.set_follow_location(call.follow_location != 0);
  std::string method = call.method;
  std::string body(call.body != nullptr ? call.body : "", call.body_size);
  httplib::Result res = method == "DELETE" ? client.Delete(call.path)
                        : method == "PUT"  ? client.Put(call.path, body, call.content_type)
                                           : client.Post(call.path, body, call.content_type);
  if (!res) {
    reply->error = Copy(tv::DescribeHttpError(res.error(), call.host, call.port));
    reply->tls_refused = res.error() == httplib::Error::SSLServerVerification ||
                         res.error() == httplib::Error::SSLLoadingCerts;
    return;
  }
  reply->status = res->status;
  reply->body = Copy(res->body);
  reply->body_size = res->body.size();
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int TvHttpPluginCall(const HttpPluginCall* call,
                                                                       HttpPluginReply* reply) {
  *reply = HttpPluginReply{};
  try {
    Request(*call, reply);
  } catch (const std::exception& e) {
    reply->error = Copy(std::string("request failed: ") + e.what());
  } catch (...) {
    reply->error = Copy("request failed");
  }
  return 0;
}

extern "C" __attribute__((visibility("default"))) void TvHttpPluginFree(HttpPluginReply* reply) {
  std::free(reply->body);
  std::free(reply->error);
  *reply = HttpPluginReply{};
}
