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

// The settings read so far, in the order their names were first set: a later setting of a name
// replaces the earlier one in place, as in a shell.
class Settings {
 public:
  void put(NcclSetting s) {
    auto it = index_.find(s.name);
    if (it != index_.end()) {
      out_[it->second] = std::move(s);
    } else {
      index_.emplace(s.name, out_.size());
      out_.push_back(std::move(s));
    }
  }
  void unset(const std::string& var) {
    auto it = index_.find(var);
    if (it == index_.end()) return;
    out_.erase(out_.begin() + static_cast<long>(it->second));
    index_.clear();
    for (size_t i = 0; i < out_.size(); ++i) index_[out_[i].name] = i;
  }
  std::vector<NcclSetting> take() { return std::move(out_); }

 private:
  std::vector<NcclSetting> out_;
  std::map<std::string, size_t> index_;
};

// One line of the text: where it is ("name:line"), and the error that quotes it.
struct Line {
  std::string_view raw;
  std::string where;
  Error bad(const std::string& why) const {
    return Error{where + ": " + why + ": " + std::string(trim(raw).substr(0, 120))};
  }
};

// A Kubernetes "- name: NCCL_X" waiting for its "value:" line.
struct PendingYaml {
  std::string name;
  size_t line = 0;
  Error unanswered(const std::string& file) const {
    return Error{file + ":" + std::to_string(line) + ": \"- name: " + name + "\" has no \"value:\" line"};
  }
};

// NCCL's own log: "... NCCL INFO NCCL_X set by environment to VALUE."; false: not such a line.
Result<bool> logSetting(const Line& l, Settings& s) {
  size_t k = l.raw.find(" set by environment to ");
  if (k == std::string_view::npos) return false;
  size_t b = l.raw.rfind("NCCL_", k);
  if (b == std::string_view::npos) return l.bad("cannot find the variable name");
  std::string_view var = l.raw.substr(b, k - b);
  std::string_view val = trim(l.raw.substr(k + 23));
  if (!val.empty() && val.back() == '.') val.remove_suffix(1);
  s.put({std::string(var), std::string(val), l.where, false});
  return true;
}

// Kubernetes env list: "name: NCCL_X" then "value: Y" (their list dash already taken off), or
// "valueFrom:" (set from a ConfigMap or Secret: the value is not in this file); false: another line.
Result<bool> yamlLine(const Line& l, std::string_view line, bool keep, const std::string& file, size_t lineno,
                      PendingYaml& pending, Settings& s) {
  if (line.substr(0, 5) == "name:") {
    if (!pending.name.empty()) return pending.unanswered(file);
    std::string v;
    if (!unquote(trim(line.substr(5)), v)) return l.bad("unbalanced quotes");
    if (v.rfind("NCCL_", 0) == 0) {
      pending.name = v;
      pending.line = lineno;
    }
    return true;
  }
  if (line.substr(0, 10) == "valueFrom:") {
    pending.name.clear();
    return true;
  }
  if (line.substr(0, 6) == "value:") {
    if (pending.name.empty()) return true;
    std::string v;
    if (!unquote(trim(line.substr(6)), v)) return l.bad("unbalanced quotes");
    s.put({pending.name, v, file + ":" + std::to_string(pending.line), keep});
    pending.name.clear();
    return true;
  }
  return false;
}

// Slurm: --export=ALL,NCCL_A=1,NCCL_B=2 (values cannot hold commas there); `list` follows "--export=".
Status exportList(const Line& l, std::string_view list, bool keep, Settings& s) {
  list = list.substr(0, list.find(' '));
  size_t p = 0;
  while (p <= list.size()) {
    size_t c = list.find(',', p);
    if (c == std::string_view::npos) c = list.size();
    std::string_view item = list.substr(p, c - p);
    p = c + 1;
    size_t eq = item.find('=');
    if (item.rfind("NCCL_", 0) != 0) continue;
    if (eq == std::string_view::npos) return l.bad("\"" + std::string(item) + "\" has no value");
    s.put({std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)), l.where, keep});
  }
  return {};
}

