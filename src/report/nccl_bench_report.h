// Renderers for `gpudoctor nccl bench` (nccl-tests' table, JSON) and `gpudoctor nccl tune` (the
// choices per collective and size, the environment lines, where the tuner configuration went). No
// computing: the rows and the decision come in complete.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "analysis/nccl_tune.h"
#include "model/nccl_bench.h"

namespace gpudoctor {

// nccl-tests' table: two header lines, a "# collective" line before each collective's rows, the
// in-place columns when `in_place`, the #wrong and average bus bandwidth footer.
std::string renderNcclBenchTable(const std::vector<NcclBenchRow>& rows, int nranks, bool in_place);
// Every row as JSON (what `nccl tune` reads back from its fresh processes).
std::string renderNcclBenchJson(const std::vector<NcclBenchRow>& rows, int nranks);

// What a tune run was, beside its decision.
struct NcclTuneRun {
  int nranks = 0;
  size_t settings = 0;       // settings measured (stages 1 and 2)
  int repeats = 0;           // fresh processes per setting
  int default_channels = 0;  // NCCL's own channel count, 0 unknown
  bool validated = false;    // stage 3 ran
  int dropped = 0;           // kept choices stage 3 dropped
  std::string tuner_config;  // where the configuration was written
};

// The tune's table, verdicts and how to apply them.
std::string renderNcclTuneText(const NcclTuneDecision& d, const NcclTuneRun& run);
// The same as JSON.
std::string renderNcclTuneJson(const NcclTuneDecision& d, const NcclTuneRun& run);

}  // namespace gpudoctor
