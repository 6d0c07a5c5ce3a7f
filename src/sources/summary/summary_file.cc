#include "sources/summary/summary_file.h"

#include <simdjson.h>

#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "sources/byte_stream.h"

namespace gpudoctor {

bool isSummaryHead(std::string_view head) {
  size_t p = 0;
  while (p < head.size() && (head[p] == ' ' || head[p] == '\n' || head[p] == '\r' || head[p] == '\t')) ++p;
  head.remove_prefix(p);
  const std::string_view want = R"({"format":"gpudoctor-summary")";
  return head.substr(0, want.size()) == want;
}

std::string summaryLine(const RankDigest& d) {
  nlohmann::json j;
  j["rank"] = d.rank;
  j["world_size"] = d.world_size;
  j["path"] = d.path;
  j["device"] = std::string(d.device);
  j["input_bytes"] = d.input_bytes;
  j["left_out"] = std::string(d.left_out);
  auto& steps = j["steps"] = nlohmann::json::array();
  for (const auto& s : d.steps)
    steps.push_back({s.number, s.wall, s.compute, s.comm_exposed, s.copies, s.idle_host, s.idle_sync, s.idle_dependency,
                     s.idle_other, s.idle_host_loader, s.idle_sync_loader});
  auto& groups = j["groups"] = nlohmann::json::array();
  for (const auto& g : d.groups)
    groups.push_back({{"name", g.name}, {"desc", std::string(g.desc)}, {"size", g.size}, {"position", g.position}});
  auto& colls = j["collectives"] = nlohmann::json::array();
  for (const auto& c : d.collectives) colls.push_back({c.group, c.seq, c.step, c.dur_ns});
  auto& classes = j["classes"] = nlohmann::json::array();
  for (const auto& c : d.classes) classes.push_back({std::string(c.name), c.count, c.total_ns});
  auto& job = j["job"] = nlohmann::json::array();
  for (const auto& [k, v] : jobPairs(d)) job.push_back({k, v});
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// Reads the fixed-shape parts of a line, failing with the first field that is missing or mistyped.
struct LineParser {
  std::string where;
  std::string err;

  bool fail(const std::string& what) {
    if (err.empty()) err = where + ": " + what;
    return false;
  }
  // (A simdjson_result, not an element: a missing key must be an error, not an exception.)
  bool i64(simdjson::simdjson_result<simdjson::dom::element> e, int64_t& out, const char* what) {
    if (e.get_int64().get(out)) return fail(std::string(what) + " is missing or not an integer");
    return true;
  }
  bool i64(simdjson::dom::element e, int64_t& out, const char* what) {
    if (e.get_int64().get(out)) return fail(std::string(what) + " is not an integer");
    return true;
  }
  bool str(simdjson::dom::object o, const char* key, std::string& out) {
    std::string_view s;
    if (o[key].get_string().get(s)) return fail(std::string("\"") + key + "\" is missing or not a string");
    out = s;
    return true;
  }
  bool arr(simdjson::dom::object o, const char* key, simdjson::dom::array& out) {
    if (o[key].get_array().get(out)) return fail(std::string("\"") + key + "\" is missing or not an array");
    return true;
  }
  // An array of exactly n integers.
  bool ints(simdjson::dom::element e, int64_t* out, size_t n, const char* what) {
    simdjson::dom::array a;
    if (e.get_array().get(a) || a.size() != n)
      return fail(std::string(what) + " is not an array of " + std::to_string(n) + " integers");
    size_t k = 0;
    for (auto v : a)
      if (!i64(v, out[k++], what)) return false;
    return true;
  }
};

}  // namespace

Result<RankDigest> parseSummaryLine(std::string_view line, const std::string& where) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(line.data(), line.size(), true).get(root)) return Error{where + ": not valid JSON"};
  simdjson::dom::object o;
  if (root.get_object().get(o)) return Error{where + ": not a JSON object"};
  LineParser p{where, {}};
  RankDigest d;
  int64_t v = 0;
  simdjson::dom::array steps, groups, colls, classes, job;
  bool ok = p.i64(o["rank"], v, "\"rank\"") && v >= 0 && v <= INT32_MAX ? (d.rank = static_cast<int>(v), true)
                                                                        : p.fail("\"rank\" is not a rank number");
  ok = ok && p.i64(o["world_size"], v, "\"world_size\"") && (v == -1 || (v > 0 && v <= INT32_MAX))
           ? (d.world_size = static_cast<int>(v), true)
           : p.fail("\"world_size\" is not -1 or a positive count");
  std::string device, left_out;
  ok = ok && p.str(o, "path", d.path) && p.str(o, "device", device) && p.str(o, "left_out", left_out);
  d.device = internText(device);
  d.left_out = internText(left_out);
  ok = ok && p.i64(o["input_bytes"], v, "\"input_bytes\"") && v >= 0 ? (d.input_bytes = static_cast<uint64_t>(v), true)
                                                                     : p.fail("\"input_bytes\" is not a byte count");
  ok = ok && p.arr(o, "steps", steps) && p.arr(o, "groups", groups) && p.arr(o, "collectives", colls) &&
       p.arr(o, "classes", classes) && p.arr(o, "job", job);
  if (!ok) return Error{p.err};
  for (auto s : steps) {
    int64_t f[11];
    if (!p.ints(s, f, 11, "a step")) return Error{p.err};
    for (size_t k = 1; k < 11; ++k)
      if (f[k] < 0) return Error{where + ": a step has a negative figure"};
    d.steps.push_back({f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10]});
  }
  for (auto g : groups) {
    simdjson::dom::object go;
    if (g.get_object().get(go)) return Error{where + ": a group is not an object"};
    DigestGroup dg;
    int64_t size = 0, position = 0;
    std::string desc;
    if (!p.str(go, "name", dg.name) || !p.str(go, "desc", desc) || !p.i64(go["size"], size, "a group's \"size\"") ||
        !p.i64(go["position"], position, "a group's \"position\""))
      return Error{p.err};
    if (size < 0 || size > INT32_MAX || position < -1 || (position >= 0 && position >= size))
      return Error{where + ": a group's size or position is out of range"};
    dg.desc = internText(desc);
    dg.size = static_cast<int>(size);
    dg.position = static_cast<int>(position);
    d.groups.push_back(std::move(dg));
  }
  for (auto c : colls) {
    int64_t f[4];
    if (!p.ints(c, f, 4, "a collective")) return Error{p.err};
    if (f[0] < 0 || static_cast<size_t>(f[0]) >= d.groups.size() || f[1] < 0 || f[1] > UINT32_MAX || f[2] < 0 ||
        static_cast<size_t>(f[2]) >= d.steps.size() || f[3] < 0)
      return Error{where + ": a collective names a group or step the rank does not have, or a negative figure"};
    d.collectives.push_back(
        {static_cast<uint32_t>(f[0]), static_cast<uint32_t>(f[1]), static_cast<uint32_t>(f[2]), f[3]});
  }
  for (size_t k = 1; k < d.collectives.size(); ++k) {
    const auto &a = d.collectives[k - 1], &b = d.collectives[k];
    if (a.group > b.group || (a.group == b.group && a.seq >= b.seq))
      return Error{where + ": collectives are not in (group, sequence) order"};
  }
  for (auto c : classes) {
    simdjson::dom::array a;
    std::string_view name;
    int64_t count = 0, total = 0;
    if (c.get_array().get(a) || a.size() != 3 || a.at(0).get_string().get(name) || a.at(1).get_int64().get(count) ||
        a.at(2).get_int64().get(total) || count < 0 || total < 0)
      return Error{where + ": a kernel class is not [name, count, total_ns]"};
    d.classes.push_back({internText(name), count, total});
  }
  std::vector<std::pair<std::string, std::string>> fields;
  for (auto f : job) {
    simdjson::dom::array a;
    std::string_view k, val;
    if (f.get_array().get(a) || a.size() != 2 || a.at(0).get_string().get(k) || a.at(1).get_string().get(val))
      return Error{where + ": a job field is not [name, value]"};
    fields.emplace_back(std::string(k), std::string(val));
  }
  setJob(d, fields);
  d.steps.shrink_to_fit();
  d.groups.shrink_to_fit();
  d.collectives.shrink_to_fit();
  d.classes.shrink_to_fit();
  return d;
}

