// Checkpointing and gradient accumulation where memory is short: a configuration choice the trace
// cannot judge (checklist only; `gpudoctor plan` sizes it).
#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

class MemoryPlanning : public Rule {
 public:
  std::string_view id() const override { return "memory.planning"; }
  void evaluate(const Facts&, const Thresholds&, std::vector<Finding>&) const override {}
  void checklist(const Facts&, const Thresholds&, const std::vector<Finding>&,
                 std::vector<ChecklistItem>& out) const override {
    out.push_back({"memory", "Checkpointing / accumulation where memory is short", CheckStatus::kUnknown,
                   "a training-configuration choice; gpudoctor plan sizes it"});
  }
};

}  // namespace

const Rule& memoryPlanningRule() {
  static const MemoryPlanning r;
  return r;
}

}  // namespace gpudoctor
