// Foreign text made harmless (core/escape.h) and its uses: a Prometheus label
// value and a CSV cell. Asserts the promises, not the exact output.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/escape.h"
#include "sinks/prom_text.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

// Valid UTF-8 with no control character of any kind VisibleText removes.
bool Harmless(std::string_view s) {
  while (!s.empty()) {
    size_t n = tv::ValidUtf8Length(s);
    if (n == 0) return false;
    auto b0 = static_cast<unsigned char>(s[0]);
    if (n == 1 && (b0 < 0x20 || b0 == 0x7F)) return false;
    if (n == 2 && b0 == 0xC2 && static_cast<unsigned char>(s[1]) < 0xA0) return false;  // C1
    if (n == 3 && s.substr(0, 2) == "\xE2\x80") {
      auto b2 = static_cast<unsigned char>(s[2]);
      if (b2 == 0xA8 || b2 == 0xA9 || (b2 >= 0xAA && b2 <= 0xAE)) return false;
    }
    if (n == 3 && s.substr(0, 2) == "\xE2\x81") {
      auto b2 = static_cast<unsigned char>(s[2]);
      if (b2 >= 0xA6 && b2 <= 0xA9) return false;
    }
    s.remove_prefix(n);
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);

  std::string visible = tv::VisibleText(in);
  Check(Harmless(visible));
  if (tv::IsPrintableAscii(in)) Check(visible == in);
  Check(tv::VisibleText(visible) == visible);  // idempotent

  // A label value: harmless, and only \\ and \" escapes, so a parser reads
  // back `visible` exactly.
  std::string label;
  tv::AppendEscapedLabelValue(in, tv::PromFormat::kText004, &label);
  Check(Harmless(label));
  std::string read_back;
  for (size_t i = 0; i < label.size(); ++i) {
    if (label[i] == '"') std::abort();  // unescaped quote would end the value
    if (label[i] == '\\') {
      Check(i + 1 < label.size() && (label[i + 1] == '\\' || label[i + 1] == '"'));
      ++i;
    }
    read_back.push_back(label[i]);
  }
  Check(read_back == visible);

  // A CSV cell: harmless, quoted as RFC 4180 when it must be, never a formula.
  std::string cell = tv::CsvCell(in);
  Check(Harmless(cell));
  std::string content;
  if (!cell.empty() && cell[0] == '"') {
    Check(cell.size() >= 2 && cell.back() == '"');
    for (size_t i = 1; i + 1 < cell.size(); ++i) {
      if (cell[i] == '"') {
        Check(cell[i + 1] == '"' && i + 2 < cell.size());
        ++i;
      }
      content.push_back(cell[i]);
    }
  } else {
    Check(cell.find_first_of(",\"") == std::string::npos);
    content = cell;
  }
  if (!content.empty() && std::string_view("=+-@\t\r").find(content[0]) != std::string_view::npos) {
    Check(tv::IsPlainNumber(content));
  }
  return 0;
}
