// For the fixes' tests: the measured H200 ceilings, and a run with no ranks whose job profile a test fills.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "analysis/run_analysis.h"
#include "diagnosis/fixes/registry.h"
#include "model/ceilings.h"

namespace gpudoctor::testing {

inline Ceilings h200() { return *builtinCeilings("NVIDIA H200"); }

// The fix's edit on the un-profiled defaults; the basis must say something whenever it applies.
inline bool applyFix(const Fix& f, const Ceilings* c, const RunAnalysis* run, ReplayEdits& ed) {
  std::string basis;
  const bool ok = f.edit({c, run}, ed, basis);
  if (ok) {
    EXPECT_FALSE(basis.empty()) << f.id();
  }
  return ok;
}

}  // namespace gpudoctor::testing
