// KubeletPodsSource: `serve` names each Kubernetes job (a pod, found by the
// UID in its cgroup path) with its namespace, pod and container names, as the
// kubelet's pod-resources API (v1.PodResourcesLister/List, gRPC on
// /var/lib/kubelet/pod-resources/kubelet.sock) lists them. That API gives no
// pod UID: a job is matched to the container that was given the GPUs it uses
// or was given (device plugins name NVIDIA GPUs by their UUIDs, as the driver
// does), else to the pod its host name names (a pod's host name is its name)
// when one namespace holds a pod of that name.
//
// The kubelet is asked when a Kubernetes job has no name yet, at most every
// kAsk_s, each time for at most kTimeout_s, on the sampler thread. A job left
// unnamed keeps its UID as its `job` label; what went wrong is said once.
//
// Thread safety: a Source, on the sampler thread; placed after NodeJobsSource,
// whose jobs it names.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/job_identity.h"
#include "core/source.h"

namespace tv {

// One container of the kubelet's answer.
struct PodContainer {
  std::string pod;
  std::string namespace_name;
  std::string container;
  std::vector<std::string> devices;  // the ids its device plugins gave it
};

// The containers of a ListPodResourcesResponse; nullopt when it is malformed.
std::optional<std::vector<PodContainer>> ParsePodResources(std::string_view message);

// The container `id` is: the one holding any of `gpu_uuids` (every match in
// one pod), else the pod `id.pod` names in one namespace (its container when
// it has one); nullopt when neither tells. The result's `container` is empty
// when the pod is known and its container is not.
std::optional<PodContainer> MatchPod(const JobIdentity& id,
                                     const std::vector<std::string>& gpu_uuids,
                                     const std::vector<PodContainer>& pods);

class KubeletPodsSource final : public Source {
 public:
  static constexpr const char* kSocket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  static constexpr double kAsk_s = 10;
  static constexpr double kTimeout_s = 1;

  explicit KubeletPodsSource(std::string socket_path = kSocket)
      : socket_path_(std::move(socket_path)) {}
  std::string_view name() const override { return "kubelet"; }
  void Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) override;

 private:
  struct Named {
    std::shared_ptr<const JobIdentity> from;   // the identity it was made from
    std::shared_ptr<const JobIdentity> named;  // with the names
  };
  // Asks the kubelet again when kAsk_s have passed since the last time.
  void Ask(double mono_s, std::vector<Notice>* notices);

  std::string socket_path_;
  std::vector<PodContainer> pods_;
  double asked_s_ = -1;
  std::string said_;  // the last failure said
  std::map<std::string, Named> named_;
};

}  // namespace tv
