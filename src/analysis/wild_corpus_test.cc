// The whole pipeline on public traces that no one here wrote (testdata/wild/MANIFEST.json): each
// loads and is analyzed without error, kernels the classifier cannot place ("other") hold at most
// 5 % of kernel time, and no part of a step's breakdown is negative. The traces live outside the
// repository (../shared/wild beside the checkout, or $GPUDOCTOR_WILD_DIR); without them the test
// is skipped and says where it looked.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "analysis/digest.h"
#include "analysis/fleet.h"
#include "analysis/run_test_util.h"

namespace gpudoctor {
namespace {

namespace fs = std::filesystem;

constexpr double kOtherShareMax = 0.05;

struct WildTrace {
  std::string id;
  std::string file;
  std::string gpu;
  std::string set;  // the ranks of one job share a set ("" alone)
};

std::vector<WildTrace> manifest() {
  std::ifstream in(testing::srcPath("testdata/wild/MANIFEST.json"));
  nlohmann::json j = nlohmann::json::parse(in);
  std::vector<WildTrace> out;
  for (const auto& t : j.at("traces"))
    out.push_back({t.at("id").get<std::string>(), t.at("file").get<std::string>(), t.at("gpu").get<std::string>(),
                   t.value("set", std::string())});
  return out;
}

// Where the corpus is: $GPUDOCTOR_WILD_DIR, else the shared folder beside the checkout.
fs::path corpusDir() {
  if (const char* d = std::getenv("GPUDOCTOR_WILD_DIR"); d && *d) return d;
  return fs::path(testing::srcPath("../shared/wild"));
}

double otherShare(const KernelSummary& k) {
  for (const auto& c : k.classes)
    if (c.cls == KernelClass::kOther) return c.share;
  return 0;
}

// Every part of a step's breakdown is a duration or a count: none may be negative.
void expectNonNegative(const StepBreakdown& b, const std::string& where) {
  const int64_t parts[] = {
      b.wall_ns,         b.gpu_busy_ns,  b.compute_ns,         b.comm_ns,         b.comm_overlap_ns,
      b.comm_exposed_ns, b.memcpy_ns,    b.memset_ns,          b.copy_exposed_ns, b.idle_ns,
      b.idle_host_ns,    b.idle_sync_ns, b.idle_dependency_ns, b.idle_other_ns,   b.kernels,
      b.sync_ns};
  for (int64_t v : parts) EXPECT_GE(v, 0) << where;
}

TEST(WildCorpus, ManifestNamesEachTraceOnce) {
  auto traces = manifest();
  ASSERT_GE(traces.size(), 30u);
  std::set<std::string> ids, files;
  for (const auto& t : traces) {
    EXPECT_TRUE(ids.insert(t.id).second) << t.id;
    EXPECT_TRUE(files.insert(t.file).second) << t.file;
  }
}

TEST(WildCorpus, EveryTraceLoadsAndOtherStaysSmall) {
  const fs::path dir = corpusDir();
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no public trace corpus at " << dir << " (scripts/corpus/README.md)";
  std::printf("%-44s %-28s %8s %8s\n", "trace", "gpu", "kernels", "other");
  int analyzed = 0;
  for (const auto& t : manifest()) {
    const fs::path path = dir / t.file;
    if (!fs::exists(path)) {
      ADD_FAILURE() << t.id << ": " << path << " is missing";
      continue;
    }
    auto l = testing::loadRun({path.string()});
    const KernelSummary& k = l->run.kernels;
    const double other = otherShare(k);
    std::printf("%-44s %-28.28s %8lld %7.1f%%\n", t.id.c_str(), t.gpu.c_str(), static_cast<long long>(k.kernels),
                100 * other);
    EXPECT_GT(k.kernels, 0) << t.id;
    EXPECT_LE(other, kOtherShareMax) << t.id;
    for (const auto& r : l->run.ranks)
      for (const auto& s : r.steps) expectNonNegative(s, t.id + " step " + std::to_string(s.window.number));
    ++analyzed;
  }
  EXPECT_GT(analyzed, 0);
}

// TraceLens's B200 tensor-parallel trace all-reduces through symmetric memory (multimem_all_reduce_):
// 73 kernels in the collectives table, sized by the operator's input (2,557,440 and 2,727,936 BFloat16).
TEST(WildCorpus, SymmetricMemoryAllReducesAreCollectives) {
  const fs::path path = corpusDir() / "tracelens_b200_eager.json.gz";
  if (!fs::exists(path)) GTEST_SKIP() << "no " << path << " (scripts/corpus/README.md)";
  auto l = testing::loadRun({path.string()});
  int64_t count = 0;
  for (const auto& c : l->run.collectives)
    if (c.variant == "symmetric_memory") {
      EXPECT_EQ(c.collective, "allreduce");
      EXPECT_EQ(c.dtype, "BFloat16");
      EXPECT_TRUE(c.bytes == 2557440 * 2 || c.bytes == 2727936 * 2) << c.bytes;
      EXPECT_GT(c.busbw_gbps, 0);
      count += c.dur.count;
    }
  EXPECT_EQ(count, 73);
}

// The ranks of one job analyzed together: the fleet's per-rank waiting (collectives joined by process
// group and sequence number) is the straggler section's (NCCL kernels matched in launch order).
TEST(WildCorpus, EachSetsFleetWaitsAreTheStragglersWaits) {
  const fs::path dir = corpusDir();
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no public trace corpus at " << dir << " (scripts/corpus/README.md)";
  std::map<std::string, std::vector<std::string>> sets;
  for (const auto& t : manifest())
    if (!t.set.empty()) sets[t.set].push_back((dir / t.file).string());
  ASSERT_FALSE(sets.empty());
  for (const auto& [set, files] : sets) {
    auto l = testing::loadRun(files);
    ASSERT_EQ(l->run.ranks.size(), files.size()) << set;
    const StragglerReport& s = l->run.straggler;
    ASSERT_TRUE(s.matched) << set << ": " << s.note;
    std::vector<RankDigest> digests;
    for (const auto& r : l->run.ranks) digests.push_back(digestRank(r));
    auto fleet = analyzeFleet(digests);
    ASSERT_TRUE(fleet.ok()) << set << ": " << fleet.error().message;
    int64_t total_wait = 0;
    for (const RankWait& w : s.ranks) {
      auto row = std::find_if(fleet.value().rows.begin(), fleet.value().rows.end(),
                              [&](const FleetRank& f) { return f.rank == w.rank; });
      ASSERT_NE(row, fleet.value().rows.end()) << set << " rank " << w.rank;
      // One step per rank here: the fleet's mean per step is the straggler's total.
      EXPECT_NEAR(row->wait_ns * static_cast<double>(row->steps), static_cast<double>(w.wait_ns), 1.0)
          << set << " rank " << w.rank;
      total_wait += w.wait_ns;
    }
    EXPECT_GT(total_wait, 0) << set;
  }
}

}  // namespace
}  // namespace gpudoctor
