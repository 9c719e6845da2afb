#include "sinks/http_client.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "sinks/grpc_client.h"
#include "sinks/http_plugin_abi.h"

namespace tv {

// The plugin's bytes, embedded at build time (cmake/embed_binary.cmake).
std::string_view HttpPluginBytes();

namespace {

struct Plugin {
  HttpPluginCallFn call = nullptr;
  HttpPluginFreeFn free = nullptr;
  GrpcPluginCallFn grpc = nullptr;  // null in a plugin built without it
  GrpcPluginFreeFn grpc_free = nullptr;
  std::string error;  // why it could not be loaded
};

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// dlopen of the embedded plugin: from an anonymous memory file, else from a
// private temporary file removed at once.
void* OpenEmbedded(std::string* error) {
  std::string_view bytes = HttpPluginBytes();
  int fd = ::memfd_create("trainvitals-http", MFD_CLOEXEC);
  std::string path;
  std::string temp;
  if (fd >= 0) {
    path = fmt::format("/proc/self/fd/{}", fd);
  } else {
    const char* dir = std::getenv("TMPDIR");
    temp = fmt::format("{}/trainvitals-http-XXXXXX", dir != nullptr && *dir ? dir : "/tmp");
    fd = ::mkostemp(temp.data(), O_CLOEXEC);
    if (fd < 0) {
      *error = fmt::format("cannot write the HTTP plugin: {}", std::strerror(errno));
      return nullptr;
    }
    path = temp;
  }
  void* handle = nullptr;
  if (WriteAll(fd, bytes)) {
    handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) *error = fmt::format("cannot load the HTTP plugin: {}", ::dlerror());
  } else {
    *error = fmt::format("cannot write the HTTP plugin: {}", std::strerror(errno));
  }
  ::close(fd);
  if (!temp.empty()) ::unlink(temp.c_str());
  return handle;
}

Plugin Load() {
  Plugin p;
  void* handle = nullptr;
  if (const char* path = std::getenv("TRAINVITALS_HTTP_LIBRARY"); path != nullptr && *path) {
    handle = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) p.error = fmt::format("cannot load {}: {}", path, ::dlerror());
  } else {
    handle = OpenEmbedded(&p.error);
  }
  if (handle == nullptr) return p;
  p.call = reinterpret_cast<HttpPluginCallFn>(::dlsym(handle, "TvHttpPluginCall"));
  p.free = reinterpret_cast<HttpPluginFreeFn>(::dlsym(handle, "TvHttpPluginFree"));
  if (p.call == nullptr || p.free == nullptr) {
    p.call = nullptr;
    p.error = "the HTTP plugin lacks TvHttpPluginCall or TvHttpPluginFree";
  }
  p.grpc = reinterpret_cast<GrpcPluginCallFn>(::dlsym(handle, "TvGrpcPluginCall"));
  p.grpc_free = reinterpret_cast<GrpcPluginFreeFn>(::dlsym(handle, "TvGrpcPluginFree"));
  if (p.grpc_free == nullptr) p.grpc = nullptr;
  return p;
}

const Plugin& LoadedPlugin() {
  static const Plugin plugin = Load();  // once, whichever thread asks first
  return plugin;
}

}  // namespace

std::string HttpOrigin(const std::string& host, int port, bool https) {
  bool v6 = host.find(':') != std::string::npos;
  return fmt::format("{}://{}{}{}:{}", https ? "https" : "http", v6 ? "[" : "", host, v6 ? "]" : "",
                     port);
}

HttpReply HttpRequest(const HttpCall& call) {
  HttpReply out;
  const Plugin& plugin = LoadedPlugin();
  if (plugin.call == nullptr) {
    out.error = plugin.error;
    return out;
  }
  std::string origin = HttpOrigin(call.host, call.port, call.https);
  HttpPluginCall c{call.method.c_str(),
                   origin.c_str(),
                   call.host.c_str(),
                   call.port,
                   call.path.empty() ? "/" : call.path.c_str(),
                   call.body.data(),
                   call.body.size(),
                   call.content_type.c_str(),
                   call.connect_timeout_s,
                   call.read_timeout_s,
                   call.follow_location ? 1 : 0};
  HttpPluginReply r{};
  plugin.call(&c, &r);
  out.status = r.status;
  if (r.body != nullptr) out.body.assign(r.body, r.body_size);
  if (r.error != nullptr) out.error = r.error;
  out.tls_refused = r.tls_refused != 0;
  plugin.free(&r);
  return out;
}

GrpcReply GrpcUnixCall(const GrpcCall& call) {
  GrpcReply out;
  const Plugin& plugin = LoadedPlugin();
  if (plugin.grpc == nullptr) {
    out.error = plugin.error.empty() ? "the HTTP plugin lacks TvGrpcPluginCall" : plugin.error;
    return out;
  }
  GrpcPluginCall c{call.socket_path.c_str(),
                   call.method.c_str(),
                   call.message.data(),
                   call.message.size(),
                   static_cast<int>(call.timeout_s * 1000),
                   call.max_reply_bytes};
  GrpcPluginReply r{};
  plugin.grpc(&c, &r);
  out.status = r.grpc_status;
  if (r.message != nullptr) out.message.assign(r.message, r.message_size);
  if (r.error != nullptr) out.error = r.error;
  plugin.grpc_free(&r);
  return out;
}

}  // namespace tv
