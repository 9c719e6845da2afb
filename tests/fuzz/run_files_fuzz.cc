// The readers of a finished run's summary.json and meta.json: any bytes, as
// both files of a run directory, are refused with a reason or read, and what
// is read goes through everything that uses it (compare, the run history's
// record, the summary's text, the report's page) without a crash, an abort or an exception.
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "analysis/cost.h"
#include "fuzz_file.h"
#include "run/run_dir.h"
#include "store/cost_record.h"
#include "store/run_record.h"
#include "views/compare.h"
#include "views/report/page.h"
#include "views/report/run_data.h"
#include "views/summary.h"

namespace {

const std::string& ScratchDir() {
  static const std::string dir = [] {
    std::string t = tv::fuzz::MakeScratchDir("run");
    std::ofstream(t + "/samples.jsonl")
        << R"({"t":1000,"elapsed_s":1,"host":{"cpu_util_ratio":0.5},"gpus":[{"index":0}]})"
        << "\n";
    return t;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = ScratchDir();
  for (const char* name : {"/summary.json", "/meta.json"}) {
    std::ofstream(dir + name, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  std::string why;
  std::optional<tv::RunFiles> files = tv::ReadRunFiles(dir, tv::CostRates{}, &why);
  if (files) {
    tv::Comparison c =
        tv::CompareRuns({{"a", {files->summary}, {}, ""}, {"b", {files->summary}, {}, ""}});
    (void)tv::ComparisonJson(c);
    (void)tv::FormatComparison(c);
    (void)tv::RecordFromRun(dir, files->summary, files->meta);
    (void)tv::FormatSummary(files->summary, 80);
  }
  try {
    tv::ReportRun run = tv::LoadReportRun(dir);
    (void)tv::RenderPage(run, &run, 50);
  } catch (const std::runtime_error&) {
  }
  return 0;
}
