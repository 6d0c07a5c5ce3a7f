#include "diagnosis/nccl_env_check.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "common/exact_time.h"

namespace gpudoctor {

std::string_view envVerdictName(EnvVerdict v) {
  switch (v) {
    case EnvVerdict::kIgnored:
      return "ignored";
    case EnvVerdict::kWrong:
      return "wrong";
    case EnvVerdict::kSlow:
      return "slow";
    case EnvVerdict::kFine:
      return "fine";
    case EnvVerdict::kIntentional:
      return "intentional";
  }
  return "fine";
}

namespace {

std::string upper(std::string_view s) {
  std::string o(s);
  std::transform(o.begin(), o.end(), o.begin(), [](unsigned char c) { return std::toupper(c); });
  return o;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p <= s.size()) {
    size_t q = s.find(sep, p);
    if (q == std::string_view::npos) q = s.size();
    out.emplace_back(s.substr(p, q - p));
    p = q + 1;
  }
  return out;
}

std::string joinNames(const std::vector<std::string>& v) {
  std::string o;
  for (const auto& x : v) o += (o.empty() ? "" : ", ") + x;
  return o.empty() ? "none" : o;
}

class Checker {
 public:
  Checker(const NcclVarTable& t, const EnvCheckOptions& o, const std::vector<NcclSetting>& all) : t_(t), o_(o) {
    for (const auto& s : all) values_[s.name] = s.value;
  }

  void check(const NcclSetting& s) {
    size_t before = out_.size();
    s_ = &s;
    const NcclVarInfo* v = t_.find(s.name);
    if (!v) {
      std::string near = t_.closest(s.name);
      add(EnvVerdict::kIgnored,
          "not an NCCL variable in any release gpudoctor knows" +
              (near.empty() ? std::string() : "; did you mean " + near + "?"),
          near.empty() ? "delete this line" : near + "=" + s.value);
    } else if (v->category == "external") {
      // Not an NCCL setting at all: set by images, build systems or PyTorch.
      if (!v->replacement.empty())
        add(EnvVerdict::kWrong, v->desc + "; the current name is " + v->replacement, v->replacement + "=" + s.value);
      else
        add(EnvVerdict::kFine, "not read by NCCL: " + v->desc, "");
    } else {
      versionChecks(*v);
      valueChecks(*v);
      hostChecks(*v);
      performanceChecks(*v);
      crossChecks();
    }
    bool keep = s.keep || o_.keep.count(s.name);
    if (keep) {
      // The user says this must stay (site policy): report problems as intentional.
      for (size_t i = before; i < out_.size(); ++i)
        if (out_[i].verdict == EnvVerdict::kSlow || out_[i].verdict == EnvVerdict::kFine) {
          out_[i].verdict = EnvVerdict::kIntentional;
          out_[i].fix.clear();
        }
      if (out_.size() == before) add(EnvVerdict::kIntentional, "marked to keep", "");
    }
    if (out_.size() == before) add(EnvVerdict::kFine, v ? v->desc : "", "");
  }

  // NCCL_MIN_x above NCCL_MAX_x: reported on the MIN setting.
  void crossChecks() {
    for (auto [lo, hi] : {std::pair{"NCCL_MIN_CTAS", "NCCL_MAX_CTAS"},
                          {"NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS"},
                          {"NCCL_MIN_P2P_NCHANNELS", "NCCL_MAX_P2P_NCHANNELS"}}) {
      if (s_->name != lo) continue;
      auto b = values_.find(hi);
      if (b == values_.end()) continue;
      auto x = ncclInt(s_->value), y = ncclInt(b->second);
      if (x && y && *x > *y)
        add(EnvVerdict::kWrong, fmt::format("{}={} is above {}={}", lo, *x, hi, *y), fmt::format("{}={}", lo, *y));
    }
  }

  std::vector<EnvFinding> take() { return std::move(out_); }

 private:
  void add(EnvVerdict v, std::string reason, std::string fix) {
    out_.push_back({s_->name, s_->value, s_->origin, v, std::move(reason), std::move(fix)});
  }
  bool set(const std::string& name) const { return values_.count(name) > 0; }
  std::string value(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? "" : it->second;
  }

