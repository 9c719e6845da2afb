#include "views/report/report.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <vector>

#include "views/report/page.h"

namespace tv {
namespace {

void WriteFileAtomically(const std::string& path, const std::string& text) {
  std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    throw std::runtime_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  }
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    throw std::runtime_error(fmt::format("cannot write {}: {}", path, std::strerror(err)));
  }
}

}  // namespace

ReportWritten WriteReport(const ReportRequest& request) {
  std::vector<ReportRun> runs;
  std::string page;
  if (request.node_dirs.size() > 1) {
    for (size_t i = 0; i < request.node_dirs.size(); ++i) {
      runs.push_back(LoadReportRun(request.node_dirs[i], i < request.node_judged.size()
                                                             ? request.node_judged[i]
                                                             : ReportJudged{}));
    }
    page = RenderJobPage(runs, request.job, request.buckets);
  } else {
    runs.push_back(LoadReportRun(request.run_dir, request.judged));
    if (!request.compare_dir.empty()) {
      runs.push_back(LoadReportRun(request.compare_dir, request.compare_judged));
    }
    page = RenderPage(runs[0], runs.size() > 1 ? &runs[1] : nullptr, request.buckets);
  }
  const std::string& first_dir =
      request.node_dirs.size() > 1 ? request.node_dirs.front() : request.run_dir;
  ReportWritten out;
  out.path = request.out.empty() ? (std::filesystem::path(first_dir) / "report.html").string()
                                 : request.out;
  WriteFileAtomically(out.path, page);
  out.bytes = page.size();
  for (const ReportRun& run : runs) {
    for (const std::string* note : {&run.series.long_lines_note, &run.events_note}) {
      if (!note->empty()) out.notes.push_back(*note);
    }
    if (run.series.skipped == 0) continue;
    if (out.skipped_lines == 0) out.first_skipped = run.series.first_skipped;
    out.skipped_lines += run.series.skipped;
  }
  return out;
}

}  // namespace tv
