// Joined (joined.h).
#include "analysis/findings/joined.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include "analysis/findings/analyzer.h"
#include "analysis/findings/format.h"
#include "analysis/findings/row_queue.h"

namespace tv {
namespace {

// Where a node's step count rose: (t, steps), in time order.
using StepCurve = std::vector<std::pair<double, double>>;

// Steps two nodes must share before their clocks are lined up by them.
constexpr double kJoinMinSteps = 10;
// How far apart two nodes' step rates may be and still be in step.
constexpr double kJoinRateTolerance = 0.05;
// Node findings that make a straggler's host the likely cause.
constexpr std::string_view kHostCauses[] = {"cpu-bound", "io-bound", "throttled", "input-bound",
                                            "host-memory-pressure"};
// Findings judged across the nodes rather than on each.
bool AcrossNodes(std::string_view id) { return id == "straggler" || id == "gpu-imbalance"; }

// When the curve first showed `steps` (linear between rows); none past its end.
std::optional<double> TimeAtSteps(const StepCurve& c, double steps) {
  auto it = std::lower_bound(c.begin(), c.end(), steps,
                             [](const auto& point, double s) { return point.second < s; });
  if (it == c.end()) return std::nullopt;
  if (it == c.begin()) return it->first;
  auto prev = it - 1;
  return prev->first +
         (it->first - prev->first) * (steps - prev->second) / (it->second - prev->second);
}

// The seconds to add to `node`'s times to line them up with `ref`'s, from the
// steps both reached; none (with why) when they do not step together.
std::optional<double> StepClockOffset(const StepCurve& ref, const StepCurve& node,
                                      std::string* why) {
  double lo =
      std::max(ref.empty() ? 0 : ref.front().second, node.empty() ? 0 : node.front().second);
  double hi = std::min(ref.empty() ? 0 : ref.back().second, node.empty() ? 0 : node.back().second);
  if (hi - lo < kJoinMinSteps) {
    *why = fmt::format("fewer than {:g} steps in common", kJoinMinSteps);
    return std::nullopt;
  }
  double ref_span = *TimeAtSteps(ref, hi) - *TimeAtSteps(ref, lo);
  double node_span = *TimeAtSteps(node, hi) - *TimeAtSteps(node, lo);
  if (ref_span <= 0 || node_span <= 0 ||
      std::abs(ref_span - node_span) > kJoinRateTolerance * ref_span) {
    *why = fmt::format("steps {:g} to {:g} took {:.1f} s there and {:.1f} s here: not in step", lo,
                       hi, node_span, ref_span);
    return std::nullopt;
  }
  std::vector<double> gaps;
  constexpr int kPoints = 100;
  for (int i = 0; i <= kPoints; ++i) {
    double s = lo + (hi - lo) * i / kPoints;
    gaps.push_back(*TimeAtSteps(ref, s) - *TimeAtSteps(node, s));
  }
  std::nth_element(gaps.begin(), gaps.begin() + kPoints / 2, gaps.end());
  return gaps[kPoints / 2];
}

// One node's rows, read alongside the others'.
struct NodeRows {
  std::string node;
  double offset = 0;
  double interval_s = 1;
  Verdict skipped;  // the lines a second read counts (its own replay counted them already)
  std::unique_ptr<RowQueue> rows;
  Frame next, current;
  bool more = false, has_current = false;
  // Its one training process, where its rows name no ranks: (rank, pid).
  std::optional<std::pair<int, int>> single;
  // On the first read: the node's own replay, judging each row as it is
  // taken, and where its steps rose.
  RunReplay* replay = nullptr;
  StepCurve* curve = nullptr;

  // Takes the next row as the current one.
  void Advance() {
    if (replay != nullptr) {
      replay->OnRow(next);
      if (next.steps && (curve->empty() || *next.steps > curve->back().second)) {
        curve->emplace_back(next.t, *next.steps);
      }
    }
    std::swap(current, next);
    has_current = true;
    more = rows->Next(&next);
  }
};

// The frame that judges every node's ranks and GPUs together, and what its
// keys stand for.
class JoinedFrames {
 public:
  // The rank keys and GPU indexes of the joined frame, back to whom they name.
  std::map<int, FindingSubject> rank_subjects, gpu_subjects;

  void Start(const Frame& first) {
    frame_.t = first.t;
    frame_.elapsed_s = first.elapsed_s;
    frame_.steps = first.steps;
    frame_.data_wait_ratio = first.data_wait_ratio;
    frame_.phase = first.phase;
    frame_.job_processes.reset();
    frame_.gpus.clear();
    frame_.ranks.clear();
  }

