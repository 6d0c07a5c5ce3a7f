#include "diagnosis/thresholds.h"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "common/spelling.h"
#include "diagnosis/rules/registry.h"

namespace gpudoctor {

void Thresholds::add(const ThresholdDecl* d) {
  for (const auto& x : t_)
    if (x.decl == d) return;  // shared declarations (the guide's limits) appear once
  t_.push_back({d, d->default_value});
}

Thresholds Thresholds::defaults() {
  Thresholds t;
  for (const ThresholdDecl* d :
       {&guide::kGpuUtilMin, &guide::kGpuMemoryMax, &guide::kCommShareMax, &guide::kIoWaitMax, &guide::kCpuMax})
    t.add(d);
  for (const ThresholdDecl* d : ruleCoreThresholds()) t.add(d);
  for (const Rule* r : ruleRegistry())
    for (const ThresholdDecl* d : r->thresholds()) t.add(d);
  return t;
}

Thresholds Thresholds::of(const std::vector<const ThresholdDecl*>& decls) {
  Thresholds t;
  for (const ThresholdDecl* d : decls) t.add(d);
  return t;
}

double Thresholds::get(const ThresholdDecl& d) const {
  for (const auto& x : t_)
    if (x.decl == &d) return x.value;
  std::fprintf(stderr, "internal error: threshold %s is read but not declared by its reader\n", d.key);
  std::abort();
}

std::optional<double> Thresholds::find(std::string_view key) const {
  for (const auto& x : t_)
    if (x.key() == key) return x.value;
  return std::nullopt;
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
      if (x.key() == key) th = &x;
    auto line = node.source().begin.line;
    if (!th) {
      std::string known;
      std::vector<std::string> keys;
      for (const auto& x : t_) {
        known += (known.empty() ? "" : ", ") + std::string(x.key());
        keys.emplace_back(x.key());
      }
      if (std::string near = nearestName(std::string(key), keys); !near.empty())
        return Error{fmt::format("{}:{}: unknown threshold \"{}\" (did you mean \"{}\"?)", name, line, key, near)};
      return Error{fmt::format("{}:{}: unknown threshold \"{}\" (known: {})", name, line, key, known)};
    }
    std::optional<double> v = node.value<double>();
    if (!v || node.is_boolean()) {
      return Error{fmt::format("{}:{}: threshold \"{}\" must be a number ({}), not {}", name, line, key, th->decl->unit,
                               node.is_string()    ? "a string"
                               : node.is_boolean() ? "a boolean"
                                                   : "this value")};
    }
    if (*v < th->decl->min || *v > th->decl->max)
      return Error{fmt::format("{}:{}: threshold \"{}\" = {} is out of range [{}, {}] ({})", name, line, key, *v,
                               th->decl->min, th->decl->max, th->decl->unit)};
    th->value = *v;
  }
  return {};
}

}  // namespace gpudoctor
