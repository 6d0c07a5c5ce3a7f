// Whether the DataLoader has worker processes (checklist only; the loader rule judges its cost).
#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

class LoaderWorkers : public Rule {
 public:
  std::string_view id() const override { return "input.workers"; }
  void evaluate(const Facts&, const Thresholds&, std::vector<Finding>&) const override {}
  void checklist(const Facts& f, const Thresholds&, const std::vector<Finding>&,
                 std::vector<ChecklistItem>& out) const override {
    bool seen = f.mean.loader > 0;
    out.push_back({"io", "DataLoader workers (num_workers > 0)",
                   seen ? (f.loader_in_process ? CheckStatus::kFail : CheckStatus::kPass) : CheckStatus::kUnknown,
                   seen ? (f.loader_in_process ? "single-process loader" : "multi-process loader")
                        : "no DataLoader ranges in the trace"});
  }
};

}  // namespace

const Rule& loaderWorkersRule() {
  static const LoaderWorkers r;
  return r;
}

}  // namespace gpudoctor
