// Joined: judges the run directories of one job's nodes as one run
// (`trainvitals analyze DIR DIR...`). Each node is judged alone, as `analyze
// DIR` judges it; then the ranks and GPUs of every node are judged together by
// the rules that compare them (straggler, gpu-imbalance), each finding naming
// the node it is on, and a straggler whose own node had a host finding open at
// the time (cpu-bound, io-bound, throttled, input-bound, host-memory-pressure)
// says that its host is the likely cause.
//
// Clocks: each node's rows carry its own wall clock. Synchronous ranks (DDP,
// FSDP) finish each step together, so where two nodes step at the same rate
// the median difference between the times their rows first show the same
// step counts is how far apart their clocks are; a difference over one row
// interval is taken off the later node's times. The rules judge over windows
// of window_s (60 s), so clocks within a row of each other change nothing;
// nodes that do not step together keep their clocks as they are, and a note
// says so.
//
// One read: every node's rows are parsed on a thread of their own
// (row_queue.h) and taken side by side on one thread, which judges each node
// alone and the rules across nodes at once; only a clock lined up by more than
// a row costs the rules across nodes a second read.
//
// Thread safety: JoinedReplay may be called from any thread; it starts and
// joins its own readers.
#pragma once

#include <string>
#include <vector>

#include "analysis/findings/replay.h"

namespace tv {

struct NodeVerdict {
  // meta.json's host; "host:directory" where two directories share a host.
  std::string node;
  std::string run_dir;
  Verdict verdict;            // the node judged alone
  double clock_offset_s = 0;  // added to its times to line them up with the first node's
};

struct JoinedVerdict {
  std::string job;  // the job id of the nodes' meta.json; empty when none has one
  std::vector<NodeVerdict> nodes;
  // The job's findings, the worst first: the rules across nodes, then each
  // node's own (its straggler and gpu-imbalance left to the rules across nodes).
  std::vector<FindingRecord> findings;
  // The lowest node score's health: the job goes at its slowest node's pace.
  HealthRecord health;
  std::string health_node;
  std::vector<std::string> notes;  // how the clocks were lined up
};

// Throws std::runtime_error naming the directories when they are not one
// job's nodes (two job ids, one rank on two nodes), and as Replay does.
JoinedVerdict JoinedReplay(const std::vector<std::string>& run_dirs, const Thresholds& thresholds);

}  // namespace tv
