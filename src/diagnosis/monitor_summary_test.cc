// A recording's summary on hand-made samples whose tallies are known.
#include "diagnosis/monitor_summary.h"

#include <gtest/gtest.h>

namespace gpudoctor {
namespace monitor_summary_test {
MonitorSample at(double util, double iowait, double cpu, bool lost = false, double interval = 1) {
  MonitorSample s;
  s.interval_s = interval;
  s.host.cpu_util = cpu;
  s.host.iowait = iowait;
  GpuMetrics g;
  g.name = "H200";
  g.util_gpu = lost ? -1 : util;
  g.memory_total_bytes = 100;
  g.memory_used_bytes = 96;
  g.power_w = 500;
  g.pids = {1};
  if (lost) g.lost = "fell off the bus";
  s.gpus.push_back(g);
  return s;
}

TEST(MonitorSummary, TalliesTimeAgainstEachThreshold) {
  // 2 s busy, 3 s starved by IO wait, 1 s CPU-bound (0.5 s samples x2), then 2 s lost.
  std::vector<MonitorSample> v = {at(0.95, 0.01, 0.3),           at(0.97, 0.02, 0.3),
                                  at(0.2, 0.3, 0.5, false, 3),   at(0.4, 0.0, 0.9, false, 0.5),
                                  at(0.4, 0.0, 0.9, false, 0.5), at(0, 0, 0.1, true, 2)};
  auto m = summarizeMonitor(v, Thresholds::defaults());
  EXPECT_EQ(m.samples, 6u);
  EXPECT_DOUBLE_EQ(m.seconds, 8);
  EXPECT_DOUBLE_EQ(m.iowait_above_s, 3);
  EXPECT_DOUBLE_EQ(m.cpu_above_s, 1);
  ASSERT_EQ(m.gpus.size(), 1u);
  const GpuSummary& g = m.gpus[0];
  EXPECT_DOUBLE_EQ(g.seconds, 6);
  EXPECT_DOUBLE_EQ(g.lost_s, 2);
  EXPECT_DOUBLE_EQ(g.util_below_s, 4);
  EXPECT_DOUBLE_EQ(g.util_mean, (0.95 + 0.97 + 0.2 * 3 + 0.4 * 0.5 * 2) / 6);
  EXPECT_DOUBLE_EQ(g.memory_peak, 0.96);
  EXPECT_DOUBLE_EQ(g.memory_above_s, 6);  // 96 % > 95 %
  EXPECT_DOUBLE_EQ(g.bottleneck_s.at("compute"), 2);
  EXPECT_DOUBLE_EQ(g.bottleneck_s.at("input"), 3);
  EXPECT_DOUBLE_EQ(g.bottleneck_s.at("host-cpu"), 1);
  EXPECT_DOUBLE_EQ(g.bottleneck_s.at("lost"), 2);
  EXPECT_EQ(g.dominant, "input");
  EXPECT_DOUBLE_EQ(g.power_mean_w, 500);
}

}  // namespace monitor_summary_test
}  // namespace gpudoctor
