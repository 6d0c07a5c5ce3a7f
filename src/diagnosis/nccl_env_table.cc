#include "diagnosis/nccl_env_table.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <toml++/toml.h>

namespace gpudoctor {

extern const char* const kNcclEnvTableToml;  // generated from data/nccl_env.toml

Result<NcclVarTable> NcclVarTable::parse(std::string_view text, const std::string& name) {
  toml::table doc;
  try {
    doc = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    return Error{name + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description())};
  }
  NcclVarTable t;
  for (const auto& [k, node] : doc) {
    const toml::table* e = node.as_table();
    std::string var(k.str());
    if (!e) return Error{name + ": " + var + " is not a table"};
    NcclVarInfo v;
    v.name = var;
    auto str = [&](const char* key) {
      return std::string(e->get(key) ? e->get(key)->value_or<std::string_view>("") : "");
    };
    v.type = str("type");
    v.category = str("category");
    v.desc = str("desc");
    v.default_value = str("default");
    v.replacement = str("replacement");
    for (auto [key, out] : {std::pair{"since", &v.since}, {"deprecated", &v.deprecated}, {"removed", &v.removed}}) {
      std::string s = str(key);
      if (s.empty()) continue;
      auto ver = parseNcclVersion(s);
      if (!ver.ok()) return Error{name + ": " + var + "." + key + ": " + ver.error().message};
      *out = ver.value();
    }
    for (auto [key, out] : {std::pair{"min", &v.min}, {"max", &v.max}, {"multiple_of", &v.multiple_of}})
      if (auto* n = e->get(key)) {
        auto d = n->value<double>();
        if (!d) return Error{name + ": " + var + "." + key + " is not a number"};
        *out = *d;
      }
    if (auto* b = e->get("since_is_upper_bound")) v.since_is_upper_bound = b->value_or(false);
    if (auto* b = e->get("case_sensitive")) v.case_sensitive = b->value_or(false);
    if (auto* arr = e->get_as<toml::array>("values"))
      for (const auto& x : *arr)
        if (auto s = x.value<std::string>()) v.values.push_back(*s);
    if (v.type.empty()) return Error{name + ": " + var + " has no type"};
    t.vars_.push_back(std::move(v));
  }
  std::sort(t.vars_.begin(), t.vars_.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return t;
}

const NcclVarTable& NcclVarTable::builtin() {
  static const NcclVarTable table = [] {
    auto t = parse(kNcclEnvTableToml, "data/nccl_env.toml");
    if (!t.ok()) {
      std::fprintf(stderr, "internal error: built-in NCCL table: %s\n", t.error().message.c_str());
      std::abort();
    }
    return std::move(t.value());
  }();
  return table;
}

const NcclVarInfo* NcclVarTable::find(std::string_view name) const {
  auto it =
      std::lower_bound(vars_.begin(), vars_.end(), name, [](const auto& v, std::string_view n) { return v.name < n; });
  return it != vars_.end() && it->name == name ? &*it : nullptr;
}

namespace {
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::string NcclVarTable::closest(std::string_view name) const {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const auto& v : vars_) {
    size_t d = editDistance(name, v.name);
    if (d < best_d) {
      best_d = d;
      best = v.name;
    }
  }
  size_t allowed = std::max<size_t>(2, (name.size() > 5 ? name.size() - 5 : 0) / 3);
  return best_d <= allowed ? best : "";
}

}  // namespace gpudoctor
