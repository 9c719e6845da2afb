#include "sinks/tfevents/tfevents_sink.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>

#include "core/host.h"

namespace tv {
namespace {

std::atomic<int> file_counter{0};

}  // namespace

std::unique_ptr<TfeventsSink> TfeventsSink::Open(const std::string& logdir, double start_wall,
                                                 double interval_s, std::string* error) {
  std::string host = HostName();
  auto name_for = [&](int) {
    return fmt::format("events.out.tfevents.{:010d}.{}.{}.{}", static_cast<int64_t>(start_wall),
                       host, ::getpid(), file_counter.fetch_add(1));
  };
  auto file = BoardFile::Create(logdir, name_for, "--tensorboard", error);
  if (!file) return nullptr;
  std::unique_ptr<TfeventsSink> sink(new TfeventsSink(std::move(file), interval_s));
  sink->WriteRecord(EncodeFileVersionEvent(start_wall));
  if (sink->file_->failed()) {
    *error = fmt::format("--tensorboard: cannot write {}", sink->path());
    sink->Discard();
    return nullptr;
  }
  return sink;
}

TfeventsSink::~TfeventsSink() { OnClose(); }

void TfeventsSink::WriteRecord(const std::string& event) {
  buffer_.clear();
  AppendTfRecord(event, &buffer_);
  file_->Write(buffer_);
}

void TfeventsSink::OnRow(const Row& row) {
  std::vector<TbScalar> scalars = RowScalars(row);
  if (scalars.empty()) return;
  std::optional<int64_t> step = stepper_.Next(row);
  if (!step) return;
  WriteRecord(EncodeScalarEvent(row.t, *step, scalars));
}

void TfeventsSink::OnClose() { file_->Close(); }

}  // namespace tv
