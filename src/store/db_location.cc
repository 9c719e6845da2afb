#include "store/db_location.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

namespace tv {
namespace {

constexpr std::string_view kMask = "***";

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), text.begin(), [](char p, char t) {
           return p == std::tolower(static_cast<unsigned char>(t));
         });
}

// Where the URL's parts lie: [user_begin, at) is "user[:password]" (at is
// npos without one), [query, end) the query string (npos without one).
struct UrlParts {
  size_t user_begin = std::string_view::npos;
  size_t at = std::string_view::npos;
  size_t query = std::string_view::npos;
};

UrlParts SplitUrl(std::string_view url) {
  UrlParts p;
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return p;
  p.user_begin = scheme_end + 3;
  p.query = url.find('?', p.user_begin);
  // The last '@' before the query: a password may hold '@' and '/' unencoded.
  std::string_view before_query = url.substr(0, p.query);
  size_t at = before_query.rfind('@');
  if (at != std::string_view::npos && at >= p.user_begin) p.at = at;
  return p;
}

// The password's [begin, end) in `url`, in the user part or the query.
std::optional<std::pair<size_t, size_t>> UserPassword(std::string_view url, const UrlParts& p) {
  if (p.at == std::string_view::npos) return std::nullopt;
  size_t colon = url.substr(0, p.at).find(':', p.user_begin);
  if (colon == std::string_view::npos) return std::nullopt;
  return std::pair{colon + 1, p.at};
}

// Each `password=` parameter's value [begin, end) in the query string.
template <typename Fn>
void ForEachQueryPassword(std::string_view url, const UrlParts& p, Fn fn) {
  if (p.query == std::string_view::npos) return;
  size_t at = p.query + 1;
  while (at <= url.size()) {
    size_t end = std::min(url.find('&', at), url.size());
    std::string_view param = url.substr(at, end - at);
    constexpr std::string_view kKey = "password=";
    if (StartsWithNoCase(param, kKey)) fn(at + kKey.size(), end);
    at = end + 1;
  }
}

}  // namespace

bool IsPostgresUrl(std::string_view location) {
  return StartsWithNoCase(location, "postgresql://") || StartsWithNoCase(location, "postgres://");
}

std::string RedactLocation(std::string_view location) {
  if (!IsPostgresUrl(location)) return std::string(location);
  UrlParts p = SplitUrl(location);
  std::vector<std::pair<size_t, size_t>> spans;
  if (auto span = UserPassword(location, p)) spans.push_back(*span);
  ForEachQueryPassword(location, p, [&](size_t b, size_t e) { spans.emplace_back(b, e); });
  std::string out;
  size_t from = 0;
  for (auto [b, e] : spans) {
    out.append(location.substr(from, b - from));
    out.append(kMask);
    from = e;
  }
  out.append(location.substr(from));
  return out;
}

std::string RedactPasswordIn(std::string_view location, std::string text) {
  if (!IsPostgresUrl(location)) return text;
  UrlParts p = SplitUrl(location);
  std::vector<std::string_view> secrets;
  if (auto span = UserPassword(location, p)) {
    secrets.push_back(location.substr(span->first, span->second - span->first));
  }
  ForEachQueryPassword(location, p,
                       [&](size_t b, size_t e) { secrets.push_back(location.substr(b, e - b)); });
  for (std::string_view secret : secrets) {
    if (secret.size() < 3) continue;  // would mask ordinary words
    for (size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + kMask.size())) {
      text.replace(at, secret.size(), kMask);
    }
  }
  return text;
}

}  // namespace tv
