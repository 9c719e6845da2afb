#include "sources/proc_pid_parse.h"

#include <charconv>
#include <limits>

namespace tv {

std::string ProcPidFile(int pid, std::string_view file) {
  std::string p = pid > 0 ? "/proc/" + std::to_string(pid) : std::string("/proc/self");
  p += '/';
  p += file;
  return p;
}
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Takes the next blank-separated token off the front of *rest; empty at the end.
std::string_view NextToken(std::string_view* rest) {
  size_t i = 0;
  while (i < rest->size() && IsBlank((*rest)[i])) ++i;
  size_t j = i;
  while (j < rest->size() && !IsBlank((*rest)[j])) ++j;
  std::string_view token = rest->substr(i, j - i);
  rest->remove_prefix(j);
  return token;
}

// The whole token must be the number; "12abc", "" and overflow fail.
template <typename T>
bool ToNumber(std::string_view token, T* out) {
  if (token.empty()) return false;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), *out);
  return ec == std::errc() && end == token.data() + token.size();
}

// Value of a "Key:   123 kB" line; the key must match exactly.
std::optional<uint64_t> KeyedValue(std::string_view text, std::string_view key) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.size() <= key.size() || line.compare(0, key.size(), key) != 0 ||
        line[key.size()] != ':') {
      continue;
    }
    std::string_view rest = line.substr(key.size() + 1);
    uint64_t value = 0;
    if (ToNumber(NextToken(&rest), &value)) return value;
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<uint64_t> KibToBytes(std::optional<uint64_t> kib) {
  if (!kib || *kib > std::numeric_limits<uint64_t>::max() / 1024) return std::nullopt;
  return *kib * 1024;
}

}  // namespace

std::optional<ProcStat> ParseProcStat(std::string_view text) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  ProcStat st;
  std::string_view head = text.substr(0, open);
  if (!ToNumber(NextToken(&head), &st.pid)) return std::nullopt;
  st.comm.assign(text.substr(open + 1, close - open - 1));

  // Fields after the comm, numbered as in proc(5): state is field 3. Field 25
  // (rsslim) must follow rss, so a line cut inside rss is not taken for a value.
  std::string_view rest = text.substr(close + 1);
  std::string_view state = NextToken(&rest);
  if (state.size() != 1) return std::nullopt;
  st.state = state[0];
  for (int field = 4; field <= 25; ++field) {
    std::string_view token = NextToken(&rest);
    bool ok = true;
    switch (field) {
      case 4:
        ok = ToNumber(token, &st.ppid);
        break;
      case 5:
        ok = ToNumber(token, &st.pgrp);
        break;
      case 6:
        ok = ToNumber(token, &st.session);
        break;
      case 14:
        ok = ToNumber(token, &st.utime_ticks);
        break;
      case 15:
        ok = ToNumber(token, &st.stime_ticks);
        break;
      case 16:
      case 17: {
        uint64_t v = 0;
        ok = ToNumber(token, &v);
        st.children_ticks += v;
        break;
      }
      case 20:
        ok = ToNumber(token, &st.num_threads);
        break;
      case 22:
        ok = ToNumber(token, &st.starttime_ticks);
        break;
      case 24:
        ok = ToNumber(token, &st.rss_pages);
        break;
      default:
        ok = !token.empty();
        break;
    }
    if (!ok) return std::nullopt;
  }
  if (!ToNumber(NextToken(&rest), &st.start_code)) st.start_code = 0;
  return st;
}

void AppendChildPids(std::string_view text, std::vector<int>* pids) {
  for (;;) {
    std::string_view token = NextToken(&text);
    if (token.empty()) return;
    int pid = 0;
    if (ToNumber(token, &pid) && pid > 0) pids->push_back(pid);
  }
}

ProcIo ParseProcIo(std::string_view text) {
  return ProcIo{KeyedValue(text, "read_bytes"), KeyedValue(text, "write_bytes")};
}

SmapsRollup ParseSmapsRollup(std::string_view text) {
  SmapsRollup out{KibToBytes(KeyedValue(text, "Pss")), KibToBytes(KeyedValue(text, "Rss"))};
  if (auto anon = KibToBytes(KeyedValue(text, "Pss_Anon"))) {
    out.pss_anon_bytes = *anon + KibToBytes(KeyedValue(text, "Pss_Shmem")).value_or(0);
  }
  return out;
}

std::vector<int> ParseNsPids(std::string_view status_text) {
  std::vector<int> pids;
  constexpr std::string_view kKey = "NSpid:";
  size_t pos = 0;
  if (!status_text.starts_with(kKey)) {
    pos = status_text.find("\nNSpid:");
    if (pos == std::string_view::npos) return pids;
    ++pos;
  }
  size_t eol = status_text.find('\n', pos);
  if (eol == std::string_view::npos) eol = status_text.size();
  std::string_view rest = status_text.substr(pos + kKey.size(), eol - pos - kKey.size());
  for (;;) {
    std::string_view token = NextToken(&rest);
    if (token.empty()) break;
    int pid = 0;
    if (!ToNumber(token, &pid) || pid <= 0) return {};
    pids.push_back(pid);
  }
  return pids;
}

std::string FormatCmdline(std::string_view raw, size_t max_chars) {
  while (!raw.empty() && (raw.back() == '\0' || raw.back() == ' ')) raw.remove_suffix(1);
  if (raw.size() > max_chars) raw = raw.substr(0, max_chars);
  std::string line(raw);
  for (char& c : line) {
    if (c == '\0' || c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return line;
}

}  // namespace tv
