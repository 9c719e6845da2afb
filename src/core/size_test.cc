#include "core/size.h"

#include <gtest/gtest.h>

namespace tv::size_test {
namespace {

uint64_t Bytes(std::string_view text) {
  std::string error;
  std::optional<uint64_t> bytes = ParseSize(text, &error);
  EXPECT_TRUE(bytes.has_value()) << text << ": " << error;
  return bytes.value_or(0);
}

std::string Error(std::string_view text) {
  std::string error;
  EXPECT_FALSE(ParseSize(text, &error).has_value()) << text;
  return error;
}

TEST(Size, ReadsDecimalAndBinaryUnitsInAnyCase) {
  EXPECT_EQ(Bytes("4096"), 4096u);
  EXPECT_EQ(Bytes("4096B"), 4096u);
  EXPECT_EQ(Bytes("8GB"), 8'000'000'000u);
  EXPECT_EQ(Bytes("8gb"), 8'000'000'000u);
  EXPECT_EQ(Bytes("8G"), 8'000'000'000u);
  EXPECT_EQ(Bytes("40GiB"), 40ull << 30);
  EXPECT_EQ(Bytes("40gib"), 40ull << 30);
  EXPECT_EQ(Bytes("40Gi"), 40ull << 30);
  EXPECT_EQ(Bytes("512MiB"), 512ull << 20);
  EXPECT_EQ(Bytes("2 KiB"), 2048u);
  EXPECT_EQ(Bytes(" 1.5TiB "), 3ull << 39);
  EXPECT_EQ(Bytes("1kb"), 1000u);
  EXPECT_EQ(Bytes("0"), 0u);
}

TEST(Size, SuggestsTheUnitMeant) {
  EXPECT_EQ(Error("2GBB"),
            "\"2GBB\" is not a size: unknown unit \"GBB\" (did you mean \"GB\"?); examples: "
            "512MiB, 2GiB");
  EXPECT_EQ(Error("2 gibs"),
            "\"2 gibs\" is not a size: unknown unit \"gibs\" (did you mean \"GiB\"?); examples: "
            "512MiB, 2GiB");
  EXPECT_EQ(Error("3 parsecs"),
            "\"3 parsecs\" is not a size: unknown unit \"parsecs\" (units: B, KB, MB, GB, TB, PB, "
            "EB, KiB, MiB, GiB, TiB, PiB, EiB); examples: 512MiB, 2GiB");
}

TEST(Size, SaysWhatIsWrongWithNoNumber) {
  EXPECT_EQ(Error("lots"),
            "\"lots\" is not a size: it does not start with a number; examples: 512MiB, 2GiB");
  EXPECT_EQ(Error(""), "no size given; examples: 512MiB, 2GiB");
  EXPECT_EQ(Error("-2GB"), "\"-2GB\" is not a size: it is negative");
  EXPECT_EQ(Error("1.2.3GB"),
            "\"1.2.3GB\" is not a size: \"1.2.3\" is not a number; examples: 512MiB, 2GiB");
  EXPECT_EQ(Error("17EiB"), "\"17EiB\" is too large a size: 16EiB or more");
}

}  // namespace
}  // namespace tv::size_test
