// The head of one HTTP/1.x request (request line and headers), parsed from the
// bytes a connection has sent so far. Pure; the MetricsServer's loop calls it
// each time more bytes arrive. Only what a metrics endpoint needs is kept.
//
// Thread-safe: no state.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tv {

struct HttpRequestHead {
  std::string method;      // "GET"
  std::string path;        // "/metrics" (the target without its query)
  int minor_version = 1;   // HTTP/1.<minor_version>
  bool keep_alive = true;  // HTTP/1.1 unless "Connection: close"; 1.0 only if asked
  std::string accept;      // the Accept header, "" when absent
  bool has_body = false;   // Content-Length > 0 or Transfer-Encoding: a body follows
};

enum class HeadStatus {
  kIncomplete,  // no blank line yet: wait for more bytes
  kComplete,    // parsed; `*head_bytes` is the head's length, blank line included
  kBad,         // not an HTTP/1.x request head (answer 400 and close)
  kTooLarge,    // no end within `max_bytes` (answer 431 and close)
};

// Parses the head at the start of `bytes`. Lines end in CRLF or a bare LF.
HeadStatus ParseHttpRequestHead(std::string_view bytes, size_t max_bytes, HttpRequestHead* head,
                                size_t* head_bytes);

}  // namespace tv
