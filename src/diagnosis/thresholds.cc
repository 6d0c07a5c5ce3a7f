#include "diagnosis/thresholds.h"

#include <cstdlib>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace gpudoctor {

Thresholds Thresholds::defaults() {
  Thresholds t;
  t.t_ = {
      {"gpu_util_min", 0.90, 0, 1, "ratio", "GPU busy share of the step below which the GPU is underused (guide: > 90 %)"},
      {"gpu_memory_max", 0.95, 0, 1, "ratio", "peak allocated / device memory above which memory is too tight (guide: < 95 %)"},
      {"comm_share_max", 0.20, 0, 1, "ratio", "exposed communication share of the step (guide: < 20 %)"},
      {"io_wait_max", 0.10, 0, 1, "ratio", "share of the step the GPU idles while the host fetches data (guide: IO wait < 10 %)"},
      {"cpu_max", 0.80, 0, 1, "ratio", "host CPU utilization (guide: < 80 %); measured by the live monitor, not by traces"},
      {"host_idle_max", 0.10, 0, 1, "ratio", "share of the step the GPU idles waiting for the host to launch work"},
      {"sync_idle_max", 0.05, 0, 1, "ratio", "share of the step the GPU idles behind a blocking host synchronization"},
      {"fp32_gemm_share_max", 0.10, 0, 1, "ratio", "share of GEMM time in FP32 (non-tensor-core) kernels"},
      {"short_kernel_us", 10, 0, 1e6, "us", "median kernel duration below which launch overhead dominates"},
      {"small_collective_bytes", 1 << 20, 0, 1e12, "bytes", "collectives smaller than this are latency-bound"},
      {"small_collectives_per_step_max", 10, 0, 1e6, "count", "small collectives per step before bucketing is advised"},
      {"straggler_share_min", 0.6, 0, 1, "ratio", "share of collectives a rank must reach last to be called a straggler"},
      {"min_gain_share", 0.01, 0, 1, "ratio", "estimated gains below this share of the step are reported as info"},
  };
  return t;
}

double Thresholds::get(std::string_view key) const {
  for (const auto& x : t_)
    if (x.key == key) return x.value;
  std::fprintf(stderr, "internal error: unknown threshold %.*s\n", static_cast<int>(key.size()), key.data());
  std::abort();
}

Status Thresholds::loadTomlText(std::string_view text, const std::string& name) {
  toml::table doc;
  try {
    doc = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    return Error{fmt::format("{}:{}:{}: {}", name, e.source().begin.line, e.source().begin.column, e.description())};
  }
  const toml::table* tbl = &doc;
  if (auto* sub = doc["thresholds"].as_table()) {
    if (doc.size() != 1) return Error{name + ": put every key under [thresholds] or none"};
    tbl = sub;
  }
  for (const auto& [k, node] : *tbl) {
    std::string key(k.str());
    Threshold* th = nullptr;
    for (auto& x : t_)
      if (x.key == key) th = &x;
    auto line = node.source().begin.line;
    if (!th) {
      std::string known;
      for (const auto& x : t_) known += (known.empty() ? "" : ", ") + x.key;
      return Error{fmt::format("{}:{}: unknown threshold \"{}\" (known: {})", name, line, key, known)};
    }
    std::optional<double> v = node.value<double>();
    if (!v || node.is_boolean()) {
      return Error{fmt::format("{}:{}: threshold \"{}\" must be a number ({}), not {}", name, line, key, th->unit,
                               node.is_string() ? "a string" : node.is_boolean() ? "a boolean" : "this value")};
    }
    if (*v < th->min || *v > th->max)
      return Error{fmt::format("{}:{}: threshold \"{}\" = {} is out of range [{}, {}] ({})", name, line, key, *v,
                               th->min, th->max, th->unit)};
    th->value = *v;
  }
  return {};
}

Status Thresholds::loadToml(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Error{path + ": cannot open: " + std::strerror(errno)};
  std::string text;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  return loadTomlText(text, path);
}

}  // namespace gpudoctor
