// The analysis of a replayed run: any lines (rows of samples.jsonl or events of
// events.jsonl, in any order and with any values) go through FrameReader,
// MarkFromEvent and the Analyzer with short windows without a crash, and the
// verdict is always well-formed JSON.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/findings/analyzer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  tv::Thresholds th;
  for (const char* key : {"warmup_s", "window_s", "open_s", "hold_s", "gpu_idle_s", "gpu_unused_s",
                          "low_gpu_util_window_s", "stalled_s", "slow_start_s"}) {
    th.Set(key, 2);
  }
  tv::Analyzer analyzer(th, 1);
  tv::FrameReader reader;
  tv::Frame frame;
  std::vector<tv::Event> events;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (reader.Read(line, &frame) == tv::FrameReader::Line::kRow) {
      analyzer.OnFrame(frame, &events);
      continue;
    }
    nlohmann::json e = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    tv::Mark mark;
    if (tv::MarkFromEvent(e, &mark)) analyzer.OnMark(mark, &events);
  }
  analyzer.Finish(frame.t, &events);
  (void)FindingsJson(analyzer.Findings()).dump();
  (void)HealthJson(analyzer.Health()).dump();
  return 0;
}
