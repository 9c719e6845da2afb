// The readers of events.jsonl: any bytes as a run directory's events.jsonl go
// through `analyze`'s replay (markers, the job's end) and the report's time
// axis (epochs, phases, alerts) without a crash, an abort or an exception.
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "analysis/findings/replay.h"
#include "fuzz_file.h"
#include "views/report/run_data.h"

namespace {

const std::string& ScratchDir() {
  static const std::string dir = [] {
    std::string t = tv::fuzz::MakeScratchDir("events");
    std::ofstream samples(t + "/samples.jsonl");
    for (int i = 1; i <= 3; ++i) {
      samples << R"({"t":)" << 1000 + i << R"(,"elapsed_s":)" << i
              << R"(,"job":{"processes":1},"training":{"steps":)" << 10 * i
              << R"(},"gpus":[{"index":0,"util_ratio":0.5}]})"
              << "\n";
    }
    std::ofstream(t + "/meta.json") << R"({"interval_s": 1, "start_t": 1000})";
    return t;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = ScratchDir();
  std::ofstream(dir + "/events.jsonl", std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  tv::Thresholds th;
  tv::Verdict v = tv::Replay(dir, th);
  (void)tv::FindingsJson(v.findings).dump();
  tv::ReportRun run = tv::LoadReportRun(dir);
  (void)tv::RunDataJson(run, "A", 50);
  return 0;
}
