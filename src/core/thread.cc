#include "core/thread.h"

#include <fmt/format.h>
#include <pthread.h>

#include <cstdio>
#include <exception>

namespace tv {

void NameThisThread(const char* name) {
  char short_name[16];
  std::snprintf(short_name, sizeof(short_name), "%s", name);
  ::pthread_setname_np(::pthread_self(), short_name);
}

std::string CurrentExceptionText() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an unknown exception";
  }
}

bool RunGuarded(const char* name, const std::string& consequence,
                const std::function<void()>& body) {
  try {
    body();
    return true;
  } catch (...) {
    std::string why = CurrentExceptionText();
    try {
      fmt::print(stderr, "trainvitals: {} failed: {}; {} (the training goes on)\n", name, why,
                 consequence);
    } catch (...) {
    }
    return false;
  }
}

std::thread StartThread(const char* name, std::string consequence, std::function<void()> body) {
  return std::thread([name, consequence = std::move(consequence), body = std::move(body)] {
    NameThisThread(name);
    RunGuarded(name, consequence, body);
  });
}

}  // namespace tv
