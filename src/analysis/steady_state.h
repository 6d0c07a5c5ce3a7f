// The period of a training loop that repeats its traced steps, as users run it: nothing
// synchronizes each step, so the host runs ahead of the GPU until something blocks it, and the GPU's
// backlog carries from step to step. In steady state a step takes as long as the slowest of: the
// host's own period (its work and every wait it really makes), the GPU's period (the time its work
// for a step takes when it never waits for the host) and the busiest stream's work per step (a stream cannot
// finish a step's work faster than that work takes). The breakdown, the what-if and the plan all
// use this one definition of a step.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

namespace gpudoctor {

// One step, on one rank or averaged over ranks.
struct StepTiming {
  double host_ns = 0;  // the host's step: its range from one step's start to the next's
  // The GPU's own time for the step's work on its busiest stream: the work and the gaps before it that
  // the GPU made (the work launched already: waits for other streams, the GPU's own spacing), not the
  // gaps in which it waited for the host; < 0: unknown (no GPU work).
  double gpu_period_ns = -1;
  double busy_ns = 0;  // the busiest stream's work launched by this step (collectives left out: their
                       // time holds the wait for the other ranks)
  // ... that stream's work by kind: compute, communication, copies (they add up to busy_ns).
  std::array<double, 3> busy_parts{};
};

// What sets the period.
enum class StepBound : uint8_t { kHost, kGpuPeriod, kGpuBusy, kLoader };

struct SteadyState {
  // The host's step: the median over steps; the GPU's period and busy time: means over steps (its
  // work is throughput). gpu_period_ns: 0 when unknown.
  double host_ns = 0, gpu_period_ns = 0, busy_ns = 0;
  double loader_ns = 0;  // the loader pool's period per step (0: not modeled)
  double period_ns = 0;  // the largest of these
  StepBound bound = StepBound::kHost;
  std::array<double, 3> busy_parts{};  // the parts of the step nearest the mean busy time, as in StepTiming
};

// The middle of `v` by value: one element, or the mean of the two middle ones; 0 when empty.
double medianOf(std::vector<double> v);
// The mean of `v`; 0 when empty.
double meanOf(const std::vector<double>& v);

// The steady-state period from per-step timings: the host's median step (so one stalled step does
// not set it; two middle ones averaged), the GPU's mean period and mean busy time (a loop cannot run
// faster than its mean work per step), then the largest. Empty input: all 0.
// loader_period_ns > 0: the DataLoader's workers deliver a batch that often, a floor of its own.
SteadyState steadyState(const std::vector<StepTiming>& steps, double loader_period_ns = 0);

}  // namespace gpudoctor
