// Network addresses given as options: where the Prometheus endpoint listens and
// where the Pushgateway is. Pure parsers; they throw ConfigError (exit code 2)
// naming the flag and the accepted forms.
#pragma once

#include <string>
#include <string_view>

namespace tv {

struct ListenAddress {
  std::string host;  // "127.0.0.1", "0.0.0.0", "::1", a name
  int port = 0;      // 0: any free port
};

// Forms: "PORT" (127.0.0.1:PORT, this machine only), "HOST:PORT", ":PORT" (all
// interfaces, 0.0.0.0), "[V6]:PORT".
ListenAddress ParseListenAddress(std::string_view flag, std::string_view text);

// Whether a listening host is reachable from this machine only: 127.0.0.0/8,
// ::1 or "localhost". Any other address (0.0.0.0, an interface) is not.
bool IsLoopbackHost(std::string_view host);

struct HttpUrl {
  std::string host;
  int port = 80;
  std::string path;  // without a trailing '/'; "" for the root
};

// "http://HOST[:PORT][/PATH]" (https is not supported).
HttpUrl ParseHttpUrl(std::string_view flag, std::string_view text);

}  // namespace tv