  void Add(size_t k, const NodeRows& n, const Frame& f) {
    if (f.job_processes) frame_.job_processes = frame_.job_processes.value_or(0) + *f.job_processes;
    for (const GpuFrame& gpu : f.gpus) {
      GpuFrame& g = frame_.gpus.emplace_back(gpu);
      // Keyed and named once, not at every row.
      auto [it, added] =
          gpu_keys_.try_emplace({k, gpu.index}, static_cast<int>(gpu_keys_.size()), std::string());
      auto& [key, name] = it->second;
      if (added) {
        name = fmt::format("GPU {} on {}", gpu.index, n.node);
        FindingSubject s = FindingSubject::Gpu(gpu.index);
        s.node = n.node;
        gpu_subjects[key] = s;
      }
      g.index = key;
      g.name = name;
    }
    if (!f.ranks.empty()) {
      for (const RankFrame& r : f.ranks) AddRank(k, n, r);
    } else if (n.single && f.steps) {
      AddRank(k, n,
              RankFrame{.rank = n.single->first,
                        .pid = n.single->second,
                        .steps = *f.steps,
                        .data_wait_ratio = f.data_wait_ratio});
    }
  }

  const Frame& frame() const { return frame_; }

 private:
  void AddRank(size_t k, const NodeRows& n, const RankFrame& r) {
    int key = r.rank;
    if (r.rank < 0) {  // not distributed: known by its node and pid
      key =
          pseudo_keys_.try_emplace({k, r.pid}, kPseudoRanks + static_cast<int>(pseudo_keys_.size()))
              .first->second;
    }
    auto [it, added] = rank_nodes_.try_emplace(key, k);
    if (it->second != k) {
      throw std::runtime_error(
          fmt::format("rank {} is on both {} and {}: these are not the nodes of one job", r.rank,
                      nodes_[it->second], n.node));
    }
    if (added) {
      if (nodes_.size() <= k) nodes_.resize(k + 1);
      nodes_[k] = n.node;
      FindingSubject s = r.rank >= 0 ? FindingSubject::Process(r.rank, std::nullopt)
                                     : FindingSubject::Process(std::nullopt, r.pid);
      s.node = n.node;
      rank_subjects[key] = s;
      rank_names_[key] = r.rank >= 0 ? fmt::format("Rank {} on {}", r.rank, n.node)
                                     : fmt::format("The process {} on {}", r.pid, n.node);
    }
    RankFrame& joined = frame_.ranks.emplace_back(r);
    joined.rank = key;
    joined.name = rank_names_[key];
  }

  static constexpr int kPseudoRanks = 1 << 24;
  Frame frame_;
  // A node's GPU: its key in the joined frame and its name there.
  std::map<std::pair<size_t, int>, std::pair<int, std::string>> gpu_keys_;
  std::map<std::pair<size_t, int>, int> pseudo_keys_;
  std::map<int, size_t> rank_nodes_;
  std::map<int, std::string> rank_names_;
  std::vector<std::string> nodes_;
};

// The node's one training process, from its client_start marks.
std::optional<std::pair<int, int>> SingleClient(const std::vector<Mark>& marks) {
  std::set<std::pair<int, int>> clients;
  for (const Mark& m : marks) {
    if (m.type == EventType::kClientStart) clients.emplace(m.rank, m.pid);
  }
  if (clients.size() != 1) return std::nullopt;
  return *clients.begin();
}

// "tvnode1", or "host:directory" where hosts repeat (or are unknown).
std::vector<std::string> NodeNames(const std::vector<std::string>& dirs,
                                   const std::vector<const RunInputs*>& inputs) {
  std::map<std::string, int> count;
  for (const RunInputs* in : inputs) ++count[in->meta.host];
  std::vector<std::string> names;
  for (size_t k = 0; k < dirs.size(); ++k) {
    const std::string& host = inputs[k]->meta.host;
    std::string base = std::filesystem::path(dirs[k]).lexically_normal().filename().string();
    if (base.empty()) {  // "dir/"
      base = std::filesystem::path(dirs[k]).lexically_normal().parent_path().filename();
    }
    if (host.empty()) {
      names.push_back(base);
    } else if (count[host] > 1) {
      names.push_back(fmt::format("{}:{}", host, base));
    } else {
      names.push_back(host);
    }
  }
  return names;
}

// The job id the nodes share; throws when two differ.
std::string SharedJob(const std::vector<std::string>& dirs,
                      const std::vector<const RunInputs*>& inputs) {
  std::string job;
  size_t from = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k]->meta.job || inputs[k]->meta.job->job.empty()) continue;
    const std::string& id = inputs[k]->meta.job->job;
    if (!job.empty() && id != job) {
      throw std::runtime_error(fmt::format("{} is job {} and {} is job {}: not one job's nodes",
                                           dirs[from], job, dirs[k], id));
    }
    job = id, from = k;
  }
  return job;
}

