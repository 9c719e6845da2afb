#include "run/run_dir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <span>
#include <utility>

#include "core/escape.h"
#include "core/json_shape.h"
#include "core/near.h"
#include "core/private_path.h"
#include "core/run_file.h"
#include "sinks/write_all.h"
#include "store/run_summary.h"

namespace tv {
namespace fs = std::filesystem;

namespace {

// The argument that names what "python ... X" runs: the script's path, the
// module of -m, or the program for -c; nullptr when `command` is no Python
// command with one.
const std::string* PythonTarget(const std::vector<std::string>& command) {
  if (command.empty()) return nullptr;
  if (!fs::path(command[0]).filename().string().starts_with("python")) return nullptr;
  for (size_t i = 1; i < command.size(); ++i) {
    const std::string& a = command[i];
    if (a == "-m" && i + 1 < command.size()) return &command[i + 1];
    if (a == "-c") return nullptr;
    if (!a.empty() && a[0] != '-') return &a;
  }
  return nullptr;
}

bool IsModuleArg(const std::vector<std::string>& command, const std::string* target) {
  return target != &command[0] && *(target - 1) == "-m";
}

}  // namespace

std::string DefaultRunName(const std::vector<std::string>& command) {
  if (command.empty()) return "run";
  if (const std::string* target = PythonTarget(command)) {
    return IsModuleArg(command, target) ? *target : fs::path(*target).stem().string();
  }
  std::string prog = fs::path(command[0]).filename().string();
  return prog.empty() ? "run" : prog;
}

std::string RunLabel(const MetaRecord& meta) {
  const std::string& name = meta.name;
  const std::vector<std::string>& command = meta.command;
  if (command.empty()) return name;
  // A name of its own (--name) is the run's; the one made from its command
  // is said as the script the person ran.
  if (!name.empty() && name != DefaultRunName(command)) return name;
  if (const std::string* target = PythonTarget(command)) {
    return IsModuleArg(command, target) ? *target : fs::path(*target).filename().string();
  }
  std::string prog = fs::path(command[0]).filename().string();
  return prog.empty() ? name : prog;
}

namespace {

// Creates `dir` (its missing parents as mkdir -p would) 0700, or 0755 when
// `share`. A directory that already exists is the user's: its mode is kept.
void MakeRunDir(const std::string& dir, bool share) {
  fs::path target = fs::path(dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();  // "out/"
  if (Status s = MakeDirs(target.parent_path().string(), 0777); !s.ok()) {
    throw ConfigError(fmt::format("cannot create run directory {}: {}", dir, s.message()));
  }
  mode_t mode = share ? 0755 : 0700;
  if (::mkdir(target.c_str(), mode) != 0) {
    if (errno == EEXIST) return;
    throw ConfigError(fmt::format("cannot create run directory {}: {}", dir, std::strerror(errno)));
  }
  if (!share) return;  // the umask can only take bits from 0700
  // 0755 whatever the umask; through a descriptor, so a directory swapped for
  // a link meanwhile is not followed.
  int fd = ::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    ::fchmod(fd, mode);
    ::close(fd);
  }
}

}  // namespace

std::string PrepareRunDir(const Config& config, const std::vector<std::string>& command,
                          double now_wall) {
  std::string dir = config.out;
  if (dir.empty()) {
    std::time_t secs = static_cast<std::time_t>(now_wall);
    std::tm tm{};
    localtime_r(&secs, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    // The name may be a hostile program's: no control byte reaches the path
    // (nor every message that prints it).
    std::string name = VisibleText(config.name.empty() ? DefaultRunName(command) : config.name);
    for (char& c : name) {
      if (c == '/' || c == ' ') c = '_';
    }
    std::string base = (fs::path(config.runs_dir) / fmt::format("{}-{}", stamp, name)).string();
    dir = base;
    for (int n = 2; fs::exists(dir); ++n) dir = fmt::format("{}-{}", base, n);
  }
  MakeRunDir(dir, config.share);
  if (!fs::is_directory(dir))
    throw ConfigError(fmt::format("{} exists and is not a directory", dir));
  // The run's first file, made here: the proof that the directory is
  // writable, and that no other run has it (at once, where two runs are given
  // the same --out).
  std::string samples = (fs::path(dir) / kSamplesFile).string();
  int fd = ::open(samples.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST) {
    throw ConfigError(fmt::format(
        "{} already holds a run (samples.jsonl): choose another --out or remove it", dir));
  }
  if (fd < 0) {
    throw ConfigError(
        fmt::format("run directory {} is not writable: {}", dir, std::strerror(errno)));
  }
  ::close(fd);
  return dir;
}

void PointLatestLink(const std::string& runs_dir, const std::string& run_dir) {
  std::error_code ec;
  fs::path dir = fs::absolute(run_dir, ec);
  fs::path runs = fs::absolute(runs_dir, ec);
  if (ec || dir.parent_path().lexically_normal() != runs.lexically_normal()) return;
  fs::path link = runs / "latest";
  fs::path tmp = runs / fmt::format(".latest.{}", ::getpid());
  fs::remove(tmp, ec);
  fs::create_directory_symlink(dir.filename(), tmp, ec);
  if (ec) return;
  if (::rename(tmp.c_str(), link.c_str()) != 0)
    fs::remove(tmp, ec);  // "latest" is a real directory
}

namespace {

// A run of `runs_dir` with its names, as its meta.json says them.
struct NamedRun {
  std::string dir;
  std::string name;   // meta.json "name"
  std::string label;  // RunLabel
  double start_t = 0;
};

std::vector<NamedRun> NamedRuns(const std::string& runs_dir) {
  std::vector<NamedRun> runs;
  std::error_code ec;
  fs::directory_iterator it(runs_dir, ec);
  if (ec) return runs;
  for (const fs::directory_entry& entry : it) {
    // "latest" links to a run listed under its own name.
    if (entry.is_symlink(ec) || !entry.is_directory(ec)) continue;
    nlohmann::ordered_json json;
    if (!ReadJsonDocument((entry.path() / "meta.json").string(), &json, "meta.json").ok() ||
        !json.is_object()) {
      continue;
    }
    MetaRecord meta = MetaFromJson(json);
    NamedRun run;
    run.dir = entry.path().filename().string();
    run.name = meta.name;
    run.label = RunLabel(meta);
    run.start_t = meta.start_t.value_or(0);
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace

std::vector<std::string> RunDirsOfJob(const std::string& job, const std::string& root) {
  std::vector<std::string> found;
  std::error_code ec;
  constexpr int kDepth = 3;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() + 1 >= kDepth) it.disable_recursion_pending();
    if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
    nlohmann::json j;
    if (!ReadJsonDocument((it->path() / "meta.json").string(), &j).ok() || !j.is_object()) continue;
    if (MetaRecord meta = MetaFromJson(j); meta.job && meta.job->job == job) {
      found.push_back(it->path().string());
      it.disable_recursion_pending();
    }
  }
  if (found.empty()) {
    throw ConfigError(fmt::format("no run directory of job {} under {}{}", job, root,
                                  ec ? fmt::format(" ({})", ec.message()) : ""));
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::string ResolveRunDir(const std::string& run, const std::string& runs_dir) {
  std::error_code ec;
  if (fs::is_directory(run, ec)) return run;
  std::string inside = (fs::path(runs_dir) / run).string();
  if (fs::path(run).is_relative() && fs::is_directory(inside, ec)) return inside;
  if (fs::path(run).is_absolute()) throw ConfigError(fmt::format("{}: no such run directory", run));
  std::vector<NamedRun> runs = NamedRuns(runs_dir);
  const NamedRun* newest = nullptr;
  for (const NamedRun& r : runs) {
    if (r.name != run && r.label != run) continue;
    if (newest == nullptr || r.start_t > newest->start_t ||
        (r.start_t == newest->start_t && r.dir > newest->dir)) {
      newest = &r;
    }
  }
  if (newest != nullptr) return (fs::path(runs_dir) / newest->dir).string();
  // What `run` may be a typo of, each name once, as NearestWord judges it.
  std::vector<std::string> near;
  for (const NamedRun& r : runs) {
    for (const std::string* name : {&r.name, &r.label}) {
      std::string_view word = *name;
      if (!word.empty() && !NearestWord(run, std::span(&word, 1)).empty() &&
          std::find(near.begin(), near.end(), *name) == near.end()) {
        near.push_back(*name);
      }
    }
  }
  std::sort(near.begin(), near.end(), [&](const std::string& a, const std::string& b) {
    return std::pair(EditDistance(run, a), a) < std::pair(EditDistance(run, b), b);
  });
  if (near.size() > 5) near.resize(5);
  std::string hint;
  for (size_t i = 0; i < near.size(); ++i) {
    hint += fmt::format("{}'{}'",
                        i == 0                 ? "; did you mean "
                        : i + 1 == near.size() ? " or "
                                               : ", ",
                        VisibleText(near[i]));
  }
  if (!hint.empty()) hint += "?";
  throw ConfigError(fmt::format("{}: no such run directory (nor {}), nor a run named so in {}{}",
                                VisibleText(run), inside, runs_dir, hint));
}

std::optional<RunFiles> ReadRunFiles(const std::string& run_dir, const CostRates& rates,
                                     std::string* why) {
  RunFiles files;
  nlohmann::ordered_json summary;
  Status s =
      ReadJsonDocument((fs::path(run_dir) / "summary.json").string(), &summary, "summary.json");
  if (s.code() == Status::Code::kNotFound) {
    *why = "no summary.json";
    return std::nullopt;
  }
  if (!s.ok()) {
    *why = s.message();
    return std::nullopt;
  }
  if (!summary.is_object()) {
    *why = "summary.json is not a JSON object";
    return std::nullopt;
  }
  if (std::string e = JsonShapeError(summary, SummaryShape()); !e.empty()) {
    *why = "summary.json: " + e;
    return std::nullopt;
  }
  // Its epoch and phase records, each key of the type its reader takes.
  if (s = RunSummaryFromJson(summary, &files.summary); !s.ok()) {
    *why = "summary.json: " + s.message();
    return std::nullopt;
  }
  // meta.json adds to a summary; one that cannot be used is left out, said on stderr.
  nlohmann::ordered_json meta;
  s = ReadJsonDocument((fs::path(run_dir) / "meta.json").string(), &meta, "meta.json");
  std::string shape = s.ok() ? JsonShapeError(meta, MetaShape()) : "";
  if (!s.ok() || !shape.empty()) {
    if (s.code() != Status::Code::kNotFound) {
      fmt::print(stderr, "trainvitals: {}: {}; left out\n", run_dir,
                 s.ok() ? "meta.json: " + shape : s.message());
    }
  } else {
    files.meta = MetaFromJson(meta);
  }
  // A run written before costs existed is costed as a new one.
  if (!files.summary.cost) files.summary.cost = BuildCost(files.summary, files.meta.gpus, rates);
  return files;
}

std::optional<CostRecord> JobCostOfRuns(const std::vector<std::string>& run_dirs,
                                        const CostRates& rates, bool recost) {
  std::vector<CostRecord> costs;
  for (const std::string& dir : run_dirs) {
    std::string why;
    std::optional<RunFiles> files = ReadRunFiles(dir, rates, &why);
    if (!files || !files->summary.cost) return std::nullopt;
    std::optional<CostRecord> cost = files->summary.cost;
    if (recost) cost = BuildCost(files->summary, files->meta.gpus, rates);
    if (!cost) return std::nullopt;
    costs.push_back(*cost);
  }
  return AddCosts(costs);
}

RunFiles ReadFinishedRun(const std::string& run_dir, const CostRates& rates) {
  std::string why;
  std::optional<RunFiles> files = ReadRunFiles(run_dir, rates, &why);
  if (files) return std::move(*files);
  if (why == "no summary.json") {
    why += fmt::format(
        ": the run is still going, or it was killed before it ended (`trainvitals analyze {}` "
        "judges what it wrote)",
        run_dir);
  }
  throw ConfigError(fmt::format("{}: {}", run_dir, why));
}

bool WriteJsonFile(const std::string& path, const nlohmann::ordered_json& j, bool say,
                   int* error_number) {
  std::string tmp = path + ".tmp";
  std::string text = j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err = fd < 0 ? errno : WriteFully(fd, text);
  if (fd >= 0 && ::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    if (say) fmt::print(stderr, "trainvitals: cannot write {}: {}\n", path, std::strerror(err));
    ::unlink(tmp.c_str());
  }
  if (error_number != nullptr) *error_number = err;
  return err == 0;
}

}  // namespace tv
