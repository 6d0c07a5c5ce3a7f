// The thresholds every judgement reads: the guide's health limits (GPU utilization > 90 %, memory
// < 95 %, communication < 20 %, IO wait < 10 %, CPU < 80 %) and each rule's own limits. Each is
// declared once, as a ThresholdDecl next to the code that reads it; the table is assembled from the
// declarations (diagnosis/rules/registry), so a key no judge reads cannot exist and a mistyped key
// is a build error. A TOML file overrides any value by key.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace gpudoctor {

// A threshold as its reader declares it: key, default, accepted range for overrides, unit, meaning.
struct ThresholdDecl {
  const char* key;
  double default_value;
  double min, max;
  const char* unit;  // "ratio", "us", "bytes", "count", "x"
  const char* meaning;
};

// One row of the table: its declaration and the value in force.
struct Threshold {
  const ThresholdDecl* decl;
  double value;
  std::string_view key() const { return decl->key; }
};

class Thresholds {
 public:
  // Every declared threshold (the guide's limits, the diagnosis core's, then each rule's in
  // registry order) at its default.
  static Thresholds defaults();
  // A table of just these declarations (a rule's own, in its unit test).
  static Thresholds of(const std::vector<const ThresholdDecl*>& decls);
  // Overrides from TOML text of `key = number` lines (optionally under a [thresholds] table); `name`
  // is used in messages. Errors name it and the key: unknown key, wrong type, out of range.
  Status loadTomlText(std::string_view text, const std::string& name);
  // The value in force. Reading a declaration the table lacks is a programming error (a rule read
  // a threshold it does not declare): it aborts, and each rule's unit test would catch it.
  double get(const ThresholdDecl& d) const;
  // The value of a key given as text (user input, tests); nullopt for an unknown key.
  std::optional<double> find(std::string_view key) const;
  // Every threshold, in table order.
  const std::vector<Threshold>& all() const { return t_; }

 private:
  void add(const ThresholdDecl* d);
  std::vector<Threshold> t_;
};

// The guide's health limits, shared by the trace rules and the monitor's live health checks.
namespace guide {
inline constexpr ThresholdDecl kGpuUtilMin{
    "gpu_util_min", 0.90, 0, 1, "ratio", "GPU busy share of the step below which the GPU is underused (guide: > 90 %)"};
inline constexpr ThresholdDecl kGpuMemoryMax{
    "gpu_memory_max",
    0.95,
    0,
    1,
    "ratio",
    "peak allocated / device memory above which memory is too tight (guide: < 95 %)"};
inline constexpr ThresholdDecl kCommShareMax{
    "comm_share_max", 0.20, 0, 1, "ratio", "exposed communication share of the step (guide: < 20 %)"};
inline constexpr ThresholdDecl kIoWaitMax{
    "io_wait_max",
    0.10,
    0,
    1,
    "ratio",
    "share of the step the GPU idles while the host fetches data (guide: IO wait < 10 %)"};
inline constexpr ThresholdDecl kCpuMax{
    "cpu_max", 0.80,    0,
    1,         "ratio", "host CPU utilization (guide: < 80 %); measured by the live monitor, not by traces"};
}  // namespace guide

}  // namespace gpudoctor