// Says in a straggler's finding which findings its node had open meanwhile.
void NameHostCause(const NodeVerdict& node, double end_t, FindingRecord* f) {
  double close = f->closed_t.value_or(end_t);
  std::vector<std::string> open;
  for (const FindingRecord& own : node.verdict.findings) {
    if (std::find(std::begin(kHostCauses), std::end(kHostCauses), own.id) ==
        std::end(kHostCauses)) {
      continue;
    }
    double from = own.opened_t + node.clock_offset_s;
    double to = own.closed_t ? *own.closed_t + node.clock_offset_s : end_t;
    if (from < close && to > f->opened_t &&
        std::find(open.begin(), open.end(), own.id) == open.end()) {
      open.push_back(own.id);
    }
  }
  if (open.empty()) return;
  std::string ids = fmt::format("{}", fmt::join(open, ", "));
  f->evidence["node_findings"] = ids;
  f->message += fmt::format(" On {}, {} {} open meanwhile: that node's host is the likely cause.",
                            node.node, ids, open.size() == 1 ? "was" : "were");
}

// Lines each node's clock up with the first node's by their steps
// (StepClockOffset), saying how in `out->notes`.
void LineUpClocks(const std::vector<StepCurve>& curves, const std::vector<const RunInputs*>& inputs,
                  JoinedVerdict* out) {
  for (size_t k = 1; k < out->nodes.size(); ++k) {
    std::string why;
    std::optional<double> offset = StepClockOffset(curves[0], curves[k], &why);
    double row = std::max(inputs[0]->interval_s, inputs[k]->interval_s);
    const std::string& a = out->nodes[0].node;
    const std::string& b = out->nodes[k].node;
    if (!offset) {
      out->notes.push_back(fmt::format("{}'s clock taken as {}'s ({})", b, a, why));
    } else if (std::abs(*offset) <= row) {
      out->notes.push_back(
          fmt::format("{}'s clock within a row of {}'s by their steps ({:+.2f} s): left as it is",
                      b, a, *offset));
    } else {
      out->nodes[k].clock_offset_s = *offset;
      out->notes.push_back(fmt::format(
          "{}'s times moved by {:+.2f} s to line its steps up with {}'s", b, *offset, a));
    }
  }
}

// What the rules that compare ranks and GPUs found, over every node's
// together on the first node's rows, their subjects named by node.
struct AcrossPass {
  std::vector<FindingRecord> findings;
  double last_t = 0;
};

// Reads every node's rows side by side, each moved by its clock offset
// (`nodes`), and judges them by the rules that compare ranks and GPUs. With
// `replays` (the first read), each node's own replay judges its rows as they
// are taken, and `curves` gets where its steps rose.
AcrossPass JudgeAcrossNodes(const std::vector<std::string>& run_dirs,
                            const std::vector<const RunInputs*>& inputs,
                            const std::vector<NodeVerdict>& nodes, const Thresholds& thresholds,
                            const std::vector<std::unique_ptr<RunReplay>>* replays,
                            std::vector<StepCurve>* curves) {
  std::vector<NodeRows> streams(run_dirs.size());
  bool ended = true;
  for (size_t k = 0; k < run_dirs.size(); ++k) {
    NodeRows& s = streams[k];
    s.node = nodes[k].node;
    s.offset = nodes[k].clock_offset_s;
    s.interval_s = inputs[k]->interval_s;
    if (replays != nullptr) {
      s.replay = (*replays)[k].get();
      s.curve = &(*curves)[k];
    }
    s.rows = std::make_unique<RowQueue>(run_dirs[k], s.replay ? s.replay->verdict() : &s.skipped);
    s.single = SingleClient(inputs[k]->marks);
    ended = ended && inputs[k]->ended;
  }
  for (NodeRows& s : streams) s.more = s.rows->Next(&s.next);
  // On the first node's marks (its phases and epochs), to the end only when
  // every node ended; how a node's job ended is not the job's.
  RunInputs first_inputs = *inputs[0];
  first_inputs.ended = ended;
  first_inputs.job_end = JobEnd{};
  RunReplay across(std::move(first_inputs), thresholds, RuleChoice::kAcrossNodes);
  JoinedFrames joined;
  NodeRows& first = streams[0];
  AcrossPass pass;
  while (first.more) {
    first.Advance();
    const Frame& f0 = first.current;
    joined.Start(f0);
    joined.Add(0, first, f0);
    for (size_t k = 1; k < streams.size(); ++k) {
      NodeRows& s = streams[k];
      while (s.more && s.next.t + s.offset <= f0.t + s.interval_s / 2) s.Advance();
      double stale = 2 * std::max(s.interval_s, first.interval_s);
      if (s.has_current && s.current.t + s.offset >= f0.t - stale) joined.Add(k, s, s.current);
    }
    across.OnRow(joined.frame());
  }
  // The rows the other nodes wrote after the first node's last: their own.
  for (NodeRows& s : streams) {
    while (s.replay != nullptr && s.more) s.Advance();
  }
  pass.last_t = across.last_t();
  for (FindingRecord f : across.Finish().findings) {
    if (!AcrossNodes(f.id)) continue;
    bool gpu = f.subject.kind == FindingSubject::Kind::kGpu;
    auto& subjects = gpu ? joined.gpu_subjects : joined.rank_subjects;
    int key = gpu ? f.subject.gpu : f.subject.rank.value_or(-1);
    if (auto it = subjects.find(key); it != subjects.end()) f.subject = it->second;
    pass.findings.push_back(std::move(f));
  }
  return pass;
}

}  // namespace

