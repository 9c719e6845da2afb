// Threads of the monitor: each has a name that `top -H` and
// /proc/<pid>/task/*/comm show (tv-sampler, tv-sinks, tv-http, tv-push, ...),
// and an entry point that no exception leaves: a fault ends that thread only,
// is said once on stderr, and the rest of the monitor and the training go on.
//
// Thread safety: free functions, safe from any thread.
#pragma once

#include <functional>
#include <string>
#include <thread>

namespace tv {

// Names the calling thread (at most 15 characters are kept).
void NameThisThread(const char* name);

// Runs `body`, catching everything; on a fault says on stderr
// "trainvitals: <name> failed: <why>; <consequence>" and returns false.
bool RunGuarded(const char* name, const std::string& consequence,
                const std::function<void()>& body);

// A thread named `name` running `body` through RunGuarded.
std::thread StartThread(const char* name, std::string consequence, std::function<void()> body);

// The text of the exception being handled (inside a catch block).
std::string CurrentExceptionText();

}  // namespace tv
