#include "core/endpoint.h"

#include <fmt/format.h>

#include <charconv>

#include "core/config.h"

namespace tv {
namespace {

bool ParsePort(std::string_view text, int* port) {
  int v = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0 || v > 65535) return false;
  *port = v;
  return true;
}

bool ValidHost(std::string_view host) {
  if (host.empty()) return false;
  for (char c : host) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == ':' || c == '_';
    if (!ok) return false;
  }
  return true;
}

// Splits "HOST:PORT" or "[V6]:PORT"; false when malformed.
bool SplitHostPort(std::string_view text, std::string* host, int* port) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string_view h = text.substr(0, colon);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']')
    h = h.substr(1, h.size() - 2);
  else if (h.find(':') != std::string_view::npos)
    return false;  // bare IPv6 needs brackets
  *host = std::string(h);
  return ParsePort(text.substr(colon + 1), port);
}

}  // namespace

bool IsLoopbackHost(std::string_view host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

ListenAddress ParseListenAddress(std::string_view flag, std::string_view text) {
  ListenAddress a{"127.0.0.1", 0};
  bool ok = false;
  if (text.find(':') == std::string_view::npos) {
    ok = ParsePort(text, &a.port);
  } else if (SplitHostPort(text, &a.host, &a.port)) {
    if (a.host.empty()) a.host = "0.0.0.0";
    ok = ValidHost(a.host);
  }
  if (!ok) {
    throw ConfigError(fmt::format(
        "{}: '{}' is not an address: give PORT (this machine only), HOST:PORT or :PORT (all "
        "interfaces), port 0-65535",
        flag, text));
  }
  return a;
}

HttpUrl ParseHttpUrl(std::string_view flag, std::string_view text) {
  auto bad = [&](std::string_view why) {
    return ConfigError(
        fmt::format("{}: '{}' is not a URL like http://HOST:9091 ({})", flag, text, why));
  };
  constexpr std::string_view kScheme = "http://";
  if (!text.starts_with(kScheme)) throw bad("it must start with http://");
  std::string_view rest = text.substr(kScheme.size());
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  HttpUrl url;
  if (slash != std::string_view::npos) url.path = std::string(rest.substr(slash));
  while (!url.path.empty() && url.path.back() == '/') url.path.pop_back();
  if (url.path.find_first_of("?# ") != std::string::npos) throw bad("no query or spaces");
  bool has_port = !authority.empty() && authority.back() != ']' &&
                  authority.find(':') != std::string_view::npos;
  if (has_port) {
    if (!SplitHostPort(authority, &url.host, &url.port)) throw bad("bad port");
  } else {
    std::string_view h = authority;
    if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
    url.host = std::string(h);
  }
  if (!ValidHost(url.host)) throw bad("bad host");
  if (url.port == 0) throw bad("port 0");
  return url;
}

}  // namespace tv
