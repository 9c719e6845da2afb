#include "sinks/http_request.h"

#include <cctype>

namespace tv {
namespace {

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

bool ContainsToken(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (EqualsNoCase(item, token)) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

// The next line of `*rest` without its CRLF or LF; false when none is whole.
bool NextLine(std::string_view* rest, std::string_view* line) {
  size_t lf = rest->find('\n');
  if (lf == std::string_view::npos) return false;
  *line = rest->substr(0, lf);
  if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
  rest->remove_prefix(lf + 1);
  return true;
}

bool IsTokenChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

}  // namespace

HeadStatus ParseHttpRequestHead(std::string_view bytes, size_t max_bytes, HttpRequestHead* head,
                                size_t* head_bytes) {
  // Blank lines before the request line are allowed (RFC 9112 2.2).
  size_t start = 0;
  while (start < bytes.size() && (bytes[start] == '\r' || bytes[start] == '\n')) ++start;
  size_t end = bytes.find("\n\r\n", start);
  size_t bare = bytes.find("\n\n", start);
  size_t head_end = std::string_view::npos;
  if (end != std::string_view::npos) head_end = end + 3;
  if (bare != std::string_view::npos && (head_end == std::string_view::npos || bare + 2 < head_end))
    head_end = bare + 2;
  if (head_end == std::string_view::npos || head_end > max_bytes) {
    return bytes.size() >= max_bytes ? HeadStatus::kTooLarge : HeadStatus::kIncomplete;
  }
  std::string_view rest = bytes.substr(start, head_end - start);
  std::string_view line;
  if (!NextLine(&rest, &line)) return HeadStatus::kBad;
  // METHOD SP TARGET SP HTTP/1.x
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == 0 || sp2 == std::string_view::npos || sp2 == sp1 + 1) return HeadStatus::kBad;
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  for (char c : method) {
    if (!IsTokenChar(c)) return HeadStatus::kBad;
  }
  if (version.size() != 8 || !version.starts_with("HTTP/1.") || version[7] < '0' ||
      version[7] > '9') {
    return HeadStatus::kBad;
  }
  for (char c : target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7F) return HeadStatus::kBad;
  }
  HttpRequestHead h;
  h.method = std::string(method);
  h.path = std::string(target.substr(0, target.find('?')));
  h.minor_version = version[7] - '0';
  bool close = false, keep_alive = false;
  while (NextLine(&rest, &line) && !line.empty()) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return HeadStatus::kBad;
    std::string_view name = line.substr(0, colon);
    for (char c : name) {
      if (!IsTokenChar(c)) return HeadStatus::kBad;  // no space before the colon either
    }
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    if (EqualsNoCase(name, "Connection")) {
      close |= ContainsToken(value, "close");
      keep_alive |= ContainsToken(value, "keep-alive");
    } else if (EqualsNoCase(name, "Accept")) {
      if (!h.accept.empty()) h.accept += ", ";
      h.accept.append(value);
    } else if (EqualsNoCase(name, "Content-Length")) {
      if (value.find_first_not_of('0') != std::string_view::npos) h.has_body = true;
    } else if (EqualsNoCase(name, "Transfer-Encoding")) {
      h.has_body = true;
    }
  }
  h.keep_alive = !close && (h.minor_version >= 1 || keep_alive);
  *head = std::move(h);
  *head_bytes = head_end;
  return HeadStatus::kComplete;
}

}  // namespace tv
