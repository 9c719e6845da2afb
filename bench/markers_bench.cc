// The marker client on the training thread: a step (shared-memory slot stores)
// and a rare event (one datagram), against a real endpoint.
#include <benchmark/benchmark.h>

#include <string>

#include "markers/client.h"
#include "markers/endpoint.h"

namespace tv {
namespace {

void BM_MarkerStep(benchmark::State& state) {
  std::string error;
  auto endpoint = MarkerEndpoint::Create(1.0, &error);
  MarkerClient client(endpoint->socket_path(), -1, "bench");
  int64_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(client.Step(i++));
}
BENCHMARK(BM_MarkerStep);

// One step's data-wait timing: WaitBegin() and WaitEnd(), two vDSO clock reads.
void BM_MarkerWaitPair(benchmark::State& state) {
  std::string error;
  auto endpoint = MarkerEndpoint::Create(1.0, &error);
  MarkerClient client(endpoint->socket_path(), -1, "bench");
  for (auto _ : state) {
    client.WaitBegin();
    client.WaitEnd();
  }
  benchmark::DoNotOptimize(client.wait_ns());
}
BENCHMARK(BM_MarkerWaitPair);

void BM_MarkerEpochPair(benchmark::State& state) {
  std::string error;
  auto endpoint = MarkerEndpoint::Create(1.0, &error);
  MarkerClient client(endpoint->socket_path(), -1, "bench");
  std::string sink;
  int64_t epoch = 0;
  for (auto _ : state) {
    client.EpochBegin(epoch);
    client.EpochEnd(epoch++);
    state.PauseTiming();
    while (endpoint->Receive(&sink)) {
    }
    state.ResumeTiming();
  }
  state.counters["dropped"] = static_cast<double>(client.dropped());
}
BENCHMARK(BM_MarkerEpochPair);

}  // namespace
}  // namespace tv
