#include "core/escape.h"

#include <gtest/gtest.h>

namespace tv::escape_test {
namespace {

TEST(VisibleText, KeepsPlainAndUnicodeNamesAsTheyAre) {
  EXPECT_EQ(VisibleText("python train.py --lr=3e-4"), "python train.py --lr=3e-4");
  EXPECT_EQ(VisibleText("caf\xC3\xA9 \xF0\x9F\x98\x80"), "caf\xC3\xA9 \xF0\x9F\x98\x80");
  EXPECT_EQ(VisibleText("a\\b\"c"), "a\\b\"c");
  EXPECT_EQ(VisibleText(""), "");
}

TEST(VisibleText, ControlBytesBecomeTheirControlPictures) {
  EXPECT_EQ(VisibleText("\x1b[2Jpwn\a"), "\xE2\x90\x9B[2Jpwn\xE2\x90\x87");  // ␛ ␇
  EXPECT_EQ(VisibleText("a\nb\rc\td"),
            "a\xE2\x90\x8A"
            "b\xE2\x90\x8D"
            "c\xE2\x90\x89"
            "d");
  EXPECT_EQ(VisibleText(std::string_view("\0x", 2)), "\xE2\x90\x80x");  // ␀
  EXPECT_EQ(VisibleText("\x7f"), "\xE2\x90\xA1");                       // ␡
}

TEST(VisibleText, C1ControlsBidiOverridesAndInvalidUtf8BecomeReplacementCharacters) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(VisibleText("\xC2\x9B"
                        "31m"),
            r + "31m");  // CSI as U+009B
  EXPECT_EQ(VisibleText("a\xE2\x80\xAE"
                        "b"),
            "a" + r + "b");  // U+202E RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(VisibleText("a\xE2\x81\xA6"
                        "b"),
            "a" + r + "b");                                // U+2066
  EXPECT_EQ(VisibleText("\xE2\x80\xA8"), r);               // U+2028 LINE SEPARATOR
  EXPECT_EQ(VisibleText("\x9b"), r);                       // a lone 8-bit CSI byte
  EXPECT_EQ(VisibleText("\xC3\xA9\xC3"), "\xC3\xA9" + r);  // cut mid-character
  EXPECT_EQ(VisibleText("\xC0\xAF"), r + r);               // overlong "/"
  EXPECT_EQ(VisibleText("\xED\xA0\x80"), r + r + r);       // surrogate
}

TEST(IsPlainNumber, JsonNumbersOnly) {
  for (const char* yes : {"0", "-0.5", "1e-3", "12", "-1E+9", "3.25"}) {
    EXPECT_TRUE(IsPlainNumber(yes)) << yes;
  }
  for (const char* no : {"", "-", "+1", "1+1", "-1+cmd|' /C calc'!A0", ".5", "1.", "1e", "0x10",
                         "=1", "-inf", "NaN", " 1"}) {
    EXPECT_FALSE(IsPlainNumber(no)) << no;
  }
}

TEST(CsvCell, NeutralisesFormulasButNotNumbers) {
  EXPECT_EQ(CsvCell("=HYPERLINK(\"http://x\")"), "\"'=HYPERLINK(\"\"http://x\"\")\"");
  EXPECT_EQ(CsvCell("+1+1"), "'+1+1");
  EXPECT_EQ(CsvCell("-2+3"), "'-2+3");
  EXPECT_EQ(CsvCell("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(CsvCell("-0.5"), "-0.5");
  EXPECT_EQ(CsvCell("1e-3"), "1e-3");
  EXPECT_EQ(CsvCell("python"), "python");
  EXPECT_EQ(CsvCell(""), "");
}

TEST(CsvCell, TabAndCarriageReturnCannotLeadAndNothingBreaksTheLine) {
  EXPECT_EQ(CsvCell("\t=1"), "\xE2\x90\x89=1");
  EXPECT_EQ(CsvCell("\r=1"), "\xE2\x90\x8D=1");
  EXPECT_EQ(CsvCell("a\nb,c"),
            "\"a\xE2\x90\x8A"
            "b,c\"");
  EXPECT_EQ(CsvCell("\x1b]0;title\a"), "\xE2\x90\x9B]0;title\xE2\x90\x87");
}

}  // namespace
}  // namespace tv::escape_test
