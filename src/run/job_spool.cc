#include "run/job_spool.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>

#include "core/config.h"
#include "run/run_dir.h"
#include "run/run_history.h"
#include "store/run_summary.h"

namespace tv {
namespace {

// Events held for a job not yet seen in a row: a few rows' worth.
constexpr size_t kMaxPendingEvents = 64;

}  // namespace

void JobSpool::Open(const JobRow& job, Spooled* s) {
  const JobIdentity& id = *job.identity;
  s->meta = options_.node;
  s->meta.name = id.name.empty() ? id.job : id.name;
  s->meta.start_t = job.row.t - job.row.elapsed_s;
  s->meta.user = id.user;
  s->meta.job = id;
  s->meta.gpus.clear();
  AddGpus(job, &s->meta);
  try {
    Config where;
    where.runs_dir = options_.dir;
    where.name = id.kind + "-" + id.job;
    s->run_dir = PrepareRunDir(where, {}, job.row.t);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trainvitals serve: job %s: not spooled: %s\n", id.job.c_str(), e.what());
    return;
  }
  WriteJsonFile(s->run_dir + "/meta.json", MetaJson(s->meta));
  s->jsonl =
      std::make_unique<JsonlSink>(s->run_dir + "/samples.jsonl", s->run_dir + "/events.jsonl");
  keys_[id.job] = JobKey(id);
  if (auto it = pending_.find(id.job); it != pending_.end()) {
    for (const Event& e : it->second) s->jsonl->OnEvent(e);
    pending_.erase(it);
  }
}

void JobSpool::AddGpus(const JobRow& job, MetaRecord* meta) const {
  for (const GpuRow& g : job.row.gpus) {
    auto same = [&](const GpuInfo& info) {
      return info.index == g.index && info.mig_instance == g.mig_instance;
    };
    if (std::any_of(meta->gpus.begin(), meta->gpus.end(), same)) continue;
    auto node = std::find_if(options_.node.gpus.begin(), options_.node.gpus.end(), same);
    if (node != options_.node.gpus.end()) meta->gpus.push_back(*node);
  }
}

void JobSpool::Finish(Spooled* s) {
  s->done = true;
  if (s->run_dir.empty()) return;
  s->jsonl->OnClose();
  RunSummary summary;
  if (Status st = RunSummaryFromJson(*s->summary, &summary); !st.ok()) {
    std::fprintf(stderr, "trainvitals serve: %s: no summary.json: %s\n", s->run_dir.c_str(),
                 st.message().c_str());
    return;
  }
  summary.outcome.run_dir = s->run_dir;
  summary.outcome.rows_written = s->jsonl->rows_written();
  if (s->jsonl->rows_lost() > 0) {
    summary.rows_unwritten = static_cast<int64_t>(s->jsonl->rows_lost());
  }
  summary.jsonl_error = s->jsonl->open_error();
  s->jsonl.reset();
  s->meta.start_t = summary.outcome.start_t;  // when the agent first served it
  WriteJsonFile(s->run_dir + "/meta.json", MetaJson(s->meta));
  if (WriteJsonFile(s->run_dir + "/summary.json", RunSummaryJson(summary))) {
    IndexFinishedRun(options_.db, s->run_dir, summary, s->meta, options_.cost_rates);
  }
}

void JobSpool::OnRow(const Row& row) {
  std::vector<std::string> seen;
  std::erase_if(pending_, [&](const auto& held) {
    return std::none_of(row.jobs.begin(), row.jobs.end(),
                        [&](const auto& job) { return job->identity->job == held.first; });
  });
  for (const std::shared_ptr<const JobRow>& job : row.jobs) {
    std::string key = JobKey(*job->identity);
    seen.push_back(key);
    auto it = jobs_.find(key);
    if (it != jobs_.end() && it->second.done && !job->ended_t) {
      jobs_.erase(it);  // its name taken again: a new job
      it = jobs_.end();
    }
    if (it == jobs_.end()) {
      if (job->ended_t && job->summary == nullptr) continue;  // ended before the agent knew it
      it = jobs_.emplace(key, Spooled{}).first;
      Open(*job, &it->second);
    }
    Spooled& s = it->second;
    if (s.done) continue;
    if (s.summary) {  // the events of its last row are in
      Finish(&s);
      continue;
    }
    if (s.last == job.get()) continue;
    s.last = job.get();
    // Who it is grows as its processes are read (its environment names its user).
    s.meta.job = *job->identity;
    if (!job->identity->user.empty()) s.meta.user = job->identity->user;
    AddGpus(*job, &s.meta);
    // The row a job ends on without a sample of its own repeats its last.
    if (s.jsonl && job->row.t > s.last_row_t) s.jsonl->OnRow(job->row);
    s.last_row_t = std::max(s.last_row_t, job->row.t);
    s.summary = job->summary;
  }
  std::sort(seen.begin(), seen.end());
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (std::binary_search(seen.begin(), seen.end(), it->first)) {
      ++it;
      continue;
    }
    if (it->second.summary && !it->second.done) Finish(&it->second);
    keys_.erase(it->second.meta.job ? it->second.meta.job->job : std::string());
    it = jobs_.erase(it);
  }
}

void JobSpool::OnEvent(const Event& event) {
  auto job = event.fields.find("job");
  if (job == event.fields.end() || !job->is_string()) return;
  const std::string& id = job->get_ref<const std::string&>();
  auto key = keys_.find(id);
  if (key == keys_.end()) {
    std::vector<Event>& held = pending_[id];
    if (held.size() < kMaxPendingEvents) held.push_back(event);
    return;
  }
  auto it = jobs_.find(key->second);
  if (it != jobs_.end() && !it->second.done && it->second.jsonl) it->second.jsonl->OnEvent(event);
}

void JobSpool::OnClose() {
  for (auto& [key, s] : jobs_) {
    if (s.done) continue;
    if (s.summary) {
      Finish(&s);
    } else if (s.jsonl) {
      s.jsonl->OnClose();  // still running: no summary, as a killed run
    }
  }
  jobs_.clear();
}

}  // namespace tv
