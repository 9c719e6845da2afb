#include "sinks/tfevents/event_encoder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "sinks/tfevents/crc32c.h"

namespace tv::event_encoder_test {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

TEST(Crc32c, MatchesReferenceVectors) {
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8a9136aau);
  EXPECT_EQ(Crc32c("abcd"), 0x92c80a31u);
  EXPECT_EQ(MaskedCrc32c("\x1a\x11"
                         "CRC test, one two"),
            0x5794d08au);
  EXPECT_EQ(MaskedCrc32c(Bytes({24, 0, 0, 0, 0, 0, 0, 0})), 0x224b7fa3u);
}

// A record written by TensorFlow itself: scalar "accuracy"=0.99 at step 77.
std::string TensorFlowRecord() {
  return Bytes({0x32, 0,    0,    0,    0,    0,    0,    0,    0x24, 0x19,
                0x56, 0xec, 0x09, 0xc4, 0x05, 0xb7, 0x3d, 0x99, 0xd6, 0xd7,
                0x41, 0x10, 0x4d, 0x2a, 0x25, 0x0a, 0x23, 0x0a, 0x08}) +
         "accuracy" +
         Bytes({0x42, 0x0a, 0x08, 0x01, 0x12, 0x00, 0x22, 0x04, 0xa4, 0x70, 0x7d, 0x3f, 0x4a, 0x0b,
                0x0a, 0x09, 0x0a, 0x07}) +
         "scalars" + Bytes({0xa5, 0x5b, 0x64, 0x33});
}

TEST(TfRecord, DecodesRecordWrittenByTensorFlow) {
  std::string file = TensorFlowRecord();
  size_t pos = 0;
  auto data = ReadTfRecord(file, &pos);
  ASSERT_TRUE(data.has_value());
  EXPECT_EQ(pos, file.size());
  ASSERT_EQ(data->size(), 50u);
  EXPECT_EQ((*data)[0], 0x09);  // wall_time
  EXPECT_EQ((*data)[9], 0x10);  // step
  EXPECT_EQ((*data)[10], 77);
  EXPECT_NE(data->find("accuracy"), std::string_view::npos);
  // Framing the same data again gives TensorFlow's bytes exactly.
  std::string again;
  AppendTfRecord(*data, &again);
  EXPECT_EQ(again, file);
}

TEST(TfRecord, RejectsCutAndCorruptRecords) {
  std::string file = TensorFlowRecord();
  for (size_t cut : {0ul, 5ul, 12ul, 40ul, file.size() - 1}) {
    size_t pos = 0;
    EXPECT_FALSE(ReadTfRecord(std::string_view(file).substr(0, cut), &pos)) << cut;
    EXPECT_EQ(pos, 0u);
  }
  std::string bad_len = file;
  bad_len[0] = 0x33;
  size_t pos = 0;
  EXPECT_FALSE(ReadTfRecord(bad_len, &pos));
  std::string bad_data = file;
  bad_data[30] ^= 1;
  EXPECT_FALSE(ReadTfRecord(bad_data, &pos));
}

TEST(EventEncoder, FileVersionEventHasReferenceBytes) {
  std::string event = EncodeFileVersionEvent(1700000000.5);
  ASSERT_EQ(event.size(), 9u + 2 + 13);
  EXPECT_EQ(event[0], 0x09);
  double wall;
  std::memcpy(&wall, event.data() + 1, 8);
  EXPECT_EQ(wall, 1700000000.5);
  EXPECT_EQ(event.substr(9), Bytes({0x1a, 0x0d}) + "brain.Event:2");
}

TEST(EventEncoder, ScalarEventFieldsInNumberOrder) {
  std::string event = EncodeScalarEvent(2.0, 300, {{"job/cpu_cores", 1.5f}});
  std::string expected = Bytes({0x09, 0, 0, 0, 0, 0, 0, 0, 0x40});  // 2.0
  expected += Bytes({0x10, 0xac, 0x02});                            // step 300
  std::string value = Bytes({0x0a, 13}) + "job/cpu_cores" + Bytes({0x15, 0, 0, 0xc0, 0x3f});
  std::string summary = Bytes({0x0a, static_cast<int>(value.size())}) + value;
  expected += Bytes({0x2a, static_cast<int>(summary.size())}) + summary;
  EXPECT_EQ(event, expected);
}

TEST(EventEncoder, StepZeroIsOmitted) {
  std::string event = EncodeScalarEvent(1.0, 0, {{"a", 1}});
  EXPECT_EQ(event[9], 0x2a);
}

TEST(TfRecord, RecordsReadBackInOrder) {
  std::string file;
  AppendTfRecord(EncodeFileVersionEvent(1), &file);
  AppendTfRecord(EncodeScalarEvent(2, 1, {{"x", 3}}), &file);
  size_t pos = 0;
  EXPECT_EQ(*ReadTfRecord(file, &pos), EncodeFileVersionEvent(1));
  EXPECT_EQ(*ReadTfRecord(file, &pos), EncodeScalarEvent(2, 1, {{"x", 3}}));
  EXPECT_FALSE(ReadTfRecord(file, &pos));
}

}  // namespace
}  // namespace tv::event_encoder_test
