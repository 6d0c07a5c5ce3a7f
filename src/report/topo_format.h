// The number and list formats the topo and place reports share (topo_report.cc, placement_report.cc).
#pragma once
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

namespace gpudoctor::topo_fmt {

inline std::string gbps(double v) {
  if (std::isinf(v)) return "n/a (one GPU)";
  return fmt::format("{:.1f} GB/s", v);
}

inline std::string joinInts(const std::vector<int>& v, const char* sep = ",") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

inline std::string joinStrings(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
  return s;
}

}  // namespace gpudoctor::topo_fmt
