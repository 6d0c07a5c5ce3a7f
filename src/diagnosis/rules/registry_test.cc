// The registry as a whole: ids unique, every rule testable alone, the table exactly the declarations.
#include <set>

#include "diagnosis/diagnosis.h"
#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

TEST(RuleRegistry, IdsAreUniqueAndEveryRuleRunsOnItsOwnTable) {
  std::set<std::string_view> ids;
  for (const Rule* r : ruleRegistry()) {
    EXPECT_TRUE(ids.insert(r->id()).second) << r->id();
    run(*r, healthyFacts());  // aborts if it reads a threshold it does not declare
  }
  EXPECT_GE(ruleRegistry().size(), 15u);
}

TEST(RuleRegistry, TheTableHoldsExactlyTheDeclaredThresholds) {
  std::set<std::string> declared = {"gpu_util_min", "gpu_memory_max", "comm_share_max", "io_wait_max", "cpu_max"};
  for (const ThresholdDecl* d : ruleCoreThresholds()) declared.insert(d->key);
  for (const Rule* r : ruleRegistry())
    for (const ThresholdDecl* d : r->thresholds()) {
      declared.insert(d->key);
      EXPECT_GE(d->default_value, d->min) << d->key;
      EXPECT_LE(d->default_value, d->max) << d->key;
    }
  std::set<std::string> table;
  const Thresholds all = Thresholds::defaults();
  for (const auto& t : all.all()) EXPECT_TRUE(table.insert(std::string(t.key())).second) << t.key() << " twice";
  EXPECT_EQ(table, declared);
}

TEST(RuleRegistry, HeadlineLeadsAndTheRestFollowByGain) {
  Facts f = healthyFacts();
  f.mean.busy = f.mean.compute = 3e6;
  f.mean.idle_host = 5e6;
  f.mean.idle_sync = 2e6;
  f.mean.idle_other = 0;
  f.compute_kernels = 4000;
  f.compute_kernel_p50_ns = 3000;
  f.ranking = rankBottlenecks(f.mean);
  Diagnosis d = diagnose(f, Thresholds::defaults());
  ASSERT_GE(d.findings.size(), 3u);
  EXPECT_EQ(d.primary, "host_launch");
  EXPECT_EQ(d.findings[0].id, "bottleneck.host_launch");
  // Syncs bound 7 ms (all of the GPU's idle), launches 5 ms (the idle behind the host's launches).
  EXPECT_EQ(d.findings[1].id, "sync.blocking");
  EXPECT_EQ(d.findings[2].id, "launch.overhead");
  EXPECT_EQ(d.checklist.front().item, "GPU utilization > 90%");
}

}  // namespace
}  // namespace gpudoctor
