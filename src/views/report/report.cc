#include "views/report/report.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>

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
  ReportRun a = LoadReportRun(request.run_dir, request.judged);
  std::optional<ReportRun> b;
  if (!request.compare_dir.empty()) b = LoadReportRun(request.compare_dir, request.compare_judged);
  std::string page = RenderPage(a, b ? &*b : nullptr, request.buckets);
  ReportWritten out;
  out.path = request.out.empty() ? (std::filesystem::path(request.run_dir) / "report.html").string()
                                 : request.out;
  WriteFileAtomically(out.path, page);
  out.bytes = page.size();
  for (const ReportRun* run : {&a, b ? &*b : nullptr}) {
    if (run == nullptr) continue;
    for (const std::string* note : {&run->series.long_lines_note, &run->events_note}) {
      if (!note->empty()) out.notes.push_back(*note);
    }
    if (run->series.skipped == 0) continue;
    if (out.skipped_lines == 0) out.first_skipped = run->series.first_skipped;
    out.skipped_lines += run->series.skipped;
  }
  return out;
}

}  // namespace tv
