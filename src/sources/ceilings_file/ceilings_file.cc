#include "sources/ceilings_file/ceilings_file.h"

#include <fstream>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

namespace gpudoctor {

namespace {

using Json = nlohmann::json;

struct BwKey {
  const char* key;
  double Ceilings::*field;
};
constexpr BwKey kBandwidth[] = {
    {"hbm_copy", &Ceilings::hbm_copy_gbps},         {"hbm_read", &Ceilings::hbm_read_gbps},
    {"hbm_write", &Ceilings::hbm_write_gbps},       {"h2d_pinned", &Ceilings::h2d_pinned_gbps},
    {"h2d_pageable", &Ceilings::h2d_pageable_gbps}, {"d2h_pinned", &Ceilings::d2h_pinned_gbps},
    {"d2h_pageable", &Ceilings::d2h_pageable_gbps}, {"p2p", &Ceilings::p2p_gbps},
};

}  // namespace

std::string ceilingsToJson(const Ceilings& c) {
  Json j;
  j["format"] = "gpudoctor-ceilings";
  j["version"] = 1;
  j["device"] = c.device;
  j["source"] = c.source;
  Json t = Json::object();
  for (int i = 0; i < kGemmPrecisionCount; ++i)
    if (c.tflops[i] > 0) t[std::string(gemmPrecisionName(static_cast<GemmPrecision>(i)))] = c.tflops[i];
  j["tflops"] = t;
  Json b = Json::object();
  for (const auto& k : kBandwidth)
    if (c.*k.field > 0) b[k.key] = c.*k.field;
  j["bandwidth_gbps"] = b;
  return j.dump(2) + "\n";
}

Result<Ceilings> parseCeilingsJson(const std::string& text, const std::string& origin) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error{origin + ": not valid JSON"};
  if (!j.is_object()) return Error{origin + ": a ceilings file is a JSON object"};
  auto number = [&](const Json& v, const std::string& key) -> Result<double> {
    if (!v.is_number()) return Error{origin + ": " + key + ": must be a number (TFLOP/s or GB/s)"};
    double d = v.get<double>();
    if (!(d >= 0) || d > 1e7) return Error{origin + ": " + key + ": must be a non-negative figure, got " + v.dump()};
    return d;
  };
  Ceilings c;
  bool any_tflops = false;
  for (const auto& [key, v] : j.items()) {
    if (key == "format") {
      if (v != "gpudoctor-ceilings")
        return Error{origin + ": format: expected \"gpudoctor-ceilings\", got " + v.dump()};
    } else if (key == "version") {
      if (v != 1) return Error{origin + ": version: only version 1 is known, got " + v.dump()};
    } else if (key == "device" || key == "source") {
      if (!v.is_string()) return Error{origin + ": " + key + ": must be a string"};
      (key == "device" ? c.device : c.source) = v.get<std::string>();
    } else if (key == "tflops") {
      if (!v.is_object()) return Error{origin + ": tflops: must be an object like {\"bf16\": 989.5}"};
      for (const auto& [p, f] : v.items()) {
        auto prec = gemmPrecisionFromName(p);
        if (!prec) return Error{origin + ": tflops." + p + ": unknown precision (fp32, tf32, fp16, bf16, fp8)"};
        ASSIGN_OR_RETURN(double d, number(f, "tflops." + p));
        c.tflops[static_cast<int>(*prec)] = d;
        any_tflops |= d > 0;
      }
    } else if (key == "bandwidth_gbps") {
      if (!v.is_object()) return Error{origin + ": bandwidth_gbps: must be an object like {\"hbm_copy\": 4000}"};
      for (const auto& [name, f] : v.items()) {
        const BwKey* k = nullptr;
        for (const auto& b : kBandwidth)
          if (name == b.key) k = &b;
        if (!k)
          return Error{
              origin + ": bandwidth_gbps." + name +
              ": unknown key (hbm_copy, hbm_read, hbm_write, h2d_pinned, h2d_pageable, d2h_pinned, d2h_pageable, p2p)"};
        ASSIGN_OR_RETURN(c.*k->field, number(f, "bandwidth_gbps." + name));
      }
    } else {
      return Error{origin + ": " + key + ": unknown key (format, version, device, source, tflops, bandwidth_gbps)"};
    }
  }
  if (!any_tflops) return Error{origin + ": tflops: no precision has a figure; MFU needs at least one"};
  return c;
}

Result<Ceilings> loadCeilingsFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Error{path + ": cannot read"};
  std::stringstream ss;
  ss << f.rdbuf();
  return parseCeilingsJson(ss.str(), path);
}

}  // namespace gpudoctor
