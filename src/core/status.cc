#include "core/status.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace tv {

Status ErrnoStatus(std::string_view context, int err) {
  std::string msg = fmt::format("{}: {}", context, std::strerror(err));
  switch (err) {
    case ENOENT:
    case ESRCH:
      return Status::NotFound(std::move(msg));
    case EACCES:
    case EPERM:
      return Status::PermissionDenied(std::move(msg));
    case EINVAL:
      return Status::Invalid(std::move(msg));
    default:
      return Status::IoError(std::move(msg));
  }
}

}  // namespace tv
