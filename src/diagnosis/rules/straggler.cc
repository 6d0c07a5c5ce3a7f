// One rank reaches the collectives last and every other rank waits for it inside NCCL.
#include <string>

#include <fmt/format.h>

#include "diagnosis/diagnosis.h"
#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

constexpr ThresholdDecl kStragglerShareMin{
    "straggler_share_min", 0.6, 0, 1, "ratio", "share of collectives a rank must reach last to be called a straggler"};
constexpr ThresholdDecl kStragglerWaitMin{
    "straggler_wait_min",
    0.05,
    0,
    1,
    "ratio",
    "share of the other ranks' NCCL time they must spend waiting for a rank to call it a straggler"};

class Straggler : public Rule {
 public:
  std::string_view id() const override { return "communication.straggler"; }
  std::vector<const ThresholdDecl*> thresholds() const override { return {&kStragglerShareMin, &kStragglerWaitMin}; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    const auto& s = f.straggler;
    if (!s.matched || s.rank < 0 || s.share_last < th.get(kStragglerShareMin)) return;
    Finding x = gainFinding(
        f, th, "communication.straggler",
        s.share_of == "steps"
            ? fmt::format("Rank {} is a straggler: it causes most of its process group's waiting in "
                          "{:.0f}% of the steps",
                          s.rank, pct(s.share_last))
            : fmt::format("Rank {} is a straggler: it reaches {:.0f}% of collectives last", s.rank, pct(s.share_last)),
        s.others_wait_ns, "mean time per step the other ranks wait inside NCCL for it (upper bound)");
    x.evidence = {
        {s.share_of == "steps" ? "causes the waiting" : "arrives last", pct(s.share_last), "% of " + s.share_of},
        {"others wait", ms(s.others_wait_ns), "ms/step"},
        {fmt::format("rank {} GPU idle (host launch)", s.rank), ms(s.idle_host_ns), "ms/step"},
        {fmt::format("rank {} DataLoader", s.rank), ms(s.loader_ns), "ms/step"}};
    x.explanation =
        "Every other rank waits in its collectives for this one; its own step is slower before the "
        "collective (host, loader, GPU or thermal). Compare its figures with the others'.";
    x.fix = {"gpudoctor analyze --rank " + std::to_string(s.rank) + " TRACES   # its step, host side and idle causes",
             "nvidia-smi -q -d PERFORMANCE,CLOCK   # on its node: throttling, clocks"};
    out.push_back(std::move(x));
  }
  void checklist(const Facts& f, const Thresholds&, const std::vector<Finding>& mine,
                 std::vector<ChecklistItem>& out) const override {
    out.push_back({"communication", "No straggler rank",
                   f.ranks > 1 && f.straggler.matched ? statusFrom(mine, true) : CheckStatus::kUnknown,
                   f.straggler.note});
  }
};

}  // namespace

const Rule& stragglerRule() {
  static const Straggler r;
  return r;
}

void configureAnalysis(const Thresholds& th, AnalysisOptions& opt) {
  opt.straggler_share_min = th.get(kStragglerShareMin);
  opt.straggler_wait_min = th.get(kStragglerWaitMin);
}

}  // namespace gpudoctor
