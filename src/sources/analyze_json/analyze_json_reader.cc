#include "sources/analyze_json/analyze_json_reader.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpudoctor {

bool looksLikeAnalyzeJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  for (const char* t : {"\"tool\": \"gpudoctor analyze\"", "\"tool\":\"gpudoctor analyze\"",
                        "\"tool\": \"gpudoctor checklist\"", "\"tool\":\"gpudoctor checklist\""})
    if (head.find(t) != std::string::npos) return true;
  return false;
}

namespace {

// The steps compare judges: diagnosis.step_estimate (written also under --no-what-if), else, in a
// document of an earlier version, diagnosis.what_if.
void readSteps(const nlohmann::json& j, RunSummary& s) {
  if (!j.contains("diagnosis") || !j["diagnosis"].is_object()) return;
  const auto& d = j["diagnosis"];
  const char* key = d.contains("step_estimate") ? "step_estimate" : "what_if";
  if (!d.contains(key) || !d[key].is_object()) return;
  const auto& w = d[key];
  auto num = [&](const char* k) { return w.contains(k) && w[k].is_number() ? w[k].get<double>() : -1.0; };
  s.unprofiled_step_ns = num("unprofiled_step_ns");
  s.traced_step_ns = num("traced_step_ns");
  if (w.contains("unprofiled_path_ns") && w["unprofiled_path_ns"].is_object())
    for (const auto& [k, v] : w["unprofiled_path_ns"].items()) s.unprofiled_path.push_back({k, v.get<double>()});
}

// What tells one job from another (RunSummary::gpu, world_size, param_tensors), where the document has it.
void readJobIdentity(const nlohmann::json& j, RunSummary& s) {
  if (j["ranks"].empty()) return;
  const auto& r0 = j["ranks"].front();
  if (r0.contains("devices") && r0["devices"].is_array() && !r0["devices"].empty())
    s.gpu = r0["devices"].front().value("name", std::string());
  if (!j.contains("job") || !j["job"].is_object()) return;
  const auto& job = j["job"];
  if (job.contains("parallelism") && job["parallelism"].is_object() && job["parallelism"].contains("ranks") &&
      job["parallelism"]["ranks"].is_number_integer())
    s.world_size = job["parallelism"]["ranks"].get<int>();
  if (job.contains("optimizer") && job["optimizer"].is_object() && job["optimizer"].contains("param_tensors") &&
      job["optimizer"]["param_tensors"].is_number())
    s.param_tensors = job["optimizer"]["param_tensors"].get<double>();
}

}  // namespace

Result<RunSummary> readAnalyzeJson(const std::string& path) {
  using nlohmann::json;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open"};
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception& e) {
    return Error{path + ": not JSON (" + std::string(e.what()).substr(0, 120) + ")"};
  }
  auto bad = [&](const std::string& what) { return Error{path + ": " + what}; };
  if (!j.is_object() || (j.value("tool", "") != "gpudoctor analyze" && j.value("tool", "") != "gpudoctor checklist"))
    return bad("not a gpudoctor analyze --json document (no \"tool\": \"gpudoctor analyze\")");
  if (!j.contains("ranks") || !j["ranks"].is_array() || !j.contains("job_summary"))
    return bad(
        fmt::format("an analyze document of another layout (version {}; compare needs ranks[].steps and "
                    "job_summary: re-run analyze --json with this version)",
                    j.value("version", std::string("unknown"))));
  // The analyze document's schema this reader knows (report/json_report.cc writes it); a newer one may
  // have changed what a field means, so it is refused rather than misread.
  constexpr int kAnalyzeSchema = 1;
  if (!j.contains("schema_version") || !j["schema_version"].is_number_integer())
    return bad("no integer schema_version: not a gpudoctor analyze --json document, or a damaged one");
  if (const int v = j["schema_version"].get<int>(); v != kAnalyzeSchema)
    return bad(
        fmt::format("analyze --json schema_version {}; this gpudoctor reads version {}: re-run analyze "
                    "--json with this version",
                    v, kAnalyzeSchema));
  RunSummary s;
  s.source = path;
  try {
    for (const auto& r : j["ranks"]) {
      RankSummary rs;
      rs.rank = r.at("rank").get<int>();
      rs.path = r.value("path", "");
      for (const auto& st : r.at("steps")) {
        StepFigures f;
        f.number = st.value("step", int64_t{-1});
        f.wall = st.at("wall_ns").get<int64_t>();
        f.compute = st.at("compute_ns").get<int64_t>();
        f.comm_exposed = st.at("comm_exposed_ns").get<int64_t>();
        f.copies = st.at("copy_exposed_ns").get<int64_t>();
        const auto& ic = st.at("idle_cause_ns");
        f.idle_host = ic.at("host").get<int64_t>();
        f.idle_sync = ic.at("sync").get<int64_t>();
        f.idle_dependency = ic.at("dependency").get<int64_t>();
        f.idle_other = ic.at("other").get<int64_t>();
        const auto& il = st.at("idle_in_loader_cause_ns");
        f.idle_host_loader = il.at("host").get<int64_t>();
        f.idle_sync_loader = il.at("sync").get<int64_t>();
        rs.steps.push_back(f);
      }
      s.ranks.push_back(std::move(rs));
    }
    const auto& k = j.at("kernels_all_ranks");
    for (const auto& c : k.at("classes"))
      s.classes.push_back({c.at("class").get<std::string>(), "", "", c.at("duration").at("count").get<int64_t>(),
                           c.at("duration").at("total_ns").get<int64_t>()});
    for (const auto& t : k.at("top"))
      s.kernels.push_back({t.at("name").get<std::string>(), t.at("class").get<std::string>(),
                           t.value("op", std::string()), t.at("duration").at("count").get<int64_t>(),
                           t.at("duration").at("total_ns").get<int64_t>()});
    for (const auto& c : j.at("collectives_all_ranks"))
      s.collectives.push_back({collectiveKey(c.at("collective").get<std::string>(), c.at("dtype").get<std::string>(),
                                             c.at("bytes").get<int64_t>(), c.value("process_group", std::string())),
                               "", "", c.at("duration").at("count").get<int64_t>(),
                               c.at("duration").at("total_ns").get<int64_t>()});
    for (const auto& p : j.at("job_summary")) s.job.push_back({p.at(0).get<std::string>(), p.at(1).get<std::string>()});
    readSteps(j, s);
    readJobIdentity(j, s);
  } catch (const json::exception& e) {
    return bad(std::string("missing or mistyped field (") + std::string(e.what()).substr(0, 160) + ")");
  }
  if (s.ranks.empty()) return bad("no ranks");
  return s;
}

}  // namespace gpudoctor
