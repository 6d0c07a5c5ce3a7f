#include "sources/nccl_env/settings_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

extern char** environ;

namespace gpudoctor {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool isNameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || (c >= 'a' && c <= 'z');
}

// Removes one level of shell quoting; false when quotes are unbalanced.
bool unquote(std::string_view v, std::string& out) {
  out.clear();
  char q = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    char c = v[i];
    if (q) {
      if (c == q)
        q = 0;
      else if (c == '\\' && q == '"' && i + 1 < v.size())
        out += v[++i];
      else
        out += c;
    } else if (c == '"' || c == '\'') {
      q = c;
    } else if (c == '\\' && i + 1 < v.size()) {
      out += v[++i];
    } else {
      out += c;
    }
  }
  return q == 0;
}

// Splits a trailing shell comment off (outside quotes).
std::string_view stripComment(std::string_view line, bool& keep) {
  char q = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (q) {
      if (c == q) q = 0;
    } else if (c == '"' || c == '\'') {
      q = c;
    } else if (c == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
      std::string_view comment = line.substr(i);
      keep = comment.find("gpudoctor: keep") != std::string_view::npos ||
             comment.find("gpudoctor:keep") != std::string_view::npos;
      return line.substr(0, i);
    }
  }
  return line;
}

}  // namespace

