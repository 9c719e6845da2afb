#include "analysis/alerts/action_url.h"

#include <fmt/format.h>

namespace tv {

std::string ParseActionUrl(std::string_view text, ActionUrl* url) {
  std::string_view rest;
  if (text.starts_with("http://")) {
    rest = text.substr(7);
  } else if (text.starts_with("https://")) {
    url->https = true;
    url->port = 443;
    rest = text.substr(8);
  } else {
    return "it must start with http:// or https://";
  }
#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
  if (url->https) return "this build of trainvitals has no https: use http://";
#endif
  if (text.find_first_of(" \t\r\n") != std::string_view::npos) return "it has a space in it";
  size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  std::string_view tail = end == std::string_view::npos ? "" : rest.substr(end);
  if (size_t hash = tail.find('#'); hash != std::string_view::npos) tail = tail.substr(0, hash);
  if (authority.find('@') != std::string_view::npos) return "user:password@ is not supported";
  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with('[')) {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return "an IPv6 address needs its closing ]";
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return "a ':' and a port may follow the host, nothing else";
      port = after.substr(1);
    }
  } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return "it has no host";
  for (char c : host) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_' || c == ':';
    if (!ok) return fmt::format("'{}' is not a host name", host);
  }
  if (authority.find(':') != std::string_view::npos && !authority.starts_with('[') &&
      host.find(':') != std::string_view::npos) {
    return "an IPv6 address needs brackets: http://[::1]:9093";
  }
  if (!port.empty() || authority.ends_with(':')) {
    int p = 0;
    for (char c : port) {
      if (c < '0' || c > '9' || p > 65535) return "the port must be a number 1-65535";
      p = p * 10 + (c - '0');
    }
    if (p < 1 || p > 65535) return "the port must be a number 1-65535";
    url->port = p;
  }
  url->host = std::string(host);
  url->path = std::string(tail);
  bool v6 = url->host.find(':') != std::string::npos;
  url->origin = fmt::format("{}://{}{}{}:{}", url->https ? "https" : "http", v6 ? "[" : "",
                            url->host, v6 ? "]" : "", url->port);
  return "";
}

std::string CheckActionUrl(std::string_view url) {
  ActionUrl parsed;
  return ParseActionUrl(url, &parsed);
}

}  // namespace tv
