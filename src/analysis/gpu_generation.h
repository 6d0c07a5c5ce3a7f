// The GPU generation (CUDA compute capability major) of a rank: from the trace's deviceProperties,
// else inferred from the architecture that cuBLAS/cuDNN/CUTLASS kernel names carry (volta_sgemm_*,
// cudnn_turing_*, ampere_sgemm_*, sm80_xmma_*, sm90_xmma_*, fmhaSm100aKernel_*). Older traces and
// some tools' exports have no deviceProperties; the advice (bf16 / TF32 or fp16 + GradScaler) depends
// on the generation.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "model/trace.h"

namespace gpudoctor {

// The compute capability major a kernel name proves its GPU has at least, or -1 when the name
// names no architecture. A library ships kernels of older architectures and runs them on newer GPUs
// (volta_sgemm_* on a Turing GPU, sm80_* on Hopper), so a name is a lower bound.
inline int computeMajorFromKernelName(std::string_view name) {
  auto lower = [&](size_t i) { return static_cast<char>(std::tolower(static_cast<unsigned char>(name[i]))); };
  // A token starts the name, follows a non-alphanumeric character, or starts a camelCase word (fmhaSm100a).
  auto starts_token = [&](size_t i) {
    if (i == 0) return true;
    const unsigned char prev = static_cast<unsigned char>(name[i - 1]);
    return !std::isalnum(prev) || (std::islower(prev) && std::isupper(static_cast<unsigned char>(name[i])));
  };
  auto word_at = [&](size_t i, std::string_view w) {
    if (i + w.size() > name.size()) return false;
    for (size_t k = 0; k < w.size(); ++k)
      if (lower(i + k) != w[k]) return false;
    return true;
  };
  int best = -1;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!starts_token(i)) continue;
    for (auto [word, major] : {std::pair<std::string_view, int>{"maxwell_", 5},
                               {"volta_", 7},
                               {"turing_", 7},
                               {"ampere_", 8},
                               {"hopper_", 9},
                               {"blackwell_", 10}})
      if (word_at(i, word)) best = std::max(best, major);
    // sm70, sm75, sm80, sm86, sm90, sm90a, sm100, sm120 (also sm_80): two or three digits, then no digit.
    if (!word_at(i, "sm")) continue;
    size_t j = i + 2;
    if (j < name.size() && name[j] == '_') ++j;
    size_t digits = 0;
    while (j + digits < name.size() && std::isdigit(static_cast<unsigned char>(name[j + digits]))) ++digits;
    if (digits < 2 || digits > 3) continue;
    const int sm = std::stoi(std::string(name.substr(j, digits)));
    if (sm >= 50 && sm < 200) best = std::max(best, sm / 10);
  }
  return best;
}

struct GpuGeneration {
  int compute_major = -1;  // -1: unknown
  // Where an inferred generation came from ("inferred from kernel names: ..."); empty when the trace's
  // deviceProperties say it.
  std::string note;
};

// The first device's compute capability major; without one, the newest architecture the rank's
// kernel names prove (a lower bound: a GPU running only volta_* kernels is taken as pre-Ampere).
inline GpuGeneration gpuGenerationOf(const RankTrace& t) {
  if (!t.devices.empty() && t.devices.front().compute_major > 0) return {t.devices.front().compute_major, ""};
  GpuGeneration g;
  std::vector<int8_t> seen(t.strings.size(), 0);
  std::string_view proof;
  for (const Event& e : t.events) {
    if (e.kind != EventKind::kKernel || e.name >= seen.size() || seen[e.name]) continue;
    seen[e.name] = 1;
    const std::string_view name = t.strings.view(e.name);
    const int major = computeMajorFromKernelName(name);
    if (major > g.compute_major) g.compute_major = major, proof = name;
  }
  if (g.compute_major > 0)
    g.note = fmt::format("GPU generation sm{}x inferred from kernel names ({}); the trace has no deviceProperties",
                         g.compute_major, proof.substr(0, 60));
  return g;
}

}  // namespace gpudoctor
