// Foreign text made harmless where it lands. A process name, a command line, a
// run or host name may come from another user of the machine: it can hold
// terminal control sequences (ESC [ ..., BEL, a bare CR that rewrites a line),
// bytes that are not UTF-8, or, in a spreadsheet, a formula. Every place such
// text reaches a terminal, a Prometheus label value or a CSV cell goes through
// this one file.
//
// Made visible (VisibleText): the result is valid UTF-8 with no C0 control
// (U+0000-U+001F), DEL, C1 control (U+0080-U+009F), bidirectional override or
// isolate (U+202A-U+202E, U+2066-U+2069), nor line or paragraph separator
// (U+2028, U+2029):
//   - a C0 control becomes its Control Picture, U+2400 + code (ESC "␛",
//     BEL "␇", newline "␊", tab "␉", CR "␍"); DEL becomes "␡" (U+2421);
//   - every other character above, and each byte of an invalid UTF-8 sequence
//     (a kernel name cut mid-character, overlong forms, surrogates), becomes
//     U+FFFD "�".
// Everything else, printable ASCII included, is kept as it is, so plain names
// pass unchanged and the result holds no new backslash a reader could misread.
//
// Thread-safe: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tv {

// The length of the valid UTF-8 sequence at the start of `s` (1 to 4), or 0
// when `s` is empty or starts with an invalid one (stray continuation byte,
// overlong form, surrogate, beyond U+10FFFF, or cut short).
size_t ValidUtf8Length(std::string_view s);

// Whether `text` is all printable ASCII (0x20-0x7E): VisibleText keeps it as is.
bool IsPrintableAscii(std::string_view text);

// Appends `text` made visible (above).
void AppendVisibleText(std::string_view text, std::string* out);
std::string VisibleText(std::string_view text);

// Whether `text` is a plain number as JSON writes one (-?digits[.digits][e±digits]).
bool IsPlainNumber(std::string_view text);

// One CSV cell (RFC 4180) from foreign text: made visible, then neutralised
// against spreadsheet formulas as OWASP advises (a cell starting with '=', '+',
// '-' or '@' gets a leading "'", unless it is a plain number such as -0.5 or
// 1e-3, which is left as it is), then quoted when it holds a comma or a quote
// (a quote doubled inside). Being visible, it never holds a line break, tab or
// CR, so no cell starts with one.
std::string CsvCell(std::string_view text);

}  // namespace tv
