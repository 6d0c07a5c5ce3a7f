// The topology file parser's internals (internal to sources/topology_file/): the file:line that
// errors name, the typed reader of one table's keys, and the node file's parser.
#pragma once
#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include <toml++/toml.h>

#include "common/result.h"
#include "model/topology.h"

namespace gpudoctor::topology_file_detail {

// Errors carry "file:line: " where the line is known (TOML); JSON input has no line numbers, so
// its messages name the key path instead.
struct Ctx {
  std::string file;
  std::string at(const toml::node& n) const {
    auto line = n.source().begin.line;
    return line ? file + ":" + std::to_string(line) : file;
  }
};

// Reads typed fields of one table, remembering which keys were used so leftovers are reported.
class Fields {
 public:
  Fields(const Ctx& c, const toml::table& t, std::string where) : c_(c), t_(t), where_(std::move(where)) {}
  Status integer(const char* key, int* out, bool required = false, int lo = INT32_MIN, int hi = INT32_MAX) {
    used_.insert(key);
    const toml::node* n = t_.get(key);
    if (!n) return required ? missing(key) : Status{};
    auto v = n->value<int64_t>();
    if (!n->is_integer() || !v || *v < lo || *v > hi)
      return Error{c_.at(*n) + ": \"" + std::string(key) + "\" in " + where_ + " must be an integer" +
                   (lo > INT32_MIN ? " >= " + std::to_string(lo) : std::string())};
    *out = static_cast<int>(*v);
    return {};
  }
  Status number(const char* key, double* out, double lo = 0) {
    used_.insert(key);
    const toml::node* n = t_.get(key);
    if (!n) return {};
    auto v = n->value<double>();
    if (!v || n->is_boolean() || *v < lo)
      return Error{c_.at(*n) + ": \"" + std::string(key) + "\" in " + where_ + " must be a number >= " + fmtNum(lo)};
    *out = *v;
    return {};
  }
  Status string(const char* key, std::string* out, bool required = false) {
    used_.insert(key);
    const toml::node* n = t_.get(key);
    if (!n) return required ? missing(key) : Status{};
    auto v = n->value<std::string>();
    if (!v) return Error{c_.at(*n) + ": \"" + std::string(key) + "\" in " + where_ + " must be a string"};
    *out = *v;
    return {};
  }
  Status boolean(const char* key, bool* out) {
    used_.insert(key);
    const toml::node* n = t_.get(key);
    if (!n) return {};
    auto v = n->value<bool>();
    if (!v) return Error{c_.at(*n) + ": \"" + std::string(key) + "\" in " + where_ + " must be true or false"};
    *out = *v;
    return {};
  }
  // The array under key, or null when absent; present but not an array: null, and unknown() reports it.
  const toml::array* array(const char* key) {
    used_.insert(key);
    const toml::node* n = t_.get(key);
    if (n && !n->is_array() && bad_.empty())
      bad_ = c_.at(*n) + ": \"" + std::string(key) + "\" in " + where_ + " must be an array";
    return n ? n->as_array() : nullptr;
  }
  const toml::node* node(const char* key) {
    used_.insert(key);
    return t_.get(key);
  }
  // An error for the first key nobody asked for (a typo would otherwise be silently ignored).
  Status unknown() const {
    if (!bad_.empty()) return Error{bad_};
    for (const auto& [k, v] : t_)
      if (!used_.count(std::string(k.str())))
        return Error{c_.at(v) + ": unknown key \"" + std::string(k.str()) + "\" in " + where_};
    return {};
  }
  std::string at() const { return c_.at(t_); }

 private:
  static std::string fmtNum(double v) {
    std::ostringstream o;
    o << v;
    return o.str();
  }
  Status missing(const char* key) const { return Error{c_.at(t_) + ": " + where_ + " needs \"" + key + "\""}; }
  const Ctx& c_;
  const toml::table& t_;
  std::string where_;
  std::set<std::string> used_;
  std::string bad_;  // the first key of the wrong type (array() cannot return an error itself)
};

// A node file's keys (NodeTopology), its GPUs, links, PCIe tree, NUMA nodes, NICs and free GPUs,
// validated; `top` is the document's table (its keys marked used).
Result<NodeTopology> parseNode(const Ctx& c, Fields& top);

}  // namespace gpudoctor::topology_file_detail
