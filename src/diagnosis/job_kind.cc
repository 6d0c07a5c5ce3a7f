#include "diagnosis/job_kind.h"

#include <algorithm>
#include <string_view>

namespace gpudoctor {
namespace {

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// A finding that an inference job cannot act on: the optimizer's (there is none), the DataLoader's
// where no DataLoader ran (the host work it sees is the serving loop's own).
bool notForInference(const JobProfile& job, const Finding& f) {
  if (startsWith(f.id, "optimizer.")) return true;
  const bool loader = startsWith(f.id, "input.loader") || f.id == "input.workers";
  return loader && !job.dataloader;
}

}  // namespace

void fitJobKind(const JobProfile& job, std::vector<Finding>& findings) {
  const bool inference = job.mode == "inference";
  const bool capture = job.graph_phase == "capture";
  findings.erase(std::remove_if(findings.begin(), findings.end(),
                                [&](const Finding& f) {
                                  if (inference && notForInference(job, f)) return true;
                                  // The launches of a capture are the graph's own recording, not a loop
                                  // that graphs would speed up.
                                  return capture && f.id == "launch.overhead";
                                }),
                 findings.end());
  if (!inference || job.dataloader) return;
  for (Finding& f : findings)
    for (std::string& line : f.fix)
      if (line.find("DataLoader(") != std::string::npos && line.find("pin_memory=True") != std::string::npos)
        line = "x = x.pin_memory()   # or copy each request into one pinned buffer allocated once";
}

std::string jobKindNote(const JobProfile& job) {
  std::string note;
  if (job.mode == "inference")
    note = "Inference (no backward pass, no optimizer step): no optimizer advice" +
           std::string(job.dataloader ? "." : ", and no DataLoader advice (none ran).");
  if (job.graph_phase == "capture")
    note += std::string(note.empty() ? "" : " ") +
            "This trace records a CUDA graph capture, a one-off: its launches are captured, not replayed, so "
            "graphs are not advised from them; profile the replay to judge the loop it serves.";
  return note;
}

}  // namespace gpudoctor
