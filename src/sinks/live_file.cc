#include "sinks/live_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "sinks/row_json.h"
#include "sinks/write_all.h"

namespace tv {

LiveFile::LiveFile(const std::string& dir, const LiveIdentity& identity)
    : path_(fmt::format("{}/{}.json", dir, identity.pid)),
      temp_path_(fmt::format("{}/.{}.json.tmp", dir, identity.pid)),
      head_(LiveHeadText(identity)) {}

void LiveFile::OnRow(const Row& row) {
  std::string text = head_;
  AppendLiveState(row, &text);
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
