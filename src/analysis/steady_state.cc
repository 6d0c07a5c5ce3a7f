#include "analysis/steady_state.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace gpudoctor {

double medianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double meanOf(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}

SteadyState steadyState(const std::vector<StepTiming>& steps, double loader_period_ns) {
  SteadyState s;
  if (steps.empty()) return s;
  std::vector<double> host, gpu, busy;
  for (const StepTiming& t : steps) {
    host.push_back(t.host_ns);
    busy.push_back(t.busy_ns);
    if (t.gpu_period_ns >= 0) gpu.push_back(t.gpu_period_ns);
  }
  s.host_ns = medianOf(std::move(host));
  // The GPU's figures are throughput: over many steps the loop cannot run faster than its mean work
  // per step, however that work varies (an MoE's routing, a detection model's proposals).
  s.gpu_period_ns = meanOf(gpu);
  s.busy_ns = meanOf(busy);
  // The parts of the step whose busy time is nearest the mean (a real step's mix, not a blend).
  const StepTiming* near = &steps.front();
  for (const StepTiming& t : steps)
    if (std::abs(t.busy_ns - s.busy_ns) < std::abs(near->busy_ns - s.busy_ns)) near = &t;
  const double scale = near->busy_ns > 0 ? s.busy_ns / near->busy_ns : 0;
  for (size_t k = 0; k < 3; ++k) s.busy_parts[k] = near->busy_parts[k] * scale;
  s.period_ns = s.host_ns;
  if (s.gpu_period_ns > s.period_ns) s.period_ns = s.gpu_period_ns, s.bound = StepBound::kGpuPeriod;
  if (s.busy_ns > s.period_ns) s.period_ns = s.busy_ns, s.bound = StepBound::kGpuBusy;
  s.loader_ns = loader_period_ns;
  if (loader_period_ns > s.period_ns) s.period_ns = loader_period_ns, s.bound = StepBound::kLoader;
  return s;
}

}  // namespace gpudoctor
