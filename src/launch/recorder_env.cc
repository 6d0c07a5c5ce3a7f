#include "launch/recorder_env.h"

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace gpudoctor {

std::vector<std::string> recordedJobEnvironment(const RecorderSettings& s) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view kv(*e);
    // The recorder's settings are record's own; the measurement knobs GPUDOCTOR_RECORD_KINDS,
    // _CUPTI_ATTRS (scripts/record/overhead_matrix.sh) and _KEEP_API (docs/record.md) pass through.
    const bool knob = kv.starts_with("GPUDOCTOR_RECORD_KINDS=") || kv.starts_with("GPUDOCTOR_RECORD_CUPTI_ATTRS=") ||
                      kv.starts_with("GPUDOCTOR_RECORD_KEEP_API=");
    if ((kv.starts_with("GPUDOCTOR_RECORD_") && !knob) || kv.starts_with("GPUDOCTOR_CUPTI=")) continue;
    env.emplace_back(kv);
  }
  env.push_back("CUDA_INJECTION64_PATH=" + s.lib);
  env.push_back("NVTX_INJECTION64_PATH=" + s.lib);
  env.push_back("GPUDOCTOR_CUPTI=" + s.cupti);
  env.push_back("GPUDOCTOR_RECORD_DIR=" + s.out_abs);
  env.push_back("GPUDOCTOR_RECORD_COMMAND=" + s.command);
  if (s.delay_s > 0) env.push_back("GPUDOCTOR_RECORD_DELAY_MS=" + std::to_string(std::llround(s.delay_s * 1000)));
  if (s.duration_s > 0)
    env.push_back("GPUDOCTOR_RECORD_DURATION_MS=" + std::to_string(std::llround(s.duration_s * 1000)));
  if (s.signal != 0) env.push_back("GPUDOCTOR_RECORD_SIGNAL=" + std::to_string(s.signal));
  if (s.sample_every_ms > 0) {
    env.push_back("GPUDOCTOR_RECORD_SAMPLE_ON_MS=" + std::to_string(s.sample_on_ms));
    env.push_back("GPUDOCTOR_RECORD_SAMPLE_EVERY_MS=" + std::to_string(s.sample_every_ms));
  }
  if (s.steps_first > 0) {
    env.push_back("GPUDOCTOR_RECORD_STEPS_FIRST=" + std::to_string(s.steps_first));
    env.push_back("GPUDOCTOR_RECORD_STEPS_LAST=" + std::to_string(s.steps_last));
  }
  if (s.detached) env.push_back("GPUDOCTOR_RECORD_DETACHED=1");
  if (s.all_api) env.push_back("GPUDOCTOR_RECORD_ALL_API=1");
  if (s.sync_events) env.push_back("GPUDOCTOR_RECORD_SYNC=1");
  if (!s.nvtx_step.empty()) env.push_back("GPUDOCTOR_RECORD_NVTX_STEP=" + s.nvtx_step);
  return env;
}

std::string shellJoin(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& a : v) {
    if (!s.empty()) s += ' ';
    bool plain =
        !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") ==
                          std::string::npos;
    if (plain) {
      s += a;
    } else {
      s += '\'';
      for (char c : a) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
      s += '\'';
    }
  }
  return s;
}

}  // namespace gpudoctor
