// The whole pipeline on public traces that no one here wrote (testdata/wild/MANIFEST.json): each
// loads and is analyzed without error, kernels the classifier cannot place ("other") hold at most
// 5 % of kernel time, and no part of a step's breakdown is negative. The traces live outside the
// repository (../shared/wild beside the checkout, or $GPUDOCTOR_WILD_DIR); without them the test
// is skipped and says where it looked.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "analysis/run_test_util.h"

namespace gpudoctor {
namespace {

namespace fs = std::filesystem;

constexpr double kOtherShareMax = 0.05;

struct WildTrace {
  std::string id;
  std::string file;
  std::string gpu;
};

std::vector<WildTrace> manifest() {
  std::ifstream in(testing::srcPath("testdata/wild/MANIFEST.json"));
  nlohmann::json j = nlohmann::json::parse(in);
  std::vector<WildTrace> out;
  for (const auto& t : j.at("traces"))
    out.push_back({t.at("id").get<std::string>(), t.at("file").get<std::string>(), t.at("gpu").get<std::string>()});
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

}  // namespace
}  // namespace gpudoctor