  void versionChecks(const NcclVarInfo& v) {
    if (v.removed && (o_.version == 0 || o_.version >= v.removed)) {
      add(EnvVerdict::kIgnored,
          fmt::format("removed in NCCL {}{}", ncclVersionString(v.removed),
                      v.replacement.empty() ? "" : "; its replacement is " + v.replacement),
          v.replacement.empty() ? "delete this line" : v.replacement + "=...  # see its meaning first");
      return;
    }
    if (v.since && o_.version && o_.version < v.since && !v.since_is_upper_bound) {
      add(EnvVerdict::kIgnored,
          fmt::format("NCCL {} does not know it: it appeared in {}", ncclVersionString(o_.version),
                      ncclVersionString(v.since)),
          "upgrade NCCL or delete this line");
      return;
    }
    if (v.deprecated && (o_.version == 0 || o_.version >= v.deprecated))
      add(EnvVerdict::kWrong,
          fmt::format("deprecated since NCCL {}{}", ncclVersionString(v.deprecated),
                      v.replacement.empty() ? "" : ": use " + v.replacement),
          v.replacement.empty() ? "" : v.replacement + "=" + s_->value);
  }

  // NCCL reads integers with strtoll(value, NULL, 0): decimal, 0x hex and 0 octal.
  static std::optional<int64_t> ncclInt(const std::string& val) {
    if (val.empty()) return std::nullopt;
    errno = 0;
    char* end = nullptr;
    long long x = std::strtoll(val.c_str(), &end, 0);
    if (errno || end != val.c_str() + val.size()) return std::nullopt;
    return static_cast<int64_t>(x);
  }

  bool validInt(const NcclVarInfo& v, const std::string& val, std::string& why) {
    auto x = ncclInt(val);
    if (!x) {
      why = "\"" + val + "\" is not an integer" +
            (v.type == "size" && !val.empty() && std::isalpha(static_cast<unsigned char>(val.back()))
                 ? " (NCCL takes plain bytes, no K/M/G suffix)"
                 : "");
      return false;
    }
    if (v.min && *x < *v.min)
      why = fmt::format("{} is below the minimum {}", *x, *v.min);
    else if (v.max && *x > *v.max)
      why = fmt::format("{} is above the maximum {}", *x, *v.max);
    else if (v.multiple_of && std::fmod(static_cast<double>(*x), *v.multiple_of) != 0)
      why = fmt::format("{} is not a multiple of {}", *x, *v.multiple_of);
    return why.empty();
  }

  // Names in a "[^]a,b,c" list, with the exclusion flag.
  static std::vector<std::string> listItems(std::string_view val, bool& exclude) {
    exclude = !val.empty() && val.front() == '^';
    if (exclude) val.remove_prefix(1);
    std::vector<std::string> items;
    for (auto& x : split(val, ','))
      if (!x.empty()) items.push_back(x);
    return items;
  }

  void checkNames(const std::vector<std::string>& items, const std::vector<std::string>& known, const char* what) {
    for (const auto& it : items) {
      std::string u = upper(it);
      bool ok = std::any_of(known.begin(), known.end(), [&](const std::string& k) { return upper(k) == u; });
      if (!ok)
        add(EnvVerdict::kWrong, fmt::format("\"{}\" is not a known {} (known: {})", it, what, joinNames(known)), "");
    }
  }

