#include "run/kubelet_pods.h"

#include <algorithm>

#include "core/sample.h"
#include "sinks/grpc_client.h"
#include "sinks/proto_wire.h"

namespace tv {
namespace {

// The fields of kubelet/pkg/apis/podresources/v1/api.proto that are read.
constexpr uint32_t kResponsePods = 1;      // ListPodResourcesResponse.pod_resources
constexpr uint32_t kPodName = 1;           // PodResources.name
constexpr uint32_t kPodNamespace = 2;      // PodResources.namespace
constexpr uint32_t kPodContainers = 3;     // PodResources.containers
constexpr uint32_t kContainerName = 1;     // ContainerResources.name
constexpr uint32_t kContainerDevices = 2;  // ContainerResources.devices
constexpr uint32_t kDevicesIds = 2;        // ContainerDevices.device_ids

bool ParseContainer(std::string_view bytes, PodContainer* c) {
  wire::Reader r(bytes);
  uint32_t field = 0;
  std::string_view value;
  while (r.Next(&field, &value)) {
    if (field == kContainerName) c->container = value;
    if (field != kContainerDevices) continue;
    wire::Reader devices(value);
    uint32_t f = 0;
    std::string_view id;
    while (devices.Next(&f, &id)) {
      if (f == kDevicesIds) c->devices.emplace_back(id);
    }
    if (devices.malformed()) return false;
  }
  return !r.malformed();
}

bool ParsePod(std::string_view bytes, std::vector<PodContainer>* out) {
  wire::Reader r(bytes);
  uint32_t field = 0;
  std::string_view value;
  std::string name;
  std::string ns;
  std::vector<PodContainer> containers;
  while (r.Next(&field, &value)) {
    if (field == kPodName) name = value;
    if (field == kPodNamespace) ns = value;
    if (field == kPodContainers && !ParseContainer(value, &containers.emplace_back())) return false;
  }
  if (r.malformed()) return false;
  if (containers.empty()) containers.emplace_back();  // a pod listed without its containers
  for (PodContainer& c : containers) {
    c.pod = name;
    c.namespace_name = ns;
    out->push_back(std::move(c));
  }
  return true;
}

// Every entry of `matches` in one pod: that pod, and the container when
// there is one entry.
std::optional<PodContainer> OnePod(const std::vector<const PodContainer*>& matches) {
  if (matches.empty()) return std::nullopt;
  for (const PodContainer* m : matches) {
    if (m->pod != matches[0]->pod || m->namespace_name != matches[0]->namespace_name) {
      return std::nullopt;
    }
  }
  PodContainer out = *matches[0];
  if (matches.size() > 1) out.container.clear();
  out.devices.clear();
  return out;
}

}  // namespace

std::optional<std::vector<PodContainer>> ParsePodResources(std::string_view message) {
  std::vector<PodContainer> out;
  wire::Reader r(message);
  uint32_t field = 0;
  std::string_view value;
  while (r.Next(&field, &value)) {
    if (field == kResponsePods && !ParsePod(value, &out)) return std::nullopt;
  }
  if (r.malformed()) return std::nullopt;
  return out;
}

std::optional<PodContainer> MatchPod(const JobIdentity& id,
                                     const std::vector<std::string>& gpu_uuids,
                                     const std::vector<PodContainer>& pods) {
  // A GPU shared by time-slicing is listed once for each replica
  // ("GPU-<uuid>::<n>"): each names the GPU.
  auto holds = [&](const PodContainer& c) {
    return std::any_of(c.devices.begin(), c.devices.end(), [&](const std::string& d) {
      std::string_view gpu = std::string_view(d).substr(0, d.find("::"));
      return std::find(gpu_uuids.begin(), gpu_uuids.end(), gpu) != gpu_uuids.end();
    });
  };
  std::vector<const PodContainer*> by_device;
  std::vector<const PodContainer*> by_both;
  std::vector<const PodContainer*> by_name;
  for (const PodContainer& c : pods) {
    bool device = holds(c);
    bool name = !id.pod.empty() && c.pod == id.pod;
    if (device) by_device.push_back(&c);
    if (device && name) by_both.push_back(&c);
    if (name) by_name.push_back(&c);
  }
  // The devices tell; where they are shared between pods, with the name.
  for (const auto* matches : {&by_device, &by_both, &by_name}) {
    if (std::optional<PodContainer> one = OnePod(*matches)) return one;
  }
  return std::nullopt;
}

void KubeletPodsSource::Ask(double mono_s, std::vector<Notice>* notices) {
  if (asked_s_ >= 0 && mono_s - asked_s_ < kAsk_s) return;
  asked_s_ = mono_s;
  GrpcReply reply = GrpcUnixCall({.socket_path = socket_path_,
                                  .method = "/v1.PodResourcesLister/List",
                                  .message = "",
                                  .timeout_s = kTimeout_s});
  std::string error = reply.error;
  if (reply.status == 0) {
    if (auto pods = ParsePodResources(reply.message)) {
      pods_ = std::move(*pods);
      said_.clear();
      return;
    }
    error = "its answer is not a ListPodResourcesResponse";
  } else if (reply.status > 0) {
    error = "it answered gRPC status " + std::to_string(reply.status) +
            (error.empty() ? "" : ": " + error);
  }
  if (error == said_) return;
  said_ = error;
  notices->push_back({"kubelet", "cannot list the pods from the kubelet (" + socket_path_ +
                                     "): " + error +
                                     "; Kubernetes jobs keep their pod UID without their names"});
}

void KubeletPodsSource::Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) {
  std::map<std::string, Named> kept;
  for (NodeJob& job : out->node_jobs) {
    if (job.identity->kind != "kubernetes") continue;
    std::string key = JobKey(*job.identity);
    if (auto it = named_.find(key); it != named_.end() && it->second.from == job.identity) {
      job.identity = it->second.named;
      kept.insert(named_.extract(it));
      continue;
    }
    std::vector<std::string> uuids;
    for (const JobGpuShare& share : job.gpus) {
      if (share.gpu < out->gpus.size()) uuids.emplace_back(out->gpus[share.gpu].uuid);
    }
    std::optional<PodContainer> match = MatchPod(*job.identity, uuids, pods_);
    if (!match) {
      Ask(tick.mono_s, notices);
      match = MatchPod(*job.identity, uuids, pods_);
    }
    if (!match) continue;
    auto named = std::make_shared<JobIdentity>(*job.identity);
    named->pod = match->pod;
    named->namespace_name = match->namespace_name;
    if (!match->container.empty()) named->container = match->container;
    kept[key] = Named{job.identity, named};
    job.identity = std::move(named);
  }
  named_ = std::move(kept);
}

}  // namespace tv
