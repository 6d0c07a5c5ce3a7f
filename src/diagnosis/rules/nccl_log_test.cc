#include "diagnosis/rules/rule_test_util.h"

namespace gpudoctor {
namespace {
using namespace testing;

TEST(RuleNcclLog, EachLogProblemIsAFindingWithoutGain) {
  Facts f = healthyFacts();
  f.has_nccl_log = true;
  Finding w;
  w.severity = Severity::kCritical;
  w.title = "Multi-node communicators run over TCP sockets";
  w.explanation = "2 nodes; network Socket";
  w.fix = {"enable IB"};
  f.nccl_log = {w};
  auto r = run(ncclLogRule(), f);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].id, "nccl.log");
  EXPECT_EQ(r.findings[0].severity, Severity::kCritical);
  EXPECT_EQ(r.findings[0].explanation, "2 nodes; network Socket");
  EXPECT_EQ(r.checklist[0].status, CheckStatus::kFail);
  EXPECT_EQ(r.checklist[0].evidence, "1 problem(s) in the NCCL log");
}

TEST(RuleNcclLog, ACleanLogPassesAndNoLogIsUnknown) {
  Facts f = healthyFacts();
  f.has_nccl_log = true;
  EXPECT_EQ(run(ncclLogRule(), f).checklist[0].status, CheckStatus::kPass);
  EXPECT_EQ(run(ncclLogRule(), healthyFacts()).checklist[0].status, CheckStatus::kUnknown);
}

}  // namespace
}  // namespace gpudoctor
