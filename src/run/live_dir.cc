#include "run/live_dir.h"

#include <fmt/format.h>
#include <unistd.h>

#include "core/private_path.h"

namespace tv {
namespace {

// `path` as a directory private to this user, made (mode 0700) when `create`.
bool Private(const std::string& path, bool create, std::string* error) {
  Status s = PrivateDir(path, create);
  if (!s.ok()) *error = s.message();
  return s.ok();
}

}  // namespace

std::string LiveSessionsDir(bool create, std::string* error) {
  // Each session replaces its file at every row: in memory where there is one.
  std::string base = MemoryRuntimeDir();
  if (base.empty()) base = fmt::format("/tmp/trainvitals-{}", ::getuid());
  std::string dir = base + "/sessions";
  if (!Private(base, create, error) || !Private(dir, create, error)) return "";
  return dir;
}

}  // namespace tv
