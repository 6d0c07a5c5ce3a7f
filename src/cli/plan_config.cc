// `gpudoctor plan --config FILE`: the flags' settings from a TOML file (`model = "llama2-7b"`,
// `nodes = 4`, ...).
#include <algorithm>
#include <map>

#include <toml++/toml.h>

#include "cli/plan_args.h"

namespace gpudoctor::cli {

Status applyPlanConfig(const std::string& path, PlanArgs& a, const CLI::App& cmd) {
  toml::table doc;
  try {
    doc = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    auto line = e.source().begin.line;
    return Error{path + (line ? ":" + std::to_string(line) : std::string()) + ": " + std::string(e.description())};
  }
  auto given = [&](const std::string& flag) {
    const CLI::Option* o = cmd.get_option_no_throw("--" + flag);
    return o && o->count() > 0;
  };
  for (const auto& [k, node] : doc) {
    std::string key(k.str()), flag = key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    auto line = std::to_string(node.source().begin.line);
    auto wrong = [&](const char* what) { return Error{path + ":" + line + ": \"" + key + "\" must be " + what}; };
    std::map<std::string, int64_t*> ints = {{"layers", &a.layers},
                                            {"hidden", &a.hidden},
                                            {"heads", &a.heads},
                                            {"kv_heads", &a.kv_heads},
                                            {"ffn", &a.ffn},
                                            {"vocab", &a.vocab},
                                            {"seq", &a.seq},
                                            {"global_batch", &a.global_batch},
                                            {"global_batch_tokens", &a.global_batch_tokens}};
    std::map<std::string, double*> reals = {{"gpu_memory_gb", &a.gpu_memory_gb}, {"tflops", &a.tflops},
                                            {"efficiency", &a.efficiency},       {"intra_gbps", &a.intra_gbps},
                                            {"inter_gbps", &a.inter_gbps},       {"memory_limit", &a.memory_limit}};
    std::map<std::string, std::string*> strs = {
        {"model", &a.model}, {"gpu", &a.gpu}, {"precision", &a.precision}, {"optimizer", &a.optimizer}};
    if (given(flag)) continue;
    a.given.insert("--" + flag);
    if (auto it = ints.find(key); it != ints.end()) {
      auto v = node.value<int64_t>();
      if (!v || !node.is_integer() || *v < 1) return wrong("a positive integer");
      *it->second = *v;
    } else if (auto r = reals.find(key); r != reals.end()) {
      auto v = node.value<double>();
      if (!v || node.is_boolean() || !(*v > 0)) return wrong("a positive number");
      if (key == "efficiency" && *v > 1) return wrong("a fraction of peak in (0, 1]");
      if (key == "memory_limit" && (*v < 0.1 || *v > 1)) return wrong("a share from 0.1 to 1");
      *r->second = *v;
    } else if (auto s = strs.find(key); s != strs.end()) {
      auto v = node.value<std::string>();
      if (!v) return wrong("a string");
      *s->second = *v;
    } else if (key == "gpus_per_node" || key == "nodes") {
      auto v = node.value<int64_t>();
      if (!v || !node.is_integer() || *v < 1) return wrong("a positive integer");
      (key == "nodes" ? a.nodes : a.gpus_per_node) = static_cast<int>(*v);
    } else if (key == "flash_attention" || key == "fp32_grads") {
      auto v = node.value<bool>();
      if (!v) return wrong("true or false");
      if (key == "flash_attention")
        a.no_flash = !*v;
      else
        a.fp32_grads = *v;
    } else {
      return Error{path + ":" + line + ": unknown key \"" + key + "\" (keys are the flag names with _ for -)"};
    }
  }
  return {};
}

}  // namespace gpudoctor::cli
