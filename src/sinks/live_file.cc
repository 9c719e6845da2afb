#include "sinks/live_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "sinks/row_json.h"
#include "sinks/write_all.h"

namespace tv {

LiveFile::LiveFile(const std::string& dir, LiveIdentity identity)
    : path_(fmt::format("{}/{}.json", dir, identity.pid)),
      temp_path_(fmt::format("{}/.{}.json.tmp", dir, identity.pid)) {
  nlohmann::ordered_json head = {
      {"version", 1},
      {"pid", identity.pid},
      {"job_pid", identity.job_pid},
      {"mode", identity.mode},
      {"name", identity.name},
      {"command", identity.command},
      {"run_dir", identity.run_dir},
      {"start_t", identity.start_t},
      {"interval_s", identity.interval_s},
  };
  head_ = head.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  head_.pop_back();  // the closing brace: the live members follow
}

void LiveFile::OnRow(const Row& row) {
  std::string text = head_;
  text += ",\"health_score\":";
  if (row.health_score) {
    AppendJsonNumber(*row.health_score, false, &text);
  } else {
    text += "null";
  }
  text += ",\"findings\":[";
  bool first = true;
  for (const Row::Finding& f : row.findings) {
    if (!f.active) continue;
    fmt::format_to(std::back_inserter(text), "{}{{\"id\":\"{}\",\"severity\":\"{}\"}}",
                   first ? "" : ",", f.id, f.severity);
    first = false;
  }
  text += "],\"alerts\":[";
  first = true;
  for (const Row::Alert& a : row.alerts) {
    if (!a.firing) continue;
    text += first ? "{\"name\":" : ",{\"name\":";
    text += nlohmann::json(std::string(a.name))
                .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    fmt::format_to(std::back_inserter(text), ",\"severity\":\"{}\"", a.severity);
    if (a.gpu >= 0) fmt::format_to(std::back_inserter(text), ",\"gpu\":{}", a.gpu);
    text += '}';
    first = false;
  }
  text += "],\"row\":";
  AppendRowJson(row, &text);
  text += "}\n";
  int fd = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  bool ok = fd >= 0 && WriteAll(fd, text, "the session's file for top", &said_);
  if (fd >= 0) ::close(fd);
  if (ok && ::rename(temp_path_.c_str(), path_.c_str()) == 0) return;
  // A full runtime directory: top shows the last row that fitted; the run goes
  // on and is recorded as ever, and the next row tries again.
  ::unlink(temp_path_.c_str());
}

void LiveFile::OnClose() {
  ::unlink(path_.c_str());
  ::unlink(temp_path_.c_str());
}

}  // namespace tv