std::string summaryDocument(const std::vector<RankDigest>& digests) {
  std::string out = R"({"format":"gpudoctor-summary","version":)" + std::to_string(kSummaryFormatVersion) +
                    R"(,"ranks":)" + std::to_string(digests.size()) + "}\n";
  for (const auto& d : digests) out += summaryLine(d) + "\n";
  out += R"({"end":)" + std::to_string(digests.size()) + "}\n";
  return out;
}

Status writeSummaryFile(const std::string& path, const std::vector<RankDigest>& digests) {
  std::string doc = summaryDocument(digests);
  bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  return writeFileAtomic(path, gz ? gzipBytes(doc) : doc);
}

Result<std::vector<RankDigest>> readSummaryFile(const std::string& path) {
  auto text = readAllBytes(path);
  if (!text.ok()) return text.error();
  return parseSummaryText(text.value(), path);
}

Result<std::vector<RankDigest>> parseSummaryText(std::string_view text, const std::string& path) {
  std::vector<RankDigest> out;
  size_t pos = 0, line_no = 0;
  int64_t declared = -1;
  bool ended = false;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line(text.data() + pos, (nl == std::string::npos ? text.size() : nl) - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    ++line_no;
    if (line.empty()) continue;
    const std::string where = path + ": line " + std::to_string(line_no);
    if (ended) return Error{where + ": data after the end line"};
    if (declared < 0) {
      simdjson::dom::parser p;
      simdjson::dom::element h;
      std::string_view format;
      int64_t version = 0;
      if (p.parse(line.data(), line.size(), true).get(h) || h["format"].get_string().get(format) ||
          format != kSummaryFormat)
        return Error{path +
                     ": not a gpudoctor summary (its first line is not {\"format\":\"gpudoctor-summary\", ...})"};
      if (h["version"].get_int64().get(version) || version != kSummaryFormatVersion)
        return Error{path + ": summary format version " +
                     (h["version"].get_int64().get(version) ? std::string("?") : std::to_string(version)) +
                     "; this gpudoctor reads version " + std::to_string(kSummaryFormatVersion) +
                     " (re-run analyze --summary-out with this version)"};
      if (h["ranks"].get_int64().get(declared) || declared < 0) return Error{where + ": \"ranks\" is not a count"};
      continue;
    }
    if (line.substr(0, 7) == R"({"end":)") {
      simdjson::dom::parser p;
      simdjson::dom::element e;
      int64_t n = -1;
      if (p.parse(line.data(), line.size(), true).get(e) || e["end"].get_int64().get(n) || n != declared ||
          static_cast<int64_t>(out.size()) != declared)
        return Error{where + ": the end line does not match the " + std::to_string(declared) + " ranks declared (" +
                     std::to_string(out.size()) + " read)"};
      ended = true;
      continue;
    }
    auto d = parseSummaryLine(line, where);
    if (!d.ok()) return d.error();
    out.push_back(std::move(d.value()));
  }
  if (declared < 0) return Error{path + ": empty file, not a gpudoctor summary"};
  if (!ended)
    return Error{path + ": cut short: " + std::to_string(out.size()) + " of " + std::to_string(declared) +
                 " ranks and no end line (an interrupted write or copy?)"};
  return out;
}

}  // namespace gpudoctor
