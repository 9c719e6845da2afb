// The address of a webhook or Alertmanager action: parsed, and checked when a
// rules file is loaded ("it must start with http:// or https://"), so that a
// bad address fails before the run starts.
#pragma once

#include <string>
#include <string_view>

namespace tv {

struct ActionUrl {
  bool https = false;
  std::string host;  // without brackets
  int port = 80;
  std::string path;  // with its query; "" for the root
  // "https://hooks.example.com:443": for the client, and for messages (the path
  // of a webhook is often its secret).
  std::string origin;
};

// Parses "http[s]://HOST[:PORT][/PATH][?QUERY]"; "" or why not.
std::string ParseActionUrl(std::string_view text, ActionUrl* url);

// Whether `url` can be a rule's webhook or alertmanager address: "" when it
// can, else why not, for the rule loader's message. https is checked against
// the server's certificate (the system's CA store; SSL_CERT_FILE /
// SSL_CERT_DIR name others).
std::string CheckActionUrl(std::string_view url);

}  // namespace tv
