// A count rounded to a whole number with thousands separated ("237,477"): the io report and advice
// print sample rates that run to six or seven digits.
#pragma once
#include <cmath>
#include <string>

namespace gpudoctor {

inline std::string groupThousands(double v) {
  std::string d = std::to_string(std::llround(v)), o;
  size_t lead = d[0] == '-' ? 1 : 0;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i > lead && (d.size() - i) % 3 == 0) o += ',';
    o += d[i];
  }
  return o;
}

}  // namespace gpudoctor