// "unset NAME ...": the settings are gone, as in a shell; `rest` follows "unset ".
void unsetNames(std::string_view rest, Settings& s) {
  std::vector<std::string> names;
  size_t p = 0;
  while (p < rest.size()) {
    while (p < rest.size() && (rest[p] == ' ' || rest[p] == '\t')) ++p;
    size_t q = p;
    while (q < rest.size() && rest[q] != ' ' && rest[q] != '\t') ++q;
    if (q > p) names.emplace_back(rest.substr(p, q - p));
    p = q;
  }
  for (const auto& var : names) s.unset(var);
}

// One or more NAME=VALUE words (values may be quoted and contain spaces), up to the first word
// that is not one.
Status assignments(const Line& l, std::string_view line, bool keep, Settings& s) {
  size_t i = 0;
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
    if (!unquote(line.substr(vs, i - vs), v)) return l.bad("unbalanced quotes");
    if (var.rfind("NCCL_", 0) == 0) s.put({std::string(var), v, l.where, keep});
  }
  return {};
}

// Shell: [export|declare -x|typeset -x] NAME=VALUE [NAME=VALUE ...]; csh "setenv NAME VALUE".
Status shellLine(const Line& l, std::string_view line, bool keep, Settings& s) {
  for (std::string_view prefix : {"export ", "declare -x ", "typeset -x "})
    if (line.substr(0, prefix.size()) == prefix) line = trim(line.substr(prefix.size()));
  if (line.substr(0, 7) == "setenv ") {
    std::string_view rest = trim(line.substr(7));
    size_t sp = rest.find_first_of(" \t");
    if (sp == std::string_view::npos) return l.bad("setenv without a value");
    std::string v;
    if (!unquote(trim(rest.substr(sp)), v)) return l.bad("unbalanced quotes");
    if (rest.substr(0, 5) == "NCCL_") s.put({std::string(rest.substr(0, sp)), v, l.where, keep});
    return {};
  }
  return assignments(l, line, keep, s);
}

}  // namespace

Result<std::vector<NcclSetting>> readNcclSettings(std::string_view text, const std::string& name) {
  Settings settings;
  PendingYaml pending;
  size_t lineno = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view raw = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++lineno;
    const Line l{raw, name + ":" + std::to_string(lineno)};
    if (l.raw.find("NCCL_") == std::string_view::npos && pending.name.empty()) continue;
    // Shell lines that read or test a variable rather than set it ($NCCL_X, ${NCCL_X}) are not settings.
    if (l.raw.find("$NCCL_") != std::string_view::npos || l.raw.find("${NCCL_") != std::string_view::npos) continue;
    ASSIGN_OR_RETURN(bool logged, logSetting(l, settings));
    if (logged) continue;
    bool keep = false;
    std::string_view line = trim(stripComment(l.raw, keep));
    if (line.empty()) continue;
    if (line.substr(0, 2) == "- ") line = trim(line.substr(2));  // a YAML list item
    ASSIGN_OR_RETURN(bool yaml, yamlLine(l, line, keep, name, lineno, pending, settings));
    if (yaml) continue;
    if (!pending.name.empty()) return l.bad("\"- name: " + pending.name + "\" has no \"value:\" line");
    if (size_t k = line.find("--export="); k != std::string_view::npos) {
      RETURN_IF_ERROR(exportList(l, line.substr(k + 9), keep, settings));
      continue;
    }
    if (line.substr(0, 6) == "unset ") {
      unsetNames(line.substr(6), settings);
      continue;
    }
    RETURN_IF_ERROR(shellLine(l, line, keep, settings));
  }
  if (!pending.name.empty()) return pending.unanswered(name);
  return settings.take();
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
