// CUDA_VISIBLE_DEVICES, resolved the way the CUDA runtime reads it, so that a
// GPU is numbered as the training framework numbers it (cuda:N). Pure: the
// devices come in as identities, nothing is read from the machine.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tv {

// One GPU as the vendor library lists it, with its MIG slices.
struct GpuIdentity {
  std::string uuid;  // "GPU-8f3c..."
  struct Mig {
    std::string uuid;  // "MIG-..."
    int gpu_instance = -1;
  };
  std::vector<Mig> migs;
};

// A device the framework sees, in its order: cuda_index N is cuda:N.
struct VisibleDevice {
  int cuda_index = 0;
  int physical_index = 0;  // index into the identities
  int mig_instance = -1;   // a MIG slice's GPU instance id, or -1 for the whole GPU
};

// Resolves `cvd` (nullopt: the variable is unset, every GPU visible in the
// library's order, which is PCI bus order) against `gpus`. Entries are ordinals,
// GPU-UUIDs, MIG-UUIDs (unique prefixes of either allowed) or the older
// MIG-GPU-<uuid>/<gi>/<ci>. As in CUDA, an entry that matches nothing, matches
// twice, or repeats an earlier one ends the list: what follows is ignored.
std::vector<VisibleDevice> ResolveVisibleDevices(std::optional<std::string_view> cvd,
                                                 const std::vector<GpuIdentity>& gpus);

}  // namespace tv
