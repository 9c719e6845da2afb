#include "markers/stack_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace tv {
namespace {

// Where the frames of a place live, by the path of their file.
struct Place {
  std::string_view waits_in;
  std::array<std::string_view, 8> paths;
};

// Searched over the whole stack, in this order: a rank in a collective may be
// there through a DataLoader's pin thread, never the other way round.
constexpr Place kWholeStack[] = {
    {"collective",
     {"/torch/distributed/", "/paddle/distributed/", "/horovod/", "/deepspeed/comm/",
      "/tensorflow/python/distribute/", "/torch/_C/_distributed"}},
    {"data-loader",
     {"/torch/utils/data/", "/paddle/io/", "/paddle/fluid/reader.py", "/paddle/fluid/dataloader/",
      "/tensorflow/python/data/", "/keras/src/trainers/data_adapters/",
      "/lightning/pytorch/loops/fetchers.py", "/pytorch_lightning/loops/fetchers.py"}},
};

// Searched in the innermost frame only: the standard library's waits.
constexpr Place kInnermost[] = {
    {"lock",
     {"/threading.py", "/queue.py", "/multiprocessing/synchronize.py", "/concurrent/futures/"}},
    {"io",
     {"/socket.py", "/ssl.py", "/selectors.py", "/subprocess.py", "/http/client.py",
      "/multiprocessing/connection.py", "/urllib3/", "/requests/"}},
};

// What a script's own line waits in when it calls into C directly.
struct Call {
  std::string_view waits_in;
  std::array<std::string_view, 8> words;
};
constexpr Call kCalls[] = {
    {"sleep", {"sleep("}},
    {"collective",
     {"all_reduce(", "allreduce(", "barrier(", "broadcast(", "all_gather(", "reduce_scatter("}},
    {"lock", {".acquire(", ".wait(", ".join(", "with lock", "with self.lock", "with self._lock"}},
    {"io",
     {".read(", ".readline(", ".write(", ".recv(", ".recv_into(", ".accept(", "open(", "input("}},
};

bool Contains(std::string_view s, std::string_view part) {
  return !part.empty() && s.find(part) != std::string_view::npos;
}

template <size_t N>
bool AnyIn(std::string_view s, const std::array<std::string_view, N>& parts) {
  return std::any_of(parts.begin(), parts.end(),
                     [&](std::string_view p) { return Contains(s, p); });
}

// The standard library or an installed package, not the user's script.
bool Library(std::string_view file) {
  return Contains(file, "/site-packages/") || Contains(file, "/dist-packages/") ||
         Contains(file, "/lib/python3") || file.starts_with("<");
}

// "torch/distributed/distributed_c10d.py" of an installed file; the script's whole path.
std::string_view ShortPath(std::string_view file) {
  for (std::string_view root : {"/site-packages/", "/dist-packages/"}) {
    size_t at = file.rfind(root);
    if (at != std::string_view::npos) return file.substr(at + root.size());
  }
  size_t lib = file.rfind("/lib/python3");
  if (lib != std::string_view::npos) {
    size_t slash = file.find('/', lib + 5);
    if (slash != std::string_view::npos) return file.substr(slash + 1);
  }
  return file;
}

std::string Named(const StackFrame& f) {
  return fmt::format("{} ({}:{})", f.function, ShortPath(f.file), f.line);
}

std::string Trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s.substr(0, 200));
}

// `  File "/job/train.py", line 12 in main` into `*f`.
bool ParseFrame(std::string_view line, StackFrame* f) {
  constexpr std::string_view kFile = "File \"";
  size_t start = line.find(kFile);
  if (start == std::string_view::npos) return false;
  start += kFile.size();
  size_t end = line.find("\", line ", start);
  if (end == std::string_view::npos) return false;
  f->file = std::string(line.substr(start, end - start));
  std::string_view rest = line.substr(end + 8);
  f->line = 0;
  size_t i = 0;
  for (; i < rest.size() && i < 9 && std::isdigit(static_cast<unsigned char>(rest[i])); ++i) {
    f->line = f->line * 10 + (rest[i] - '0');
  }
  rest.remove_prefix(i);
  f->function = rest.starts_with(" in ") ? Trimmed(rest.substr(4)) : std::string("?");
  return true;
}

const StackThread* MainThread(const std::vector<StackThread>& threads) {
  for (const StackThread& t : threads) {
    if (!t.frames.empty() && t.frames.back().function == "<module>") return &t;
  }
  for (const StackThread& t : threads) {
    if (t.current && !t.frames.empty()) return &t;
  }
  for (const StackThread& t : threads) {
    if (!t.frames.empty()) return &t;
  }
  return nullptr;
}

}  // namespace

std::vector<StackThread> ParseStacks(std::string_view text) {
  std::vector<StackThread> threads;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    if (line.starts_with("Thread 0x") || line.starts_with("Current thread 0x") ||
        line.starts_with("Stack (most recent call first)")) {
      threads.push_back(StackThread{.current = line.starts_with("Current thread")});
      continue;
    }
    StackFrame f;
    if (!threads.empty() && line.starts_with("  ") && ParseFrame(line, &f)) {
      threads.back().frames.push_back(std::move(f));
    }
  }
  return threads;
}

StackWait WhereItWaits(const std::vector<StackThread>& threads, const SourceLine& source_line) {
  StackWait w;
  w.threads = static_cast<int>(threads.size());
  const StackThread* main = MainThread(threads);
  if (main == nullptr) return w;
  const std::vector<StackFrame>& frames = main->frames;
  auto script = std::find_if(frames.begin(), frames.end(),
                             [](const StackFrame& f) { return !Library(f.file); });
  if (script != frames.end()) {
    w.at = fmt::format("{}:{} in {}", script->file, script->line, script->function);
    if (source_line) w.code = Trimmed(source_line(script->file, script->line));
  }
  for (const Place& place : kWholeStack) {
    auto f = std::find_if(frames.begin(), frames.end(),
                          [&](const StackFrame& x) { return AnyIn(x.file, place.paths); });
    if (f != frames.end()) {
      w.waits_in = place.waits_in;
      w.frame = Named(*f);
      return w;
    }
  }
  const StackFrame& inner = frames.front();
  w.frame = Named(inner);
  for (const Place& place : kInnermost) {
    if (AnyIn(inner.file, place.paths)) {
      w.waits_in = place.waits_in;
      return w;
    }
  }
  // The innermost frame calls into C: its line says what it called.
  bool inner_is_script = script == frames.begin();
  std::string called =
      inner_is_script || !source_line ? w.code : Trimmed(source_line(inner.file, inner.line));
  std::string lower(called);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const Call& call : kCalls) {
    if (AnyIn(lower, call.words)) {
      w.waits_in = call.waits_in;
      return w;
    }
  }
  w.waits_in = "running";
  return w;
}

}  // namespace tv
