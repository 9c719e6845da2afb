#include "views/top/top_frame.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <unordered_map>

#include "core/format.h"
#include "views/top/top_text.h"

namespace tv {
namespace {

using namespace top_text;  // NOLINT(google-build-using-namespace): the frame is drawn with these

double SortKey(const TopProcess& p, TopSort sort) {
  switch (sort) {
    case TopSort::kGpuMemory:
      return p.gpu_memory_bytes.value_or(-1);
    case TopSort::kCpu:
      return p.cpu_cores.value_or(-1);
    case TopSort::kMemory:
      return p.rss_bytes;
    case TopSort::kPid:
      return -p.pid;
  }
  return 0;
}

struct ShownProcess {
  const TopProcess* process;
  int depth;
};

std::vector<ShownProcess> Visible(const TopModel& model, const TopUi& ui) {
  std::string filter = Lower(ui.filter);
  std::vector<const TopProcess*> kept;
  for (const TopProcess& p : model.processes) {
    if (!filter.empty()) {
      std::string job = p.session >= 0 ? model.sessions[p.session].name : "";
      std::string hay = Lower(fmt::format("{} {} {} {} {}", p.pid, p.user, p.name, job, p.command));
      if (hay.find(filter) == std::string::npos) continue;
    }
    kept.push_back(&p);
  }
  auto before = [&](const TopProcess* a, const TopProcess* b) {
    double ka = SortKey(*a, ui.sort), kb = SortKey(*b, ui.sort);
    return ka != kb ? ka > kb : a->pid < b->pid;
  };
  std::sort(kept.begin(), kept.end(), before);
  std::vector<ShownProcess> out;
  if (!ui.tree) {
    for (const TopProcess* p : kept) out.push_back({p, 0});
    return out;
  }
  std::unordered_map<int, std::vector<const TopProcess*>> children;
  std::unordered_map<int, bool> listed;
  for (const TopProcess* p : kept) listed[p->pid] = true;
  std::vector<const TopProcess*> roots;
  for (const TopProcess* p : kept) {  // in sorted order, so siblings stay sorted
    if (listed.contains(p->ppid) && p->ppid != p->pid) {
      children[p->ppid].push_back(p);
    } else {
      roots.push_back(p);
    }
  }
  auto visit = [&](auto&& self, const TopProcess* p, int depth) -> void {
    out.push_back({p, depth});
    if (depth > 32) return;
    for (const TopProcess* c : children[p->pid]) self(self, c, depth + 1);
  };
  for (const TopProcess* r : roots) visit(visit, r, 0);
  return out;
}

int SelectedIndex(const std::vector<ShownProcess>& shown, int pid) {
  for (size_t i = 0; i < shown.size(); ++i) {
    if (shown[i].process->pid == pid) return static_cast<int>(i);
  }
  return 0;
}

// "0:07", "12:03", "1:02:05": one word, for a table cell.
std::string ElapsedWord(double seconds) {
  auto total = static_cast<long>(std::max(0.0, seconds));
  long h = total / 3600, m = (total / 60) % 60, s = total % 60;
  return h > 0 ? fmt::format("{}:{:02}:{:02}", h, m, s) : fmt::format("{}:{:02}", m, s);
}

std::string Clock(double t) {
  std::time_t s = static_cast<std::time_t>(t);
  std::tm tm{};
  ::localtime_r(&s, &tm);
  return fmt::format("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

class Painter {
 public:
  Painter(const TopModel& m, const TopHistory& h, TopUi* ui, int columns, bool unicode)
      : m_(m), h_(h), ui_(ui), w_(columns), u_(unicode) {}

  Line NewLine() const { return Line(w_, u_); }

  void Title(std::vector<TopLine>* out) const {
    Line line = NewLine();
    const HostSample& host = m_.host_sample;
    std::string text =
        fmt::format("trainvitals top {} {}  {}", u_ ? "—" : "-", m_.host, Clock(m_.t));
    if (host.load1 && host.load5 && host.load15) {
      text += fmt::format("  load {:.2f} {:.2f} {:.2f}", *host.load1, *host.load5, *host.load15);
    }
    line.Add(text, TopStyle::kTitle).Add(std::string(line.left(), ' '), TopStyle::kTitle);
    out->push_back(line.Take());
  }

  void Host(std::vector<TopLine>* out) const {
    const HostSample& host = m_.host_sample;
    int spark = std::clamp((w_ - 40) / 3, 0, 40);
    int bar = std::clamp(w_ - 40 - spark, 10, 40);
    Line cpu = NewLine();
    cpu.Add("CPU  ", TopStyle::kHeader);
    double util = host.cpu_util_ratio.value_or(0);
    AddBar(cpu, bar, util, 0, TopStyle::kBarOther);
    cpu.Add(host.cpu_util_ratio ? fmt::format(" {:>4} ", FormatPercent(util)) : "    - ",
            Level(util, 0.9, 0.98));
    cpu.Add(Sparkline(h_.cpu(), spark, u_), TopStyle::kBarOther);
    cpu.Add(fmt::format("  {} cores", m_.cpus), TopStyle::kDim);
    out->push_back(cpu.Take());
    if (!host.core_util_ratio.empty()) {
      Line cores = NewLine();
      cores.Add("     ");
      size_t fit = static_cast<size_t>(std::max(0, cores.left() - 6));
      size_t n = host.core_util_ratio.size();
      std::string glyphs;
      for (size_t i = 0; i < std::min(n, fit); ++i) glyphs += Glyph(host.core_util_ratio[i], u_);
      cores.Add(glyphs, TopStyle::kBarOther);
      if (n > fit) cores.Add(fmt::format(" +{}", n - fit), TopStyle::kDim);
      out->push_back(cores.Take());
    }
    Line mem = NewLine();
    mem.Add("MEM  ", TopStyle::kHeader);
    double total = host.memory_total_bytes.value_or(0);
    double used = host.memory_used_bytes.value_or(0);
    double ratio = total > 0 ? used / total : 0;
    AddBar(mem, bar, 0, ratio, TopStyle::kBarOther);
    mem.Add(total > 0 ? fmt::format(" {}/{}", FormatBytes(used), FormatBytes(total)) : " -",
            Level(ratio, 0.9, 0.97));
    if (host.swap_total_bytes && *host.swap_total_bytes > 0) {
      mem.Add(fmt::format("  swap {}", FormatBytes(host.swap_used_bytes.value_or(0))),
              TopStyle::kDim);
    }
    mem.Add(fmt::format("  disk r {} w {}", Rate(host.disk_read_bytes_per_second),
                        Rate(host.disk_write_bytes_per_second)),
            TopStyle::kDim);
    mem.Add(fmt::format("  net rx {} tx {}", Rate(host.net_rx_bytes_per_second),
                        Rate(host.net_tx_bytes_per_second)),
            TopStyle::kDim);
    out->push_back(mem.Take());
  }

  // Each GPU in two lines, or one when `compact`.
  void Gpus(bool compact, std::vector<TopLine>* out) const {
    if (m_.gpus.empty()) {
      Line line = NewLine();
      line.Add("GPU  ", TopStyle::kHeader)
          .Add(m_.gpu_error.empty() ? "none" : m_.gpu_error, TopStyle::kDim);
      out->push_back(line.Take());
      return;
    }
    for (size_t i = 0; i < m_.gpus.size(); ++i) {
      const TopGpu& gpu = m_.gpus[i];
      const GpuSample& g = gpu.sample;
      std::string label = g.mig_instance >= 0
                              ? fmt::format("GPU {} MIG {}", g.physical_index, g.mig_instance)
                              : fmt::format("GPU {}", g.physical_index);
      Line head = NewLine();
      head.Add(fmt::format("{:<6} ", label), TopStyle::kHeader);
      if (!compact) {
        head.Add(gpu.name.empty() ? "" : gpu.name + "  ");
        Condition(g, &head);
        out->push_back(head.Take());
        head = NewLine();
        head.Add("       ");
      }
      int spark = compact ? 0 : std::clamp((w_ - 60) / 4, 0, 30);
      int bar = std::clamp((w_ - 60 - spark) / 2, 5, 40);
      head.Add("busy ");
      double busy = g.util_ratio.value_or(0);
      AddBar(head, bar, busy, 0, TopStyle::kBarJob);
      head.Add(g.util_ratio ? fmt::format(" {:>4} ", FormatPercent(busy)) : "    - ");
      if (spark > 0) head.Add(Sparkline(h_.gpu(i), spark, u_), TopStyle::kBarJob).Add(" ");
      if (g.sm_active_ratio) head.Add(fmt::format(" SM {}", FormatPercent(*g.sm_active_ratio)));
      double total = g.memory_total_bytes.value_or(0);
      double used = g.memory_used_bytes.value_or(0);
      double jobs = gpu.sessions_memory_bytes.value_or(0);
      head.Add(" mem ");
      if (total > 0) {
        AddBar(head, bar, jobs / total, std::max(0.0, used - jobs) / total, TopStyle::kBarJob);
        head.Add(fmt::format(" {}/{}", FormatBytes(used), FormatBytes(total)),
                 Level(used / total, 0.9, 0.97));
      } else {
        head.Add("-", TopStyle::kDim);
      }
      if (compact) Condition(g, &head);
      out->push_back(head.Take());
    }
  }

  // Temperature, power, throttling.
  void Condition(const GpuSample& g, Line* line) const {
    if (g.temperature_celsius) {
      line->Add(fmt::format(" {:.0f}{}C", *g.temperature_celsius, u_ ? "°" : " "),
                Level(*g.temperature_celsius, 80, 90));
    }
    if (g.power_watts) {
      std::string power = g.power_limit_watts ? fmt::format(" {:.0f}/{:.0f} W", *g.power_watts,
                                                            *g.power_limit_watts)
                                              : fmt::format(" {:.0f} W", *g.power_watts);
      line->Add(power, g.power_limit_watts ? Level(*g.power_watts / *g.power_limit_watts, 0.95, 2)
                                           : TopStyle::kNormal);
    }
    std::vector<std::string> why;
    if (g.throttle_power_ratio.value_or(0) > 0) why.push_back("power");
    if (g.throttle_thermal_ratio.value_or(0) > 0) why.push_back("thermal");
    if (g.throttle_hw_slowdown_ratio.value_or(0) > 0) why.push_back("hw slowdown");
    if (!why.empty()) {
      line->Add(fmt::format("  throttled: {}", fmt::join(why, ", ")), TopStyle::kWarn);
    }
  }

  // The sessions' table, at most `rows` lines (< 0: all).
  void Sessions(int rows, std::vector<TopLine>* out) const {
    Line head = NewLine();
    head.Add(fmt::format("SESSIONS {}", m_.sessions.size()), TopStyle::kHeader);
    if (m_.sessions.empty()) {
      head.Add(m_.sessions_error.empty()
                   ? "  none running: `trainvitals run -- python train.py` starts one"
                   : "  " + m_.sessions_error,
               TopStyle::kDim);
    }
    out->push_back(head.Take());
    if (m_.sessions.empty()) return;
    static const std::vector<Column> kColumns = {
        {"PID", 7, true, 0},   {"MODE", 6, false, 3},          {"ELAPSED", 8, true, 0},
        {"EPOCH", 5, true, 0}, {"STEP", 8, true, 2},           {"STEPS/S", 8, true, 0},
        {"WAIT", 5, true, 0},  {"HEALTH", 6, true, 0},         {"CPU%", 5, true, 1},
        {"MEM", 9, true, 1},   {"NAME / COMMAND", 0, false, 0}};
    std::vector<bool> keep = FitColumns(kColumns, w_, 12);
    std::vector<std::string> titles;
    titles.reserve(std::size(kColumns));
    for (const Column& c : kColumns) titles.push_back(c.title);
    out->push_back(TableLine(kColumns, keep, titles, w_, u_, TopStyle::kHeader));
    int used = 0;
    for (size_t i = 0; i < m_.sessions.size(); ++i) {
      if (rows >= 0 && used >= rows) {
        Line more = NewLine();
        more.Add(fmt::format("  … {} more", m_.sessions.size() - i), TopStyle::kDim);
        out->back() = more.Take();
        break;
      }
      const TopSession& s = m_.sessions[i];
      auto num = [](const std::optional<double>& v, const char* f) {
        return v ? fmt::format(fmt::runtime(f), *v) : std::string("-");
      };
      std::vector<std::string> cells = {
          std::to_string(s.pid),
          s.mode,
          ElapsedWord(m_.t - s.start_t),
          num(s.epoch, "{:.0f}"),
          num(s.step, "{:.0f}"),
          num(s.steps_per_second, "{:.2f}"),
          s.data_wait_ratio ? FormatPercent(*s.data_wait_ratio) : "-",
          num(s.health_score, "{:.0f}"),
          s.cpu_cores ? fmt::format("{:.0f}", *s.cpu_cores * 100) : "-",
          s.memory_bytes ? FormatBytes(*s.memory_bytes) : "-",
          s.name == s.command || s.command.empty() ? s.name : s.name + "  " + s.command};
      out->push_back(TableLine(kColumns, keep, cells, w_, u_, TopStyle::kNormal));
      ++used;
      if (s.findings.empty() && s.alerts.empty()) continue;
      std::vector<std::string> said;
      for (const std::string& f : s.findings) said.push_back("finding " + f);
      for (const std::string& a : s.alerts) said.push_back("alert " + a);
      Line line = NewLine();
      line.Add(fmt::format("        {} {}", u_ ? "⚠" : "!", fmt::join(said, " · ")),
               s.worst_critical ? TopStyle::kBad : TopStyle::kWarn);
      out->push_back(line.Take());
      ++used;
    }
  }

  // The process table: its heading, then `rows` lines (< 0: all).
  void Processes(const std::vector<ShownProcess>& shown, int rows,
                 std::vector<TopLine>* out) const {
    Line head = NewLine();
    head.Add(fmt::format("PROCESSES {}", shown.size()), TopStyle::kHeader);
    head.Add(fmt::format("  sort: {}{}", TopSortName(ui_->sort), ui_->tree ? "  tree" : ""),
             TopStyle::kDim);
    if (!ui_->filter.empty()) head.Add(fmt::format("  filter: {}", ui_->filter), TopStyle::kWarn);
    out->push_back(head.Take());
    static const std::vector<Column> kColumns = {
        {"PID", 7, true, 0},  {"USER", 8, false, 1},   {"JOB", 12, false, 3},
        {"GPU", 4, false, 0}, {"GPU-MEM", 9, true, 0}, {"SM", 4, true, 2},
        {"CPU%", 5, true, 0}, {"RSS", 9, true, 2},     {"COMMAND", 0, false, 0}};
    std::vector<bool> keep = FitColumns(kColumns, w_, 16);
    std::vector<std::string> titles;
    titles.reserve(std::size(kColumns));
    for (const Column& c : kColumns) titles.push_back(c.title);
    out->push_back(TableLine(kColumns, keep, titles, w_, u_, TopStyle::kHeader));
    if (shown.empty()) {
      Line none = NewLine();
      none.Add(ui_->filter.empty() ? "  no session's job and no GPU process"
                                   : "  nothing matches the filter",
               TopStyle::kDim);
      out->push_back(none.Take());
      return;
    }
    int selected = SelectedIndex(shown, ui_->selected_pid);
    int count = static_cast<int>(shown.size());
    int visible = rows < 0 ? count : std::max(1, rows);
    ui_->scroll = std::clamp(ui_->scroll, std::max(0, selected - visible + 1), selected);
    ui_->scroll = std::clamp(ui_->scroll, 0, std::max(0, count - visible));
    bool interactive = rows >= 0;
    for (int i = ui_->scroll; i < std::min(count, ui_->scroll + visible); ++i) {
      const TopProcess& p = *shown[i].process;
      std::string gpus;
      for (int g : p.gpus) gpus += (gpus.empty() ? "" : ",") + std::to_string(g);
      std::string indent;
      if (shown[i].depth > 0) {
        indent =
            std::string(2 * static_cast<size_t>(shown[i].depth - 1), ' ') + (u_ ? "└─ " : "`- ");
      }
      std::vector<std::string> cells = {
          std::to_string(p.pid),
          p.user,
          p.session >= 0 ? m_.sessions[p.session].name : "-",
          gpus.empty() ? "-" : gpus,
          p.gpu_memory_bytes ? FormatBytes(*p.gpu_memory_bytes) : "-",
          p.gpu_sm_util_ratio ? FormatPercent(*p.gpu_sm_util_ratio) : "-",
          p.cpu_cores ? fmt::format("{:.0f}", *p.cpu_cores * 100) : "-",
          FormatBytes(p.rss_bytes),
          indent + p.command};
      TopStyle style = interactive && i == selected ? TopStyle::kSelected
                       : p.session >= 0             ? TopStyle::kNormal
                                                    : TopStyle::kDim;
      out->push_back(TableLine(kColumns, keep, cells, w_, u_, style));
    }
  }

  void Help(std::vector<TopLine>* out) const {
    Line line = NewLine();
    if (ui_->editing_filter) {
      line.Add("filter: ", TopStyle::kHeader)
          .Add(ui_->filter + "_")
          .Add("   Enter keeps it, Esc clears it", TopStyle::kDim);
    } else {
      line.Add(u_ ? "↑↓ select  s sort  / filter  t tree  q quit"
                  : "up/down select  s sort  / filter  t tree  q quit",
               TopStyle::kDim);
    }
    out->push_back(line.Take());
  }

 private:
  const TopModel& m_;
  const TopHistory& h_;
  TopUi* ui_;
  int w_;
  bool u_;
};

}  // namespace

const char* TopSortName(TopSort sort) {
  switch (sort) {
    case TopSort::kGpuMemory:
      return "GPU memory";
    case TopSort::kCpu:
      return "CPU";
    case TopSort::kMemory:
      return "RSS";
    case TopSort::kPid:
      return "PID";
  }
  return "";
}

int TextColumns(std::string_view text) {
  int n = 0;
  for (char c : text) n += IsContinuation(c) ? 0 : 1;
  return n;
}

void MoveSelection(const TopModel& model, int by, TopUi* ui) {
  std::vector<ShownProcess> shown = Visible(model, *ui);
  if (shown.empty()) return;
  int at = std::clamp(SelectedIndex(shown, ui->selected_pid) + by, 0,
                      static_cast<int>(shown.size()) - 1);
  ui->selected_pid = shown[at].process->pid;
}

void TopHistory::Add(const TopModel& model) {
  auto push = [](std::deque<double>& d, double v) {
    d.push_back(v);
    if (d.size() > kLength) d.pop_front();
  };
  push(cpu_, model.host_sample.cpu_util_ratio.value_or(0));
  if (gpus_.size() < model.gpus.size()) gpus_.resize(model.gpus.size());
  for (size_t i = 0; i < model.gpus.size(); ++i) {
    push(gpus_[i], model.gpus[i].sample.util_ratio.value_or(0));
  }
}

const std::deque<double>& TopHistory::gpu(size_t i) const {
  static const std::deque<double> kNone;
  return i < gpus_.size() ? gpus_[i] : kNone;
}

std::vector<TopLine> RenderTop(const TopModel& model, const TopHistory& history, TopUi* ui,
                               int columns, int rows, bool unicode) {
  std::vector<TopLine> out;
  if (columns < kTopMinColumns || (rows > 0 && rows < kTopMinRows)) {
    Line line(std::max(columns, 1), unicode);
    line.Add(fmt::format("terminal too small ({}x{}): top needs {}x{}", columns, rows,
                         kTopMinColumns, kTopMinRows),
             TopStyle::kWarn);
    out.push_back(line.Take());
    return out;
  }
  Painter paint(model, history, ui, columns, unicode);
  std::vector<ShownProcess> shown = Visible(model, *ui);
  // A selected process that left (or is filtered out) hands the selection to the first.
  if (std::none_of(shown.begin(), shown.end(),
                   [&](const ShownProcess& s) { return s.process->pid == ui->selected_pid; })) {
    ui->selected_pid = shown.empty() ? 0 : shown[0].process->pid;
  }
  paint.Title(&out);
  paint.Host(&out);
  if (rows <= 0) {
    paint.Gpus(false, &out);
    paint.Sessions(-1, &out);
    paint.Processes(shown, -1, &out);
    return out;
  }
  // Rows: the GPUs in two lines each unless that leaves the processes fewer
  // than five; the sessions at most a third of what is left.
  int fixed = static_cast<int>(out.size()) + 1 /* help */ + 2 /* process headings */;
  int gpu_lines = std::max<int>(1, static_cast<int>(model.gpus.size()));
  bool compact = rows - fixed - 2 * gpu_lines < 8;
  paint.Gpus(compact, &out);
  int left = rows - static_cast<int>(out.size()) - 3;
  paint.Sessions(std::max(1, left / 3 - 2), &out);
  int process_rows = rows - static_cast<int>(out.size()) - 3;
  if (process_rows < 1) {
    out.resize(std::max<size_t>(1, static_cast<size_t>(rows - 4)));
    process_rows = 1;
  }
  paint.Processes(shown, process_rows, &out);
  while (static_cast<int>(out.size()) < rows - 1) out.emplace_back();
  out.resize(static_cast<size_t>(rows - 1));
  paint.Help(&out);
  return out;
}

std::string TopText(const std::vector<TopLine>& lines) {
  std::string out;
  for (const TopLine& line : lines) {
    std::string text;
    for (const TopSpan& span : line) text += span.text;
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  }
  return out;
}

}  // namespace tv