Result<std::vector<NcclSetting>> readNcclSettings(std::string_view text, const std::string& name) {
  std::vector<NcclSetting> out;
  std::map<std::string, size_t> index;
  auto put = [&](NcclSetting s) {
    auto it = index.find(s.name);
    if (it != index.end()) {
      out[it->second] = std::move(s);
    } else {
      index.emplace(s.name, out.size());
      out.push_back(std::move(s));
    }
  };
  std::string pending_yaml_name;  // "- name: NCCL_X" waiting for its "value:"
  size_t pending_line = 0;
  size_t lineno = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view raw = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++lineno;
    std::string where = name + ":" + std::to_string(lineno);
    auto bad = [&](const std::string& why) {
      return Error{where + ": " + why + ": " + std::string(trim(raw).substr(0, 120))};
    };
    if (raw.find("NCCL_") == std::string_view::npos && pending_yaml_name.empty()) continue;
    // Shell lines that read or test a variable rather than set it ($NCCL_X, ${NCCL_X}) are not settings.
    if (raw.find("$NCCL_") != std::string_view::npos || raw.find("${NCCL_") != std::string_view::npos) continue;

    // NCCL's own log: "... NCCL INFO NCCL_X set by environment to VALUE."
    if (size_t k = raw.find(" set by environment to "); k != std::string_view::npos) {
      size_t b = raw.rfind("NCCL_", k);
      if (b == std::string_view::npos) return bad("cannot find the variable name");
      std::string_view var = raw.substr(b, k - b);
      std::string_view val = trim(raw.substr(k + 23));
      if (!val.empty() && val.back() == '.') val.remove_suffix(1);
      put({std::string(var), std::string(val), where, false});
      continue;
    }
    bool keep = false;
    std::string_view line = trim(stripComment(raw, keep));
    if (line.empty()) continue;

    // Kubernetes env list: "- name: NCCL_X" then "value: Y".
    if (line.substr(0, 2) == "- ") line = trim(line.substr(2));
    if (line.substr(0, 5) == "name:") {
      if (!pending_yaml_name.empty())
        return Error{name + ":" + std::to_string(pending_line) + ": \"- name: " + pending_yaml_name +
                     "\" has no \"value:\" line"};
      std::string v;
      if (!unquote(trim(line.substr(5)), v)) return bad("unbalanced quotes");
      if (v.rfind("NCCL_", 0) == 0) {
        pending_yaml_name = v;
        pending_line = lineno;
      }
      continue;
    }
    if (line.substr(0, 10) == "valueFrom:") {
      pending_yaml_name.clear();  // set from a ConfigMap or Secret: the value is not in this file
      continue;
    }
    if (line.substr(0, 6) == "value:") {
      if (pending_yaml_name.empty()) continue;
      std::string v;
      if (!unquote(trim(line.substr(6)), v)) return bad("unbalanced quotes");
      put({pending_yaml_name, v, name + ":" + std::to_string(pending_line), keep});
      pending_yaml_name.clear();
      continue;
    }
    if (!pending_yaml_name.empty()) return bad("\"- name: " + pending_yaml_name + "\" has no \"value:\" line");

    // Slurm: --export=ALL,NCCL_A=1,NCCL_B=2 (values cannot hold commas there).
    if (size_t k = line.find("--export="); k != std::string_view::npos) {
      std::string_view list = line.substr(k + 9);
      list = list.substr(0, list.find(' '));
      size_t p = 0;
      while (p <= list.size()) {
        size_t c = list.find(',', p);
        if (c == std::string_view::npos) c = list.size();
        std::string_view item = list.substr(p, c - p);
        p = c + 1;
        size_t eq = item.find('=');
        if (item.rfind("NCCL_", 0) != 0) continue;
        if (eq == std::string_view::npos) return bad("\"" + std::string(item) + "\" has no value");
        put({std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)), where, keep});
      }
      continue;
    }

    // "unset NAME": the setting is gone, as in a shell.
    if (line.substr(0, 6) == "unset ") {
      for (const auto& var : [&] {
             std::vector<std::string> v;
             std::string_view rest = line.substr(6);
             size_t p = 0;
             while (p < rest.size()) {
               while (p < rest.size() && (rest[p] == ' ' || rest[p] == '\t')) ++p;
               size_t q = p;
               while (q < rest.size() && rest[q] != ' ' && rest[q] != '\t') ++q;
               if (q > p) v.emplace_back(rest.substr(p, q - p));
               p = q;
             }
             return v;
           }()) {
        auto it = index.find(var);
        if (it == index.end()) continue;
        out.erase(out.begin() + static_cast<long>(it->second));
        index.clear();
        for (size_t i = 0; i < out.size(); ++i) index[out[i].name] = i;
      }
      continue;
    }
    // Shell: [export|declare -x|setenv] NAME=VALUE [NAME=VALUE ...]; csh "setenv NAME VALUE".
    for (std::string_view prefix : {"export ", "declare -x ", "typeset -x "})
      if (line.substr(0, prefix.size()) == prefix) line = trim(line.substr(prefix.size()));
    if (line.substr(0, 7) == "setenv ") {
      std::string_view rest = trim(line.substr(7));
      size_t sp = rest.find_first_of(" \t");
      if (sp == std::string_view::npos) return bad("setenv without a value");
      std::string v;
      if (!unquote(trim(rest.substr(sp)), v)) return bad("unbalanced quotes");
      if (rest.substr(0, 5) == "NCCL_") put({std::string(rest.substr(0, sp)), v, where, keep});
      continue;
    }
    // One or more NAME=VALUE words (values may be quoted and contain spaces).
    size_t i = 0;
    bool any = false;
    while (i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      size_t ns = i;
      while (i < line.size() && isNameChar(line[i])) ++i;
      std::string_view var = line.substr(ns, i - ns);
      if (i >= line.size() || line[i] != '=' || var.empty()) {
        // "export NCCL_X" marks an existing variable for export: no value here, nothing to judge.
        break;  // or a command follows the assignments (NCCL_X=1 python train.py)
      }
      ++i;
      size_t vs = i;
      char q = 0;
      while (i < line.size() && (q || (line[i] != ' ' && line[i] != '\t'))) {
        if (q) {
          if (line[i] == q) q = 0;
        } else if (line[i] == '"' || line[i] == '\'') {
          q = line[i];
        }
        ++i;
      }
      std::string v;
      if (!unquote(line.substr(vs, i - vs), v)) return bad("unbalanced quotes");
      if (var.rfind("NCCL_", 0) == 0) {
        put({std::string(var), v, where, keep});
        any = true;
      }
    }
    (void)any;
  }
  if (!pending_yaml_name.empty())
    return Error{name + ":" + std::to_string(pending_line) + ": \"- name: " + pending_yaml_name +
                 "\" has no \"value:\" line"};
  return out;
}

Result<std::vector<NcclSetting>> readNcclSettingsFile(const std::string& path) {
  FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) return Error{path + ": cannot open: " + std::strerror(errno)};
  std::string text;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    text.append(buf, n);
    if (text.size() > (64u << 20)) {
      if (f != stdin) std::fclose(f);
      return Error{path + ": larger than 64 MiB: not a settings file"};
    }
  }
  bool err = std::ferror(f);
  if (f != stdin) std::fclose(f);
  if (err) return Error{path + ": read failed"};
  if (text.find('\0') != std::string::npos) return Error{path + ": binary data, not a settings file"};
  return readNcclSettings(text, path == "-" ? "stdin" : path);
}

std::vector<NcclSetting> ncclSettingsFromEnvironment() {
  std::vector<NcclSetting> out;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    if (kv.rfind("NCCL_", 0) != 0) continue;
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    out.push_back({std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)), "env", false});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

}  // namespace gpudoctor
