#include "core/escape.h"

namespace tv {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Appends the UTF-8 form of `cp` (U+0800-U+FFFF: three bytes).
void AppendThreeByte(char32_t cp, std::string* out) {
  out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
  out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
  out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
}

// The code point of a valid sequence of `n` bytes at the start of `s`.
char32_t CodePoint(std::string_view s, size_t n) {
  auto b = [&](size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(s[i])); };
  switch (n) {
    case 1:
      return b(0);
    case 2:
      return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3:
      return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    default:
      return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
}

// Characters above U+007F that move or hide text on a terminal.
bool IsHiddenControl(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Skips digits at `i`; false when there are none.
bool Digits(std::string_view s, size_t* i) {
  size_t start = *i;
  while (*i < s.size() && IsDigit(s[*i])) ++*i;
  return *i > start;
}

}  // namespace

size_t ValidUtf8Length(std::string_view s) {
  if (s.empty()) return 0;
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char c = byte(0);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // no overlong forms
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;  // nothing beyond U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < n || byte(1) < lo || byte(1) > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return n;
}

bool IsPrintableAscii(std::string_view text) {
  for (char c : text) {
    if (c < 0x20 || c > 0x7E) return false;  // char may be signed: bytes >= 0x80 are < 0
  }
  return true;
}

void AppendVisibleText(std::string_view text, std::string* out) {
  if (IsPrintableAscii(text)) {
    out->append(text);
    return;
  }
  while (!text.empty()) {
    size_t n = ValidUtf8Length(text);
    if (n == 0) {
      out->append(kReplacement);
      n = 1;
    } else {
      char32_t cp = CodePoint(text, n);
      if (cp < 0x20) {
        AppendThreeByte(0x2400 + cp, out);  // its Control Picture
      } else if (cp == 0x7F) {
        AppendThreeByte(0x2421, out);
      } else if (IsHiddenControl(cp)) {
        out->append(kReplacement);
      } else {
        out->append(text.substr(0, n));
      }
    }
    text.remove_prefix(n);
  }
}

std::string VisibleText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  AppendVisibleText(text, &out);
  return out;
}

bool IsPlainNumber(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  if (!Digits(s, &i)) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!Digits(s, &i)) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!Digits(s, &i)) return false;
  }
  return i == s.size();
}

std::string CsvCell(std::string_view text) {
  std::string cell;
  cell.reserve(text.size() + 3);
  if (!text.empty() && (text[0] == '=' || text[0] == '+' || text[0] == '-' || text[0] == '@') &&
      !IsPlainNumber(text)) {
    cell.push_back('\'');
  }
  AppendVisibleText(text, &cell);
  if (cell.find_first_of(",\"") == std::string::npos) return cell;
  std::string quoted = "\"";
  for (char c : cell) {
    if (c == '"') quoted.push_back('"');
    quoted.push_back(c);
  }
  quoted.push_back('"');
  return quoted;
}

}  // namespace tv
