#include "sinks/visualdl/vdl_sink.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>

#include "sinks/visualdl/vdl_encoder.h"

namespace tv {

std::unique_ptr<VdlSink> VdlSink::Open(const std::string& logdir, double start_wall,
                                       double interval_s, std::string* error) {
  // A second start in the same second gets a suffix that sorts after the first
  // name, so VisualDL's newest-file rule still picks it.
  auto name_for = [&](int n) {
    return fmt::format("vdlrecords.{:010d}.log{}", static_cast<int64_t>(start_wall),
                       n == 0 ? std::string() : fmt::format(".{:02d}", n));
  };
  auto file = BoardFile::Create(logdir, name_for, "--visualdl", error);
  if (!file) return nullptr;
  std::unique_ptr<VdlSink> sink(new VdlSink(std::move(file), interval_s));
  AppendVdlRecord(EncodeVdlMetaData(std::llround(start_wall * 1000)), &sink->buffer_);
  sink->Write();
  if (sink->file_->failed()) {
    *error = fmt::format("--visualdl: cannot write {}", sink->file_->path());
    sink->Discard();
    return nullptr;
  }
  return sink;
}

VdlSink::~VdlSink() { OnClose(); }

void VdlSink::Write() {
  file_->Write(buffer_);
  buffer_.clear();
}

void VdlSink::OnRow(const Row& row) {
  std::vector<TbScalar> scalars = RowScalars(row);
  if (scalars.empty()) return;
  std::optional<int64_t> step = stepper_.Next(row);
  if (!step) return;
  int64_t ms = std::llround(row.t * 1000);
  for (const TbScalar& s : scalars)
    AppendVdlRecord(EncodeVdlScalar(s.tag, *step, ms, s.value), &buffer_);
  Write();
}

void VdlSink::OnClose() { file_->Close(); }

}  // namespace tv
