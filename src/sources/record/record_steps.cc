#include <cstdio>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

#include "sources/record/record_passes.h"

namespace gpudoctor {

namespace rec = recording;

void findSteps(DecodedRecording& d) {
  std::string pattern = d.facts.nvtx_step.empty() ? std::string(rec::kDefaultStepPattern) : d.facts.nvtx_step;
  std::regex re;
  try {
    re = std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error&) {
    re = std::regex(std::string(rec::kDefaultStepPattern));
  }
  std::unordered_map<uint32_t, bool> matches;
  for (uint32_t i = 0; i < d.tr.events.size(); ++i) {
    const Event& e = d.tr.events[i];
    if (e.kind != EventKind::kRange) continue;
    auto [it, fresh] = matches.try_emplace(e.name, false);
    if (fresh) it->second = std::regex_search(std::string(d.tr.strings.view(e.name)), re);
    if (it->second && !badWindow(d, e.start_ns)) d.step_events.push_back(i);
  }
  if (!d.step_events.empty()) {
    d.facts.steps_from = "nvtx";
    d.facts.steps_note = std::to_string(d.step_events.size()) + " NVTX ranges matching " + pattern;
    return;
  }
  if (d.launches.empty()) {
    d.facts.steps_from = "none";
    d.facts.steps_note = "no launches with GPU work";
    return;
  }
  // Each attach window is a continuous run of the loop (a sampled recording has several, with
  // the detached time between them): its period and phase are found on its own launches, and no
  // step spans two windows.
  std::vector<std::vector<LaunchMark>> split;  // only when there are several windows
  if (d.windows.size() > 1) {
    split.resize(d.windows.size());
    size_t w = 0;
    for (const LaunchMark& l : d.launches) {
      while (w + 1 < d.windows.size() && l.start_ns >= d.windows[w + 1].first) ++w;
      split[w].push_back(l);
    }
  }
  std::vector<const std::vector<LaunchMark>*> runs;
  if (split.empty()) runs.push_back(&d.launches);
  for (const auto& r : split) runs.push_back(&r);
  const uint32_t main_track = d.main_track;
  size_t number = 0, with_steps = 0;
  std::string first_note, why_none;
  for (size_t r = 0; r < runs.size(); ++r) {
    if (d.bad_windows.count(r)) continue;
    PeriodicSteps ps = findPeriodicSteps(*runs[r]);
    if (ps.period == 0) {
      if (why_none.empty()) why_none = ps.why_none;
      continue;
    }
    if (first_note.empty()) {
      char m[32];
      std::snprintf(m, sizeof m, "%.1f", 100 * ps.match);
      first_note = "a period of " + std::to_string(ps.period) + " launches, " + m + " % self-match";
    }
    ++with_steps;
    for (size_t k = 0; k + 1 < ps.boundaries.size(); ++k) {
      uint32_t name = d.tr.strings.intern("step #" + std::to_string(++number) + " (launch period)");
      addRecordEvent(d.tr, EventKind::kRange, static_cast<uint64_t>(ps.boundaries[k]),
                     static_cast<uint64_t>(ps.boundaries[k + 1]), name, main_track);
      d.step_events.push_back(static_cast<uint32_t>(d.tr.events.size() - 1));
    }
  }
  if (number == 0) {
    d.facts.steps_from = "none";
    d.facts.steps_note =
        runs.size() == 1 ? why_none : why_none + " (in each of " + std::to_string(runs.size()) + " attach windows)";
    return;
  }
  d.facts.steps_from = "periodicity";
  d.facts.steps_note = runs.size() == 1 ? first_note
                                        : first_note + " (in the first; steps in " + std::to_string(with_steps) +
                                              " of " + std::to_string(runs.size()) + " attach windows)";
}

void noteBadWindows(DecodedRecording& d) {
  if (d.bad_windows.empty()) return;
  d.facts.steps_note += "; " + std::to_string(d.bad_windows.size()) + " attach window" +
                        (d.bad_windows.size() == 1 ? "" : "s") + " left out: CUPTI gave " +
                        std::to_string(d.facts.shared_correlation_calls) +
                        " calls shared correlation ids, so their GPU work is not linked to them";
}

}  // namespace gpudoctor
