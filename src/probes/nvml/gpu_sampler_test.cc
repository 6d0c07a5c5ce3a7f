// The monitor's GPU readings through a scripted fake NVML: every figure asserted exactly, NVLink
// rates from counters at fixed times, XID events, a GPU that falls off the bus mid-run, an old
// driver with only the older symbols, and no NVML at all.
#include "probes/nvml/gpu_sampler.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace gpudoctor {
namespace gpu_sampler_test {
std::string src(const std::string& rel) { return std::string(GPUDOCTOR_SOURCE_DIR) + "/" + rel; }

TEST(GpuSampler, ReadsEveryFigureAndLosesAGpuMidRun) {
  setenv("GPUDOCTOR_FAKE_NVML", src("testdata/fake_nvml/monitor_2gpu.txt").c_str(), 1);
  auto s = GpuSampler::open(GPUDOCTOR_FAKE_NVML);
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto r1 = s.value()->sample(1'000'000'000);
  ASSERT_EQ(r1.size(), 2u);
  const GpuMetrics& g = r1[0];
  EXPECT_EQ(g.name, "NVIDIA H200");
  EXPECT_EQ(g.uuid, "GPU-00000000-aaaa");
  EXPECT_EQ(g.pci_bus_id, "00000000:03:00.0");
  EXPECT_DOUBLE_EQ(g.util_gpu, 0.97);
  EXPECT_DOUBLE_EQ(g.util_memory, 0.61);
  EXPECT_EQ(g.memory_used_bytes, 100000ull << 20);
  EXPECT_EQ(g.memory_total_bytes, 143771ull << 20);
  EXPECT_DOUBLE_EQ(g.sm_clock_mhz, 1980);
  EXPECT_DOUBLE_EQ(g.memory_clock_mhz, 3201);
  EXPECT_DOUBLE_EQ(g.power_w, 612.345);
  EXPECT_DOUBLE_EQ(g.power_limit_w, 700);
  EXPECT_DOUBLE_EQ(g.temperature_c, 51);
  EXPECT_DOUBLE_EQ(g.energy_j, 987654.321);
  EXPECT_DOUBLE_EQ(g.pcie_tx_bytes_per_s, 1000 * 1024.0);
  EXPECT_DOUBLE_EQ(g.pcie_rx_bytes_per_s, 2000 * 1024.0);
  EXPECT_EQ(g.throttle_reasons, 0x4u);
  EXPECT_EQ(g.ecc_uncorrected, 0);
  EXPECT_EQ(g.pids, (std::vector<int>{4242, 4243}));
  EXPECT_EQ(g.xid_events, 1);
  EXPECT_DOUBLE_EQ(g.nvlink_tx_bytes_per_s, -1);  // first reading: no rate yet
  EXPECT_EQ(r1[1].ecc_uncorrected, 2);
  EXPECT_TRUE(r1[1].lost.empty());
  // Half a second later: 1 GiB TX and 512 MiB RX more through NVLink.
  auto r2 = s.value()->sample(1'500'000'000);
  EXPECT_DOUBLE_EQ(r2[0].nvlink_tx_bytes_per_s, 1048576.0 * 1024 / 0.5);
  EXPECT_DOUBLE_EQ(r2[0].nvlink_rx_bytes_per_s, 524288.0 * 1024 / 0.5);
  EXPECT_DOUBLE_EQ(r2[1].pcie_tx_bytes_per_s, 0);
  EXPECT_EQ(r2[0].xid_events, 1);  // counted once
  EXPECT_TRUE(r2[1].lost.empty());
  // GPU 1 falls off the bus at its third reading; GPU 0 carries on.
  auto r3 = s.value()->sample(2'000'000'000);
  ASSERT_EQ(r3.size(), 2u);
  EXPECT_FALSE(r3[1].lost.empty());
  EXPECT_DOUBLE_EQ(r3[1].pcie_rx_bytes_per_s, -1);  // not asked of a lost GPU
  EXPECT_DOUBLE_EQ(r3[1].util_gpu, -1);
  EXPECT_DOUBLE_EQ(r3[0].util_gpu, 0.97);
  auto r4 = s.value()->sample(2'500'000'000);
  EXPECT_FALSE(r4[1].lost.empty());  // stays lost
  // The energy counter (costly to read) is read again only kEnergyEveryNs after the last reading.
  EXPECT_DOUBLE_EQ(r4[0].energy_j, 987654.321);
  auto r5 = s.value()->sample(1'000'000'000 + GpuSampler::kEnergyEveryNs);
  EXPECT_DOUBLE_EQ(r5[0].energy_j, 987655.321);
}

TEST(GpuSampler, OldDriverWithOnlyOlderSymbols) {
  setenv("GPUDOCTOR_FAKE_NVML", src("testdata/fake_nvml/monitor_2gpu.txt").c_str(), 1);
  auto s = GpuSampler::open(GPUDOCTOR_FAKE_NVML_OLD);
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto r = s.value()->sample(1);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].memory_used_bytes, 100000ull << 20);    // through nvmlDeviceGetMemoryInfo (v1)
  EXPECT_EQ(r[0].pids, (std::vector<int>{4242, 4243}));  // through ..._ComputeRunningProcesses (v1)
  EXPECT_EQ(r[0].throttle_reasons, 0x4u);                // ClocksThrottleReasons
  EXPECT_DOUBLE_EQ(r[0].energy_j, -1);                   // not in this driver: not available
  EXPECT_DOUBLE_EQ(r[0].pcie_tx_bytes_per_s, 1000 * 1024.0);
}

// A driver that answers NVLink counters only per link: the sampler sums the 18 links.
TEST(GpuSampler, NvLinkCountersPerLinkAreSummed) {
  setenv("GPUDOCTOR_FAKE_NVML", src("testdata/fake_nvml/monitor_perlink.txt").c_str(), 1);
  auto s = GpuSampler::open(GPUDOCTOR_FAKE_NVML);
  ASSERT_TRUE(s.ok()) << s.error().message;
  s.value()->sample(1'000'000'000);
  auto r = s.value()->sample(3'000'000'000);
  EXPECT_DOUBLE_EQ(r[0].nvlink_tx_bytes_per_s, 18 * (1800 / 18) * 1024.0 / 2);
  EXPECT_DOUBLE_EQ(r[0].nvlink_rx_bytes_per_s, 18 * (900 / 18) * 1024.0 / 2);
  EXPECT_DOUBLE_EQ(r[1].nvlink_tx_bytes_per_s, -1);  // no metrics for GPU 1: not available
}

TEST(GpuSampler, NoNvmlIsOneClearError) {
  auto s = GpuSampler::open("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("cannot load NVML"), std::string::npos);
}

}  // namespace gpu_sampler_test
}  // namespace gpudoctor
