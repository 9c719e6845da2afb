#include "analysis/findings/analyzer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tv {

bool MarkFromEvent(const nlohmann::json& e, Mark* m) {
  if (!e.is_object()) return false;
  auto type = e.find("type");
  auto t = e.find("t");
  if (type == e.end() || !type->is_string() || t == e.end() || !t->is_number()) return false;
  const std::string& name = type->get_ref<const std::string&>();
  if (name == "client_start") {
    m->type = Mark::Type::kClientStart;
  } else if (name == "client_end") {
    m->type = Mark::Type::kClientEnd;
  } else if (name == "epoch_begin") {
    m->type = Mark::Type::kEpochBegin;
  } else if (name == "epoch_end") {
    m->type = Mark::Type::kEpochEnd;
  } else if (name == "phase_begin") {
    m->type = Mark::Type::kPhaseBegin;
  } else if (name == "phase_end") {
    m->type = Mark::Type::kPhaseEnd;
  } else {
    return false;
  }
  m->t = t->get<double>();
  auto number = [&e](const char* key) -> std::optional<int64_t> {
    auto it = e.find(key);
    if (it == e.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<int64_t>();
  };
  auto text = [&e](const char* key) -> std::string {
    auto it = e.find(key);
    return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  m->pid = static_cast<int>(number("pid").value_or(0));
  m->rank = static_cast<int>(number("rank").value_or(-1));
  m->epoch = number("epoch");
  m->planned_epochs = number("epochs");
  m->call = number("call");
  m->phase = text("phase");
  m->framework = text("framework");
  m->exception = text("exception");
  m->message = text("message");
  return true;
}

Analyzer::Analyzer(Thresholds thresholds, double interval_s)
    : th_(thresholds), interval_s_(interval_s > 0 ? interval_s : 1) {
  data_wait_.set_window(th_[Th::kWindow_s]);
  cpu_bound_.set_window(th_[Th::kWindow_s]);
  io_bound_.set_window(th_[Th::kWindow_s]);
  cpu_long_.set_window(th_[Th::kLowGpuUtilWindow_s]);
}

void Analyzer::OnMark(const Mark& m, std::vector<Event>* events) {
  switch (m.type) {
    case Mark::Type::kClientStart: {
      // The time before the first training process spoke was start-up.
      if (!markers_) ledger_.Move(Spent::kUnattributed, Spent::kStartup);
      if (!markers_) ledger_.Move(Spent::kIdleGpu, Spent::kStartup);
      markers_ = true;
      if (framework_ == Framework::kNone) framework_ = ParseFramework(m.framework);
      clients_[m.pid] = m.rank;
      auto lowest = std::min_element(clients_.begin(), clients_.end(), [](auto& a, auto& b) {
        return std::max(a.second, 0) < std::max(b.second, 0);
      });
      lowest_rank_pid_ = lowest->first;
      break;
    }
    case Mark::Type::kClientEnd:
      JudgeOomMark(m, events);
      clients_.erase(m.pid);
      rank_steps_.erase(m.pid);
      break;
    case Mark::Type::kEpochBegin:
      if (m.pid == lowest_rank_pid_ && m.epoch) {
        epochs_[*m.epoch] = EpochState{.begin_t = m.t};
        epoch_now_ = m.epoch;
        ++epochs_begun_;
        if (m.call != call_ || m.planned_epochs != planned_epochs_) call_epoch_begins_.clear();
        call_ = m.call;
        planned_epochs_ = m.planned_epochs;
        call_epoch_begins_.push_back(m.t);
      }
      break;
    case Mark::Type::kEpochEnd:
      if (m.pid == lowest_rank_pid_) EndEpoch(m, events);
      break;
    case Mark::Type::kPhaseBegin:
      if (m.pid == lowest_rank_pid_ && m.phase == "eval") {
        for (auto& [e, s] : epochs_) s.eval_since = m.t;
      }
      break;
    case Mark::Type::kPhaseEnd:
      if (m.pid == lowest_rank_pid_ && m.phase == "eval") {
        for (auto& [e, s] : epochs_) {
          if (s.eval_since) s.eval_s += m.t - *s.eval_since;
          s.eval_since.reset();
        }
      }
      break;
  }
}

bool Analyzer::Training(const Frame& f) const {
  // Without phase markers every row is training; evaluation, prediction and
  // testing are not (an idle GPU there is no idle run), nor, once the job has
  // named its train phase, the time outside every phase (between framework
  // calls, the teardown after the last).
  return f.phase == "train" || (f.phase.empty() && !train_marked_);
}

bool Analyzer::StepEvidence(const Frame& f) const {
  if (!first_step_t_ || !f.steps || !steps_at_first_) return false;
  if (f.job_processes && *f.job_processes == 0) return false;
  return *f.steps - *steps_at_first_ >= th_[Th::kJudgeMinSteps] &&
         f.t - *first_step_t_ >= th_[Th::kJudgeMin_s];
}

bool Analyzer::Judged(const Frame& f) const {
  if (f.job_processes && *f.job_processes == 0) return false;  // the job is gone
  if (markers_) return first_step_t_ && f.t >= *first_step_t_ + th_[Th::kWarmup_s];
  return f.elapsed_s >= th_[Th::kWarmup_s];
}

void Analyzer::OnFrame(const Frame& f, std::vector<Event>* events) {
  if (f.phase == "train") train_marked_ = true;
  if (!start_t_) start_t_ = f.t - f.elapsed_s;
  if (!first_step_t_ && f.steps && *f.steps > 0) {
    first_step_t_ = f.t;
    steps_at_first_ = f.steps;
  }
  double spent_s = f.t - (ledger_t_ > 0 ? ledger_t_ : *start_t_);
  ledger_t_ = f.t;
  double row_s = std::clamp(f.t - last_t_, 0.0, interval_s_ * 2);
  if (last_t_ == 0) row_s = interval_s_;
  last_t_ = f.t;
  bool judged = Judged(f);
  if (judged && Training(f)) {
    judged_s_ += row_s;
    double sum = 0;
    int n = 0;
    for (const GpuFrame& g : f.gpus) {
      if (g.busy && g.job_memory_bytes.value_or(1) > 0) sum += *g.busy, ++n;
    }
    if (n > 0) {
      busy_sum_ += sum / n;
      ++busy_rows_;
      for (auto& [e, s] : epochs_) s.busy_sum += sum / n, ++s.busy_rows;
    }
  }
  JudgeInput(f, events);
  JudgeProgress(f, events);
  JudgeRanks(f, events);
  JudgeHost(f, events);
  JudgeGpus(f, events);
  JudgeBalance(f, events);
  JudgeMemory(f, events);
  memory_trail_.Add(f);
  Account(f, spent_s);
}

bool Analyzer::Due(Tracker& tr, double t, bool cond, double open_after_s,
                   std::vector<Event>* events) {
  if (cond) {
    tr.clear_since.reset();
    if (!tr.true_since) tr.true_since = t;
    return !tr.open() && t - *tr.true_since >= open_after_s;
  }
  tr.true_since.reset();
  if (!tr.open()) return false;
  if (!tr.clear_since) tr.clear_since = t;
  if (t - *tr.clear_since >= th_[Th::kHold_s]) Close(tr, t, events);
  return false;
}

void Analyzer::Open(FindingId id, Tracker& tr, double t, const nlohmann::ordered_json& subject,
                    Opening o, std::vector<Event>* events) {
  const FindingDef& def = Def(id);
  tr.record = static_cast<int>(records_.size());
  std::string advice = o.advice.empty() ? std::string(AdviceFor(def, framework_)) : o.advice;
  records_.push_back(
      Record{id, o.severity, t, std::nullopt, subject, o.evidence, o.message, advice});
  events->push_back(Event{t,
                          "finding_open",
                          {{"id", def.name},
                           {"severity", SeverityName(o.severity)},
                           {"subject", subject},
                           {"evidence", std::move(o.evidence)},
                           {"message", std::move(o.message)},
                           {"advice", nlohmann::ordered_json::array({advice})}}});
}

void Analyzer::Close(Tracker& tr, double t, std::vector<Event>* events) {
  Record& r = records_[static_cast<size_t>(tr.record)];
  r.closed_t = t;
  tr.record = -1;
  tr.clear_since.reset();
  events->push_back(Event{t,
                          "finding_close",
                          {{"id", Def(r.id).name},
                           {"subject", r.subject},
                           {"duration_s", std::round((t - r.opened_t) * 1000) / 1000}}});
}

void Analyzer::Finish(double t, std::vector<Event>* events) {
  FinishGpuUse(events);
  FlushPending(StalledNow() ? Spent::kStalled : Spent::kProductive);
  end_t_ = t;
  JudgeOomEnd(events);
  for (auto& [e, s] : epochs_) {
    if (s.eval_since) s.eval_s += t - *s.eval_since;
  }
}

void Analyzer::FindingStates(std::vector<Row::Finding>* out) const {
  out->clear();
  std::vector<Severity> worst;
  for (const Record& r : records_) {
    std::string_view id = Def(r.id).name;
    size_t i = 0;
    while (i < out->size() && (*out)[i].id != id) ++i;
    if (i == out->size()) {
      out->push_back(Row::Finding{id, {}, false});
      worst.push_back(r.severity);
    }
    worst[i] = std::max(worst[i], r.severity);
    (*out)[i].active = (*out)[i].active || !r.closed_t;
  }
  for (size_t i = 0; i < out->size(); ++i) (*out)[i].severity = SeverityName(worst[i]);
}

nlohmann::ordered_json Analyzer::Findings() const {
  double end = end_t_.value_or(last_t_);
  std::vector<const Record*> order;
  for (const Record& r : records_) order.push_back(&r);
  auto lasted = [end](const Record* r) { return r->closed_t.value_or(end) - r->opened_t; };
  std::stable_sort(order.begin(), order.end(), [&](const Record* a, const Record* b) {
    if (a->severity != b->severity) return a->severity > b->severity;
    return lasted(a) > lasted(b);
  });
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Record* r : order) {
    const FindingDef& def = Def(r->id);
    nlohmann::ordered_json j = {
        {"id", def.name}, {"severity", SeverityName(r->severity)}, {"opened_t", r->opened_t}};
    if (r->closed_t) j["closed_t"] = *r->closed_t;
    j["duration_s"] = std::round(lasted(r) * 10) / 10;
    j["subject"] = r->subject;
    j["evidence"] = r->evidence;
    j["message"] = r->message;
    j["advice"] = nlohmann::ordered_json::array({r->advice});
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace tv