JoinedVerdict JoinedReplay(const std::vector<std::string>& run_dirs, const Thresholds& thresholds) {
  JoinedVerdict out;
  std::vector<std::unique_ptr<RunReplay>> replays;
  std::vector<const RunInputs*> inputs;
  for (const std::string& dir : run_dirs) {
    replays.push_back(std::make_unique<RunReplay>(dir, thresholds));
    inputs.push_back(&replays.back()->inputs());
  }
  out.job = SharedJob(run_dirs, inputs);
  std::vector<std::string> names = NodeNames(run_dirs, inputs);
  for (size_t k = 0; k < run_dirs.size(); ++k) {
    NodeVerdict& n = out.nodes.emplace_back();
    n.node = names[k];
    n.run_dir = run_dirs[k];
  }
  bool across = out.nodes.size() > 1;
  if (!across) {
    // One node is judged as its own run is.
    RowReader rows(run_dirs[0], replays[0]->verdict());
    Frame frame;
    while (rows.Next(&frame)) replays[0]->OnRow(frame);
    out.nodes[0].verdict = replays[0]->Finish();
  } else {
    // One read of every node, side by side on their own clocks, judges each
    // node alone and the rules that compare ranks and GPUs across them. A
    // clock that then proves off by more than a row is lined up, and the rules
    // across nodes judge again on a second read.
    std::vector<StepCurve> curves(run_dirs.size());
    AcrossPass pass = JudgeAcrossNodes(run_dirs, inputs, out.nodes, thresholds, &replays, &curves);
    for (size_t k = 0; k < run_dirs.size(); ++k) out.nodes[k].verdict = replays[k]->Finish();
    LineUpClocks(curves, inputs, &out);
    if (std::any_of(out.nodes.begin(), out.nodes.end(),
                    [](const NodeVerdict& n) { return n.clock_offset_s != 0; })) {
      pass = JudgeAcrossNodes(run_dirs, inputs, out.nodes, thresholds, nullptr, nullptr);
    }
    for (FindingRecord& f : pass.findings) {
      if (f.id == "straggler") {
        for (const NodeVerdict& n : out.nodes) {
          if (n.node == f.subject.node) NameHostCause(n, pass.last_t, &f);
        }
      }
      out.findings.push_back(std::move(f));
    }
  }
  for (const NodeVerdict& n : out.nodes) {
    for (FindingRecord f : n.verdict.findings) {
      if (across && AcrossNodes(f.id)) continue;
      f.subject.node = n.node;
      f.opened_t += n.clock_offset_s;
      if (f.closed_t) *f.closed_t += n.clock_offset_s;
      out.findings.push_back(std::move(f));
    }
  }
  std::stable_sort(out.findings.begin(), out.findings.end(),
                   [](const FindingRecord& a, const FindingRecord& b) {
                     if (a.severity != b.severity) return a.severity > b.severity;
                     return a.duration_s > b.duration_s;
                   });
  const NodeVerdict* lowest = &out.nodes[0];
  for (const NodeVerdict& n : out.nodes) {
    if (n.verdict.health.score && (!lowest->verdict.health.score ||
                                   *n.verdict.health.score < *lowest->verdict.health.score)) {
      lowest = &n;
    }
  }
  out.health = lowest->verdict.health;
  out.health_node = lowest->node;
  return out;
}

}  // namespace tv
