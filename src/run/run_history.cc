#include "run/run_history.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <system_error>

#include "core/config.h"
#include "core/thread.h"
#include "run/run_dir.h"
#include "store/db_location.h"

namespace tv {
namespace fs = std::filesystem;
namespace {

std::string AbsoluteDir(const std::string& dir) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  return ec ? fs::absolute(dir).lexically_normal().string() : p.string();
}

RunRecord Record(const std::string& dir, const RunSummary& summary, const MetaRecord& meta) {
  return RecordFromRun(AbsoluteDir(dir), summary, meta);
}

}  // namespace

double ParseSince(std::string_view text, double now_t) {
  auto bad = [&] {
    return ConfigError(fmt::format(
        "--since: '{}' is not a time: give a date (2026-11-30), an ISO time "
        "(2026-11-30T14:00, 2026-11-30T14:00:00Z) or a duration back from now (7d, 12h, 30m)",
        text));
  };
  if (text.empty()) throw bad();
  // A duration: a number and one unit.
  static constexpr std::pair<char, double> kUnits[] = {
      {'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {'w', 7 * 86400}};
  for (const auto& [unit, seconds] : kUnits) {
    if (text.back() != unit || text.size() < 2) continue;
    double n = 0;
    std::string_view digits = text.substr(0, text.size() - 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec != std::errc() || end != digits.data() + digits.size() || n < 0) throw bad();
    return now_t - n * seconds;
  }
  // A date or ISO time.
  std::tm tm{};
  int consumed = 0;
  std::string s(text);
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &consumed) !=
          3 ||
      consumed != 10) {
    throw bad();
  }
  size_t at = 10;
  if (at < s.size()) {
    if (s[at] != 'T' && s[at] != ' ') throw bad();
    int n = 0;
    if (std::sscanf(s.c_str() + at + 1, "%2d:%2d%n", &tm.tm_hour, &tm.tm_min, &n) != 2 || n != 5) {
      throw bad();
    }
    at += 1 + 5;
    if (at < s.size() && s[at] == ':') {
      if (std::sscanf(s.c_str() + at + 1, "%2d%n", &tm.tm_sec, &n) != 1 || n != 2) throw bad();
      at += 3;
    }
  }
  std::optional<int> offset_s;  // east of UTC
  if (at < s.size()) {
    int hh = 0, mm = 0, n = 0;
    if (s.substr(at) == "Z") {
      offset_s = 0;
    } else if ((s[at] == '+' || s[at] == '-') &&
               std::sscanf(s.c_str() + at + 1, "%2d:%2d%n", &hh, &mm, &n) == 2 &&
               at + 1 + n == s.size()) {
      offset_s = (s[at] == '-' ? -1 : 1) * (hh * 3600 + mm * 60);
    } else {
      throw bad();
    }
  }
  if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
      tm.tm_min > 59 || tm.tm_sec > 60) {
    throw bad();
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  if (offset_s) return static_cast<double>(timegm(&tm) - *offset_s);
  tm.tm_isdst = -1;
  return static_cast<double>(std::mktime(&tm));
}

std::string RunIndexPath(const std::string& db) { return db.empty() ? DefaultRunIndexPath() : db; }

std::optional<RunRecord> ReadRunDir(const std::string& dir, const CostRates& rates,
                                    std::string* why) {
  std::optional<RunFiles> files = ReadRunFiles(dir, rates, why);
  if (!files) return std::nullopt;
  return Record(dir, files->summary, files->meta);
}

bool HistoryAside::Applies(const std::string& db_path) { return !IsPostgresUrl(db_path); }

HistoryAside::~HistoryAside() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ending_ = true;
  }
  handed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HistoryAside::Start() {
  try {
    thread_ = StartThread("tv-history", "this run is not indexed", [this] { Serve(); });
  } catch (const std::system_error&) {
    // No thread to be had (a container at its pids limit): Index opens and
    // writes on the caller's.
  }
}

void HistoryAside::Serve() {
  Open();
  std::unique_lock<std::mutex> lock(mu_);
  handed_.wait(lock, [this] { return run_.has_value() || ending_; });
  if (!run_) return;
  FinishedRun run = std::move(*run_);
  lock.unlock();
  Write(run);
}

void HistoryAside::Open() {
  std::unique_ptr<RunIndex> index;
  try {
    std::string error;  // said by Write, which opens it again
    index = RunIndex::Open(db_path_, &error);
    if (index && !index->PreparePut(&error)) index.reset();
  } catch (...) {
    index.reset();
  }
  std::lock_guard<std::mutex> lock(mu_);
  index_ = std::move(index);
}

void HistoryAside::Index(FinishedRun run) {
  if (!thread_.joinable()) {
    Write(run);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    run_ = std::move(run);
  }
  handed_.notify_all();
}

void HistoryAside::Write(const FinishedRun& run) {
  std::unique_ptr<RunIndex> index;
  {
    std::lock_guard<std::mutex> lock(mu_);
    index = std::move(index_);
  }
  if (index && index->Moved()) index.reset();
  IndexFinishedRun(db_path_, run.run_dir, run.summary, run.meta, run.rates, std::move(index));
}

void IndexFinishedRun(const std::string& db_path, const std::string& run_dir,
                      const RunSummary& summary, const MetaRecord& meta, const CostRates& rates,
                      std::unique_ptr<RunIndex> opened) {
  std::string error;
  try {
    // The summary's cost; a run that could not cost itself is costed at `rates`.
    RunSummary costed = summary;
    if (!costed.cost) costed.cost = BuildCost(summary, meta.gpus, rates);
    RunRecord record = Record(run_dir, costed, meta);
    std::unique_ptr<RunIndex> index =
        opened != nullptr ? std::move(opened) : RunIndex::Open(db_path, &error);
    if (index && index->Put(record, &error)) return;
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "an unexpected error";
  }
  fmt::print(stderr, "trainvitals: run history: {}: {}; this run is not indexed\n",
             db_path.empty() ? "(none)" : RedactLocation(db_path), error);
}

}  // namespace tv
