#include "sinks/visualdl/vdl_encoder.h"

#include <gtest/gtest.h>

namespace tv::vdl_encoder_test {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

TEST(VdlEncoder, ScalarRecordFields) {
  // Value{id=3, tag="a/b", timestamp=1000, value=1.5} inside Record.values.
  std::string value = Bytes({0x08, 3, 0x12, 3}) + "a/b" + Bytes({0x18, 0xe8, 0x07}) +
                      Bytes({0x25, 0, 0, 0xc0, 0x3f});
  EXPECT_EQ(EncodeVdlScalar("a/b", 3, 1000, 1.5f),
            Bytes({0x0a, static_cast<int>(value.size())}) + value);
}

TEST(VdlEncoder, MetaDataRecordHasTheTagAndAnEmptyMetaData) {
  std::string value = Bytes({0x12, 13}) + "meta_data_tag" + Bytes({0x18, 5, 0x52, 0});
  EXPECT_EQ(EncodeVdlMetaData(5), Bytes({0x0a, static_cast<int>(value.size())}) + value);
}

TEST(VdlEncoder, FramingIsLengthThenDataWithoutCrc) {
  std::string out;
  AppendVdlRecord("xyz", &out);
  EXPECT_EQ(out, Bytes({3, 0, 0, 0, 0, 0, 0, 0}) + "xyz");
}

}  // namespace
}  // namespace tv::vdl_encoder_test
