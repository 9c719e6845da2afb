#include "sources/mountinfo.h"

#include "sources/text.h"

namespace tv {
namespace {

bool IsOctal(char c) { return c >= '0' && c <= '7'; }

// Decodes the \ooo escapes the kernel writes for space, tab, newline and '\'.
std::string Unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && IsOctal(s[i + 1]) && IsOctal(s[i + 2]) &&
        IsOctal(s[i + 3])) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::vector<MountInfo> ParseMountInfo(std::string_view text) {
  std::vector<MountInfo> out;
  while (!text.empty()) {
    std::string_view rest = text::NextLine(&text);
    std::string_view f[6];
    int n = 0;
    while (n < 6 && !(f[n] = text::NextField(&rest)).empty()) ++n;
    if (n < 6) continue;
    // Optional fields (shared:N, master:N) run up to a lone "-".
    std::string_view field;
    do {
      field = text::NextField(&rest);
    } while (!field.empty() && field != "-");
    if (field.empty()) continue;
    std::string_view fs_type = text::NextField(&rest);
    std::string_view source = text::NextField(&rest);
    std::string_view super_options = text::NextField(&rest);
    if (fs_type.empty() || source.empty()) continue;
    out.push_back(
        {Unescape(f[3]), Unescape(f[4]), std::string(fs_type), std::string(super_options)});
  }
  return out;
}

bool HasOption(std::string_view options, std::string_view option) {
  while (!options.empty()) {
    size_t comma = options.find(',');
    if (options.substr(0, comma) == option) return true;
    if (comma == std::string_view::npos) break;
    options.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace tv
