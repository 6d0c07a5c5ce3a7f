// The headline: the largest group of the step (compute, communication, copies, or host: the idle
// causes together) and its largest category, with the whole ranking (the diagnosis replaces the
// category with the one inside that group the replay finds limiting). Compute is
// no wait to remove and other_idle has no single cause, so those headlines are info.
#include <map>

#include <fmt/format.h>

#include "diagnosis/rules/fixes.h"
#include "diagnosis/rules/registry.h"

namespace gpudoctor {
namespace {

std::vector<std::string> fixesFor(const std::string& cat) {
  if (cat == "communication") return fixes::communication();
  if (cat == "host_launch")
    return {"model = torch.compile(model, mode=\"reduce-overhead\")   # fuses kernels, replays CUDA graphs",
            "# or raise the micro-batch so each kernel does more work per launch"};
  if (cat == "input") return fixes::input();
  if (cat == "sync") return fixes::sync();
  if (cat == "copies") return {"DataLoader(..., pin_memory=True); x = x.cuda(non_blocking=True)"};
  return {};
}

class Bottleneck : public Rule {
 public:
  std::string_view id() const override { return "bottleneck"; }
  void evaluate(const Facts& f, const Thresholds& th, std::vector<Finding>& out) const override {
    if (f.ranking.empty()) return;
    out.push_back(headlineFinding(f, th, leadingCategory(f), ""));
  }
};

}  // namespace

std::string leadingCategory(const Facts& f) {
  if (f.groups.empty()) return f.ranking.empty() ? "" : f.ranking.front().category;
  const std::string& group = f.groups.front().category;
  for (const auto& b : f.ranking)  // largest first: the group's largest part
    if (groupOf(b.category) == group) return b.category;
  return group;
}

Finding headlineFinding(const Facts& f, const Thresholds& th, const std::string& category, const std::string& why) {
  std::string list, groups;
  for (const auto& b : f.ranking)
    list += fmt::format("{}{} {:.1f}%", list.empty() ? "" : ", ", b.category, pct(b.share));
  for (const auto& b : f.groups)
    groups += fmt::format("{}{} {:.1f}%", groups.empty() ? "" : ", ", b.category, pct(b.share));
  BottleneckShare host{"host", 0, 0};
  for (const auto& b : f.groups)
    if (b.category == "host") host = b;
  static const std::map<std::string, std::string> kWhat = {
      {"compute", "the GPU spends most of the step computing: make the kernels cheaper (precision, fusion, attention)"},
      {"communication", "NCCL time that no computation hides dominates the step"},
      {"host_launch", "the GPU waits for the host to launch work (Python overhead, small kernels)"},
      {"input", "the GPU waits while the host fetches the next batch"},
      {"sync", "the GPU waits behind blocking host synchronizations (.item(), .cpu(), cudaStreamSynchronize)"},
      {"copies", "memory copies run with no kernel to hide them"},
      {"other_idle", "the GPU waits on cross-stream dependencies or idles at the end of steps"}};
  BottleneckShare top{category, 0, 0};
  for (const auto& b : f.ranking)
    if (b.category == category) top = b;
  const bool compute = category == "compute";
  const bool host_group = groupOf(category) == "host";
  std::string title = host_group
                          ? fmt::format("Primary bottleneck: host-bound, GPU idle {:.1f}% of the step ({} {:.1f}%{})",
                                        pct(host.share), category, pct(top.share), why.empty() ? "" : "; replay")
                          : fmt::format("Primary bottleneck: {} ({:.1f}% of the step{})", category, pct(top.share),
                                        why.empty() ? "" : "; replay");
  Finding x = gainFinding(f, th, "bottleneck." + category, title, compute ? 0 : top.ms_per_step * 1e6,
                          compute ? "not a removable wait: gains come from the compute findings below"
                                  : "all of this category's time per step (upper bound: removing it entirely)");
  auto what = kWhat.find(category);
  x.explanation = (what != kWhat.end() ? what->second : category) + ". " + (why.empty() ? "" : why + " ") +
                  "Ranking of the GPU's time: " + list + "; grouped: " + groups +
                  " (host: the GPU idles with nothing queued: launches, input, syncs, other).";
  // No "step" of its own here: the report's one step is the steady-state period in its header.
  x.evidence = {{category, top.ms_per_step, "ms/step"}, {"GPU busy", pct(f.share(f.mean.busy)), "%"}};
  if (host_group) x.evidence.push_back({"host-bound (GPU idle)", host.ms_per_step, "ms/step"});
  if (compute || category == "other_idle") x.severity = Severity::kInfo;
  x.fix = fixesFor(category);
  return x;
}

const Rule& bottleneckRule() {
  static const Bottleneck r;
  return r;
}

}  // namespace gpudoctor