  void valueChecks(const NcclVarInfo& v) {
    const std::string& val = s_->value;
    std::string why;
    if (val.find_first_not_of(" \t") == std::string::npos) {  // NAME= : set, to nothing
      add(EnvVerdict::kWrong,
          "set to an empty value: NCCL sees the variable as set, and what an empty value means differs by "
          "variable and release",
          "unset " + s_->name + " (or give it a value)");
      return;
    }
    if (v.type == "bool") {
      auto x = ncclInt(val);
      if (!x) {
        std::string u = upper(val);
        bool on = u == "TRUE" || u == "YES" || u == "ON" || u == "Y";
        add(EnvVerdict::kWrong, "\"" + val + "\" is not an integer: NCCL reads it as 0 (off)",
            s_->name + (on ? "=1" : "=0"));
      }
    } else if (v.type == "int" || v.type == "size") {
      if (!validInt(v, val, why)) add(EnvVerdict::kWrong, why, "");
    } else if (v.type == "enum") {
      bool exact = std::find(v.values.begin(), v.values.end(), val) != v.values.end();
      if (v.case_sensitive && !exact && std::find(v.values.begin(), v.values.end(), upper(val)) != v.values.end())
        add(EnvVerdict::kWrong, "NCCL compares this value case-sensitively: \"" + val + "\" is not recognized",
            s_->name + "=" + upper(val));
      else if (!exact)
        checkNames({val}, v.values, "value");
    } else if (v.type == "algo" || v.type == "proto") {
      static const std::vector<std::string> kAlgo = {"Tree",     "Ring", "CollnetDirect", "CollnetChain", "NVLS",
                                                     "NVLSTree", "PAT"};
      static const std::vector<std::string> kProto = {"LL", "LL128", "Simple"};
      const auto& known = v.values.empty() ? (v.type == "algo" ? kAlgo : kProto) : v.values;
      // Per-collective form: "allreduce:tree,ring;broadcast:ring".
      for (const auto& part : split(val, ';')) {
        std::string_view p = part;
        if (auto c = p.find(':'); c != std::string_view::npos) p = p.substr(c + 1);
        bool ex;
        checkNames(listItems(p, ex), known, v.type == "algo" ? "algorithm" : "protocol");
      }
    } else if (v.type == "level") {
      static const std::vector<std::string> kLevels = {"LOC", "NVL", "PIX", "PXB", "PHB", "SYS"};
      auto x = ncclInt(val);
      if (x) {
        if (*x < 0 || *x > 5) add(EnvVerdict::kWrong, fmt::format("level {} is outside 0..5", *x), "");
      } else {
        // NCCL compares level names with strcmp: only uppercase works.
        bool exact = std::find(kLevels.begin(), kLevels.end(), val) != kLevels.end();
        bool folded = std::find(kLevels.begin(), kLevels.end(), upper(val)) != kLevels.end();
        if (!exact && folded)
          add(EnvVerdict::kWrong, "NCCL compares level names case-sensitively: \"" + val + "\" is not recognized",
              s_->name + "=" + upper(val));
        else if (!exact)
          checkNames({val}, kLevels, "path level");
      }
    } else if (v.type == "debug") {
      std::vector<std::string> levels =
          v.values.empty() ? std::vector<std::string>{"VERSION", "WARN", "INFO", "TRACE"} : v.values;
      checkNames({val}, levels, "debug level");
    } else if (v.type == "subsys") {
      static const std::vector<std::string> kSubsys = {"INIT",      "COLL", "P2P",     "SHM",  "NET",   "GRAPH",
                                                       "TUNING",    "ENV",  "ALLOC",   "CALL", "PROXY", "NVLS",
                                                       "BOOTSTRAP", "REG",  "PROFILE", "RAS",  "ALL"};
      bool ex;
      checkNames(listItems(val, ex), v.values.empty() ? kSubsys : v.values, "debug subsystem");
    } else if (v.type == "iface_list" || v.type == "hca_list") {
      if (val.empty() || val == "^") add(EnvVerdict::kWrong, "empty list", "");
    }
  }

