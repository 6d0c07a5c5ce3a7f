// Training steps from the periodicity of a thread's launches, for recordings without step ranges
// (a plain PyTorch loop, JAX, a CUDA program): a training loop launches the same sequence of GPU
// work every step, so the sequence of launched kernel names repeats with the step's launch count.
//
// The period P: the smallest shift g at which the second half of the sequence (at most its last
// 32,768 launches) matches itself shifted by g (seq[i] == seq[i+g]) at 95 % of positions or more,
// with at least two whole periods in it. The phase: the position in the period with the longest host gap
// before its launch (mean over periods), where a loop synchronizes and fetches its next batch; a
// step begins at that launch. Deterministic; at most O(32,768 x 16,384) comparisons, most shifts given up early.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gpudoctor {

struct LaunchMark {
  int64_t start_ns = 0;  // the launch call on the host
  int64_t end_ns = 0;
  uint32_t key = 0;  // what it launched (the first kernel's name id)
};

struct PeriodicSteps {
  size_t period = 0;                // launches per step; 0 when no period was found
  double match = 0;                 // share of positions where seq[i] == seq[i + period]
  std::vector<int64_t> boundaries;  // step k spans [boundaries[k], boundaries[k+1]); size = steps + 1
  std::string why_none;             // why no steps, when period == 0
};

// Launches in start order on one thread.
PeriodicSteps findPeriodicSteps(const std::vector<LaunchMark>& launches);

}  // namespace gpudoctor
