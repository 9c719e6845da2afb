// The floor under any 10 Hz monitor on this machine: a thread that wakes ten
// times a second and preads N small /proc files, nothing else. Its CPU share
// (from schedstat, like bench/overhead.py measures trainvitals) is what the
// kernel and the machine charge before a line of our code runs.
//
//   build/release/bench_wake_floor 20 30    # 20 files a tick, for 30 s
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  int files = argc > 1 ? std::atoi(argv[1]) : 20;
  int seconds = argc > 2 ? std::atoi(argv[2]) : 30;
  std::vector<int> fds;
  for (int i = 0; i < files; ++i) fds.push_back(::open("/proc/self/stat", O_RDONLY | O_CLOEXEC));
  char buf[4096];
  auto start = std::chrono::steady_clock::now();
  int ticks = seconds * 10;
  for (int k = 1; k <= ticks; ++k) {
    std::this_thread::sleep_until(start + std::chrono::milliseconds(100 * k));
    for (int fd : fds) (void)!::pread(fd, buf, sizeof(buf), 0);
  }
  long long ns = 0;
  if (FILE* f = std::fopen("/proc/thread-self/schedstat", "r")) {
    if (std::fscanf(f, "%lld", &ns) != 1) ns = 0;
    std::fclose(f);
  }
  std::printf("floor: wake at 10 Hz + %d preads a tick = %.3f%% of one core (%.1f us a tick)\n",
              files, static_cast<double>(ns) / (seconds * 1e9) * 100,
              static_cast<double>(ns) / ticks / 1000);
}
