// The run directory (DESIGN.md's contract): where meta.json, samples.jsonl,
// events.jsonl and summary.json of one run live.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/cost.h"
#include "core/config.h"
#include "store/meta_record.h"
#include "store/run_summary.h"

namespace tv {

// A short name for a run from its command: the script of "python train.py"
// ("train"), else the program's base name.
std::string DefaultRunName(const std::vector<std::string>& command);

// The run's name as a person knows it, from its meta.json: the --name it was
// run with, else the script of "python train.py" ("train.py"; "-m pkg.mod"
// gives "pkg.mod"), else the program's base name. Empty when meta.json has
// neither a name nor a command.
std::string RunLabel(const MetaRecord& meta);

// The file of a run's rows, which PrepareRunDir makes empty.
inline constexpr const char* kSamplesFile = "samples.jsonl";

// Creates the run directory for `config` (making parents) and proves it is
// writable, and not another run's, by creating its empty kSamplesFile.
// Called before the child starts. Throws ConfigError saying which directory
// and why. A directory it makes is 0700 (it holds command lines and other
// users' process names), 0755 with config.share; its parents are made as
// mkdir -p makes them, and a directory that already exists keeps its mode.
std::string PrepareRunDir(const Config& config, const std::vector<std::string>& command,
                          double now_wall);

// Points `<runs_dir>/latest` at `run_dir` (a relative symbolic link, replaced
// atomically), for a run directory made inside `runs_dir`. Says nothing on
// failure: the link is a convenience.
void PointLatestLink(const std::string& runs_dir, const std::string& run_dir);

// The run directory a command's RUN argument names: the path itself, else
// that name inside `runs_dir` ("latest", "20250101-120000-train"), else the
// newest run in `runs_dir` whose meta.json "name" (the --name it was run
// with) or RunLabel is `run`. Throws ConfigError when none is, naming the
// run names near `run` ("did you mean").
std::string ResolveRunDir(const std::string& run, const std::string& runs_dir);

// The run directories under `root` (down to three levels, as a shared file
// system holds one job's nodes: root/job/node) whose meta.json names job
// `job`, in path order. Throws ConfigError when there are none.
std::vector<std::string> RunDirsOfJob(const std::string& job, const std::string& root);

// A finished run's summary.json and meta.json (a record of unknowns when it
// has none or one that cannot be used), with the summary's cost computed from
// both at `rates` when the run was written before costs existed (none when it
// has no duration to cost).
struct RunFiles {
  RunSummary summary;
  MetaRecord meta;
};
// None with *why ("no summary.json", "summary.json is not JSON", "summary.json
// is not a JSON object", "summary.json: key epochs[2].steps: expected a whole
// number, got a string") when `run_dir` holds no usable summary.
std::optional<RunFiles> ReadRunFiles(const std::string& run_dir, const CostRates& rates,
                                     std::string* why);
// ReadRunFiles, or a ConfigError saying why there is no summary (a run still
// going, or killed before it ended).
RunFiles ReadFinishedRun(const std::string& run_dir, const CostRates& rates);

// The cost of one job from its nodes' run directories: each node's own
// summary cost (at `rates` for a node written before costs existed; every
// node at `rates` when `recost`, as --config asks), summed by AddCosts. None
// when a node has not ended or cannot be costed: a sum of some nodes is no
// job's.
std::optional<CostRecord> JobCostOfRuns(const std::vector<std::string>& run_dirs,
                                        const CostRates& rates, bool recost);

// Writes `j` to `path` atomically (temporary file, then rename): a reader sees
// the old file or the new one, never half of one. Returns false
// and, when `say`, says why on stderr when it fails; `*error_number` (when
// given) is why (an errno), 0 when it was written.
bool WriteJsonFile(const std::string& path, const nlohmann::ordered_json& j, bool say = true,
                   int* error_number = nullptr);

}  // namespace tv
