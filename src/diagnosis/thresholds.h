// The one table of thresholds every rule judges against: the guide's health limits (GPU
// utilization > 90 %, memory < 95 %, communication < 20 %, IO wait < 10 %, CPU < 80 %) and the
// rules' own limits. Defaults here; a TOML file overrides any of them by key.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace gpudoctor {

struct Threshold {
  std::string key;
  double value;
  double min, max;   // accepted range for overrides
  std::string unit;  // "ratio", "us", "bytes", "count"
  std::string meaning;
};

class Thresholds {
 public:
  // The built-in table.
  static Thresholds defaults();
  // Overrides from a TOML file of `key = number` lines (optionally under a [thresholds] table).
  // Errors name the file and the key: unknown key, wrong type, out of range.
  Status loadToml(const std::string& path);
  // Same, from TOML text (name used in messages).
  Status loadTomlText(std::string_view text, const std::string& name);
  // The value of a key (keys are compile-time constants in the rules; an unknown key aborts).
  double get(std::string_view key) const;
  // Every threshold, in table order.
  const std::vector<Threshold>& all() const { return t_; }

 private:
  std::vector<Threshold> t_;
};

}  // namespace gpudoctor