  void hostChecks(const NcclVarInfo& v) {
    const std::string& val = s_->value;
    if (!o_.host) return;  // settings for another machine: its files and devices are not here
    if (v.type == "path" && s_->name == "NCCL_TOPO_FILE") {
      const HostNet::FileFacts* f = o_.host->file(val);
      if (!f) return;  // not probed: nothing to judge
      if (f->exists && !f->regular) {
        add(EnvVerdict::kWrong, "topology file " + val + " is not a regular file", "");
        return;
      }
      if (!f->readable) {
        add(EnvVerdict::kWrong,
            "topology file " + val + " does not exist or cannot be read: NCCL falls back to detection", "");
        return;
      }
      if (f->head.find("<system") == std::string::npos)
        add(EnvVerdict::kWrong, "topology file " + val + " is not an NCCL topology XML (no <system> element)", "");
      return;
    }
    const HostNet& h = *o_.host;
    if (v.type == "iface_list") {
      bool ex;
      auto items = listItems(val, ex);
      if (ex) return;  // excluding something absent is harmless
      for (auto prefix : items) {
        bool exact = !prefix.empty() && prefix.front() == '=';
        if (exact) prefix.erase(0, 1);
        bool found = std::any_of(h.interfaces.begin(), h.interfaces.end(),
                                 [&](const std::string& i) { return exact ? i == prefix : i.rfind(prefix, 0) == 0; });
        if (!found)
          add(EnvVerdict::kWrong,
              fmt::format("no interface {} \"{}\" on this host (it has: {})", exact ? "named" : "starting with", prefix,
                          joinNames(h.interfaces)),
              "");
      }
    } else if (v.type == "hca_list") {
      bool ex;
      auto items = listItems(val, ex);
      if (ex) return;
      for (auto item : items) {
        bool exact = !item.empty() && item.front() == '=';
        if (exact) item.erase(0, 1);
        std::string dev = item;
        int port = 0;
        if (auto c = item.find(':'); c != std::string::npos) {
          dev = item.substr(0, c);
          port = std::atoi(item.c_str() + c + 1);
        }
        std::vector<std::string> names;
        bool found = false, active = false;
        for (const auto& d : h.ib) {
          names.push_back(d.name);
          if (exact ? d.name != dev : d.name.rfind(dev, 0) != 0) continue;
          found = true;
          for (const auto& p : d.ports)
            if ((port == 0 || p.port == port) && p.state == "ACTIVE") active = true;
        }
        if (!found)
          add(EnvVerdict::kWrong, fmt::format("no HCA \"{}\" on this host (it has: {})", dev, joinNames(names)), "");
        else if (!active)
          add(EnvVerdict::kWrong,
              fmt::format("HCA {}{} has no ACTIVE port", dev, port ? ":" + std::to_string(port) : ""), "");
      }
    } else if (s_->name == "NCCL_IB_DISABLE" && val == "1" && h.any_active_ib() && o_.multi_node) {
      add(EnvVerdict::kSlow, "InfiniBand is up on this host but disabled: a multi-node job falls back to TCP sockets",
          "unset NCCL_IB_DISABLE");
    } else if ((s_->name == "NCCL_NET_GDR_LEVEL" || s_->name == "NCCL_NET_GDR_READ") &&
               (h.ib.empty() || value("NCCL_IB_DISABLE") == "1")) {
      add(EnvVerdict::kIgnored,
          h.ib.empty() ? "GPUDirect RDMA needs an RDMA NIC and this host has none"
                       : "GPUDirect RDMA cannot act: IB is disabled",
          "delete this line");
    }
  }

  void performanceChecks(const NcclVarInfo& v) {
    const std::string& val = s_->value;
    if (v.type == "algo" || v.type == "proto") {
      bool per_coll = val.find(':') != std::string::npos;
      bool ex;
      auto items = listItems(val, ex);
      if (!per_coll && !ex && items.size() == 1)
        add(EnvVerdict::kSlow,
            fmt::format("forces {} for every collective and message size; NCCL's choice varies with size",
                        items.front()),
            "unset " + s_->name + "   # per-size choices belong in a tuner plugin");
    } else if ((s_->name == "NCCL_MAX_CTAS" || s_->name == "NCCL_MAX_NCHANNELS") && parseInt64(val) &&
               *parseInt64(val) < 8) {
      add(EnvVerdict::kSlow,
          fmt::format("caps NCCL at {} channels; NVLink and NVSwitch systems use 16-32 for bandwidth", val),
          "unset " + s_->name);
    } else if (v.type == "debug" && (upper(val) == "INFO" || upper(val) == "TRACE")) {
      add(EnvVerdict::kSlow, "debug logging left on: slows initialization and floods logs in production",
          s_->name + "=WARN");
    } else if (v.type == "subsys" && upper(val).find("ALL") != std::string::npos && val.front() != '^') {
      add(EnvVerdict::kSlow, "every debug subsystem is logged", "unset " + s_->name);
    } else if (s_->name == "NCCL_P2P_DISABLE" && val == "1") {
      add(EnvVerdict::kSlow, "GPU-to-GPU traffic is forced through host memory instead of NVLink/PCIe peer access",
          "unset NCCL_P2P_DISABLE");
    } else if (s_->name == "NCCL_SHM_DISABLE" && val == "1" && !o_.multi_node) {
      add(EnvVerdict::kSlow, "intra-node traffic without P2P falls back to the network instead of shared memory",
          "unset NCCL_SHM_DISABLE");
    }
  }

  const NcclVarTable& t_;
  const EnvCheckOptions& o_;
  std::map<std::string, std::string> values_;
  const NcclSetting* s_ = nullptr;
  std::vector<EnvFinding> out_;
};

}  // namespace

std::vector<EnvFinding> checkNcclEnv(const std::vector<NcclSetting>& settings, const NcclVarTable& table,
                                     const EnvCheckOptions& opt) {
  Checker c(table, opt, settings);
  for (const auto& s : settings) c.check(s);
  return c.take();
}

}  // namespace gpudoctor
