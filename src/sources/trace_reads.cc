#include "sources/trace_reads.h"

#include <chrono>

#include "sources/trace_figures.h"

namespace tv {

TraceReads::~TraceReads() {
  for (Read& r : reads_) r.done.wait();
}

void TraceReads::Start(TrainingEvent event) {
  auto owned = std::make_unique<TrainingEvent>(std::move(event));
  ProfileCapture* p = &*owned->profile;
  std::string dir = run_dir_.empty() ? std::string() : run_dir_ + "/" + p->dir;
  std::future<void> done = std::async(std::launch::async, [p, dir = std::move(dir)] {
    if (dir.empty()) return;
    Status read = ReadTraceFigures(dir, static_cast<int>(p->steps), &p->figures);
    if (!read.ok()) p->trace_error = read.message();
  });
  reads_.push_back(Read{std::move(owned), std::move(done)});
}

void TraceReads::Done(std::vector<TrainingEvent>* out, bool wait) {
  while (!reads_.empty()) {
    Read& r = reads_.front();
    if (!wait && r.done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
    r.done.get();
    out->push_back(std::move(*r.event));
    reads_.pop_front();
  }
}

}  // namespace tv
