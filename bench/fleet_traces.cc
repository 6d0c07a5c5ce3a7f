// Makes an N-rank job from one real Kineto trace, with known faults injected, and writes the
// answer the cross-rank analyses must give, for the scale benchmark and tests: the traces in
// OUTDIR/traces/, the answer in OUTDIR/expected.json.
//
//   fleet_traces SRC.json[.gz] OUTDIR --ranks N [--stages S] [--repeat K]
//       [--slow-rank R --slow-ms D] [--gc RANK:STEP --gc-ms D] [--slow-stage P --stage-factor F] [--threads T]
//
// Every rank starts as the same trace (its steps repeated K times back to back, ids and step
// numbers renumbered). Ranks are laid out stage-major (rank = stage × N/S + i, Megatron's default
// order); each stage's ranks form a data-parallel group that all-reduces (the source's NCCL
// kernels, re-labelled with the group's name, description and ranks), and rank i of every stage
// forms a pipeline group (pg_config only: the source has no point-to-point sends).
//
// A fault is a delay inserted at a time t on a rank: every event starting at or after t moves by D;
// the event the delay belongs to (and host ranges spanning t) lasts D longer. A collective's
// arrival is thereby the last member's on every member, as NCCL makes it:
//   slow rank R:   in every step, the compute kernel before the step's first all-reduce takes D
//                  longer on R; R's group mates wait D inside that all-reduce.
//   GC pause:      the host of RANK stops for D at the start of STEP (nothing launches, the GPU
//                  drains and idles); its group mates wait D in the step's first all-reduce.
//   slow stage P:  every compute kernel of stage P's ranks runs F times as long.
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/exact_time.h"
#include "sources/byte_stream.h"
#include "sources/kineto/json_scan.h"
#include "trace_text.h"

using namespace gpudoctor;
using bench::formatMicros;
using bench::numberAfter;

namespace {

void replaceAll(std::string& s, std::string_view from, std::string_view to) {
  for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
}

enum class Kind { kHost, kCompute, kNccl, kCopy, kFlow, kMeta };

struct Ev {
  std::string pre, mid, post;  // text around the ts and dur numbers (mid/post empty without dur)
  int64_t ts = 0, dur = -1;
  Kind kind = Kind::kHost;
  bool has_group = false;  // carries "Process Group Name": rewritten per stage
  bool step = false;       // a host ProfilerStep range
};

struct Insertion {
  int64_t t;
  int64_t d;
  int64_t owner;  // event index that lasts d longer, or -1
};

struct Args {
  std::string src, out;
  int ranks = 0, stages = 1, repeat = 3, threads = 0;
  int slow_rank = -1;
  double slow_ms = 3;
  int gc_rank = -1;
  int64_t gc_step = -1;
  double gc_ms = 20;
  int slow_stage = -1;
  double stage_factor = 1.5;
};

int usage(const char* why) {
  std::fprintf(
      stderr,
      "fleet_traces: %s\nusage: fleet_traces SRC.json[.gz] OUTDIR --ranks N [--stages S] [--repeat K] "
      "[--slow-rank R --slow-ms D] [--gc RANK:STEP --gc-ms D] [--slow-stage P --stage-factor F] [--threads T]\n",
      why);
  return 2;
}

std::string groupRanks(const std::vector<int>& r) { return fmt::format("[{}]", fmt::join(r, ", ")); }

}  // namespace

int main(int argc, char** argv) {
  Args a;
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "fleet_traces: %s needs a value\n", k.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (k == "--ranks")
      a.ranks = std::atoi(val().c_str());
    else if (k == "--stages")
      a.stages = std::atoi(val().c_str());
    else if (k == "--repeat")
      a.repeat = std::atoi(val().c_str());
    else if (k == "--threads")
      a.threads = std::atoi(val().c_str());
    else if (k == "--slow-rank")
      a.slow_rank = std::atoi(val().c_str());
    else if (k == "--slow-ms")
      a.slow_ms = std::atof(val().c_str());
    else if (k == "--gc") {
      std::string v = val();
      size_t c = v.find(':');
      if (c == std::string::npos) return usage("--gc wants RANK:STEP");
      a.gc_rank = std::atoi(v.substr(0, c).c_str());
      a.gc_step = std::atoll(v.substr(c + 1).c_str());
    } else if (k == "--gc-ms")
      a.gc_ms = std::atof(val().c_str());
    else if (k == "--slow-stage")
      a.slow_stage = std::atoi(val().c_str());
    else if (k == "--stage-factor")
      a.stage_factor = std::atof(val().c_str());
    else if (k.rfind("--", 0) == 0)
      return usage(("unknown option " + k).c_str());
    else
      pos.push_back(k);
  }
  if (pos.size() != 2) return usage("give SRC and OUTDIR");
  a.src = pos[0];
  a.out = pos[1];
  if (a.ranks < 2 || a.stages < 1 || a.ranks % a.stages != 0 || a.ranks / a.stages < 2)
    return usage("--ranks must be at least 2 and a multiple of --stages with two ranks per stage or more");
  if (a.repeat < 1 || a.slow_rank >= a.ranks || a.gc_rank >= a.ranks || a.slow_stage >= a.stages || a.slow_ms <= 0 ||
      a.gc_ms <= 0 || a.stage_factor <= 1)
    return usage("a fault names a rank or stage outside the job, or a non-positive delay");
  const int per_stage = a.ranks / a.stages;

  auto whole = readAllBytes(a.src);
  if (!whole.ok()) return usage(whole.error().message.c_str());
  std::string text = std::move(whole.value());
  bench::TraceText tt;
  if (!bench::splitTrace(text, tt)) return usage("SRC has no traceEvents");
  std::string head = std::move(tt.head), tail = std::move(tt.tail);
  size_t di = head.find("\"distributedInfo\"");
  if (di == std::string::npos) return usage("SRC has no distributedInfo");
  size_t di_open = head.find('{', di);
  size_t di_close = findCompositeEnd(head.data(), di_open, head.size());
  std::string nccl_version = "2.28.9";
  {
    std::string d = head.substr(di_open, di_close - di_open);
    size_t v = d.find("\"nccl_version\"");
    if (v != std::string::npos) {
      size_t q1 = d.find('"', d.find(':', v) + 1), q2 = d.find('"', q1 + 1);
      nccl_version = d.substr(q1 + 1, q2 - q1 - 1);
    }
  }

  // The source's events, repeated.
  std::vector<std::string> src_events = std::move(tt.events);
  int64_t max_id = 0, max_step = 0;
  for (const std::string& ev : src_events) {
    for (auto key : {"\"correlation\"", "\"External id\"", "\"id\""}) {
      auto [ip, il] = numberAfter(ev, key);
      if (ip != std::string::npos)
        max_id = std::max<int64_t>(max_id, parseInt64(std::string_view(ev).substr(ip, il)).value_or(0));
    }
    size_t s = ev.find("ProfilerStep#");
    if (s != std::string::npos) max_step = std::max<int64_t>(max_step, std::atoll(ev.c_str() + s + 13));
  }
  text.clear();
  text.shrink_to_fit();
  // Copies follow each other step to step: copy c + 1's first step starts where copy c's last
  // step ended (plus the source's gap between steps); what lies before the first step (after the
  // last) is kept only in the first (last) copy.
  int64_t first_begin = INT64_MAX, last_end = INT64_MIN, gap = 30'000;
  {
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (const auto& ev : src_events) {
      if (ev.find("\"cat\": \"user_annotation\"") == std::string::npos ||
          ev.find("\"name\": \"ProfilerStep#") == std::string::npos)
        continue;
      auto [tp, tl] = numberAfter(ev, "\"ts\"");
      auto [dp, dl] = numberAfter(ev, "\"dur\"");
      if (tp == std::string::npos || dp == std::string::npos) continue;
      int64_t t = *parseMicrosToNanos(std::string_view(ev).substr(tp, tl));
      ranges.push_back({t, t + *parseMicrosToNanos(std::string_view(ev).substr(dp, dl))});
    }
    std::sort(ranges.begin(), ranges.end());
    for (size_t i = 0; i < ranges.size(); ++i) {
      first_begin = std::min(first_begin, ranges[i].first);
      last_end = std::max(last_end, ranges[i].second);
      if (i > 0 && ranges[i].first > ranges[i - 1].second) gap = ranges[i].first - ranges[i - 1].second;
    }
  }
  if (first_begin == INT64_MAX) return usage("SRC has no ProfilerStep ranges");
  const int64_t period = last_end - first_begin + gap;
  std::vector<Ev> evs;
  for (int c = 0; c < a.repeat; ++c) {
    for (const auto& src : src_events) {
      bool meta = src.find("\"ph\": \"M\"") != std::string::npos;
      if (meta && c > 0) continue;
      std::string ev = src;
      if (!meta) {
        auto [tp, tl] = numberAfter(ev, "\"ts\"");
        if (tp != std::string::npos) {
          int64_t t = parseMicrosToNanos(std::string_view(ev).substr(tp, tl)).value_or(first_begin);
          if ((c > 0 && t < first_begin) || (c + 1 < a.repeat && t >= last_end)) continue;
        }
      }
      if (c > 0) {
        for (auto key : {"\"correlation\"", "\"External id\"", "\"id\""})
          for (size_t from = 0;;) {
            auto [ip, il] = numberAfter(ev, key, from);
            if (ip == std::string::npos) break;
            std::string v =
                std::to_string(parseInt64(std::string_view(ev).substr(ip, il)).value_or(0) + c * (max_id + 1));
            ev.replace(ip, il, v);
            from = ip + v.size();
          }
        size_t s = ev.find("ProfilerStep#");
        if (s != std::string::npos) {
          size_t e = s + 13;
          while (e < ev.size() && std::isdigit(static_cast<unsigned char>(ev[e]))) ++e;
          ev.replace(s + 13, e - s - 13, std::to_string(std::atoll(ev.c_str() + s + 13) + c * (max_step + 1)));
        }
      }
      Ev x;
      auto cat_at = ev.find("\"cat\": \"");
      std::string cat = cat_at == std::string::npos ? "" : ev.substr(cat_at + 8, ev.find('"', cat_at + 8) - cat_at - 8);
      bool flow = ev.find("\"ph\": \"f\"") != std::string::npos || ev.find("\"ph\": \"s\"") != std::string::npos;
      if (meta)
        x.kind = Kind::kMeta;
      else if (flow)
        x.kind = Kind::kFlow;
      else if (cat == "kernel")
        x.kind = ev.find("\"name\": \"nccl") != std::string::npos ? Kind::kNccl : Kind::kCompute;
      else if (cat == "gpu_memcpy" || cat == "gpu_memset")
        x.kind = Kind::kCopy;
      else
        x.kind = Kind::kHost;
      x.has_group = ev.find("\"Process Group Name\"") != std::string::npos;
      x.step = cat == "user_annotation" && ev.find("\"name\": \"ProfilerStep#") != std::string::npos;
      auto [tp, tl] = numberAfter(ev, "\"ts\"");
      if (tp == std::string::npos) {
        x.pre = ev;
        x.ts = INT64_MIN;
      } else {
        x.ts = *parseMicrosToNanos(std::string_view(ev).substr(tp, tl)) + c * period;
        auto [dp, dl] = numberAfter(ev, "\"dur\"", tp + tl);
        x.pre = ev.substr(0, tp);
        if (dp == std::string::npos) {
          x.mid = ev.substr(tp + tl);
        } else {
          x.dur = *parseMicrosToNanos(std::string_view(ev).substr(dp, dl));
          x.mid = ev.substr(tp + tl, dp - tp - tl);
          x.post = ev.substr(dp + dl);
        }
      }
      evs.push_back(std::move(x));
    }
  }
  src_events.clear();

  // Steps (host ranges) by start, and each step's all-reduces (NCCL kernels starting inside it).
  std::vector<size_t> steps, order;
  for (size_t i = 0; i < evs.size(); ++i) {
    if (evs[i].step) steps.push_back(i);
    if (evs[i].kind == Kind::kCompute || evs[i].kind == Kind::kNccl) order.push_back(i);
  }
  std::sort(steps.begin(), steps.end(), [&](size_t x, size_t y) { return evs[x].ts < evs[y].ts; });
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return evs[x].ts < evs[y].ts; });
  auto stepNumber = [&](size_t i) {
    size_t s = evs[i].pre.find("ProfilerStep#");
    return s == std::string::npos ? int64_t{-1} : std::atoll(evs[i].pre.c_str() + s + 13);
  };
  struct StepInfo {
    int64_t number, begin, end;
    int64_t first_nccl = -1, compute_before = -1;
  };
  std::vector<StepInfo> step_info;
  for (size_t s = 0; s < steps.size(); ++s) {
    StepInfo si{stepNumber(steps[s]), evs[steps[s]].ts,
                s + 1 < steps.size() ? evs[steps[s + 1]].ts : evs[steps[s]].ts + evs[steps[s]].dur};
    int64_t last_compute = -1;
    for (size_t i : order) {
      if (evs[i].ts < si.begin) {
        if (evs[i].kind == Kind::kCompute) last_compute = static_cast<int64_t>(i);
        continue;
      }
      if (evs[i].ts >= si.end) break;
      if (evs[i].kind == Kind::kCompute) last_compute = static_cast<int64_t>(i);
      if (evs[i].kind == Kind::kNccl) {
        si.first_nccl = static_cast<int64_t>(i);
        si.compute_before = last_compute;
        break;
      }
    }
    if (si.first_nccl >= 0) step_info.push_back(si);
  }
  if (step_info.empty()) return usage("SRC has no ProfilerStep with an NCCL kernel in it");
  auto stepOf = [&](int64_t number) -> const StepInfo* {
    for (const auto& s : step_info)
      if (s.number == number) return &s;
    return nullptr;
  };
  if (a.gc_rank >= 0 && !stepOf(a.gc_step)) {
    std::string have;
    for (const auto& s : step_info) have += (have.empty() ? "" : ", ") + std::to_string(s.number);
    return usage(fmt::format("--gc step {} is not a step of the job (steps: {})", a.gc_step, have).c_str());
  }
  auto mid = [&](int64_t i) { return evs[i].ts + evs[i].dur / 2; };

  // Each rank's insertions.
  auto stageOf = [&](int r) { return r / per_stage; };
  const int64_t slow_d = static_cast<int64_t>(a.slow_ms * 1e6), gc_d = static_cast<int64_t>(a.gc_ms * 1e6);
  auto insertionsOf = [&](int r) {
    std::vector<Insertion> ins;
    if (a.slow_rank >= 0 && stageOf(r) == stageOf(a.slow_rank))
      for (const auto& s : step_info) {
        if (r == a.slow_rank && s.compute_before >= 0)
          ins.push_back({mid(s.compute_before), slow_d, s.compute_before});
        else if (r != a.slow_rank)
          ins.push_back({mid(s.first_nccl), slow_d, s.first_nccl});
      }
    if (a.gc_rank >= 0 && stageOf(r) == stageOf(a.gc_rank)) {
      const StepInfo* s = stepOf(a.gc_step);
      if (r == a.gc_rank)
        ins.push_back({s->begin + 1, gc_d, -1});
      else
        ins.push_back({mid(s->first_nccl), gc_d, s->first_nccl});
    }
    if (a.slow_stage >= 0 && stageOf(r) == a.slow_stage)
      for (size_t i : order)
        if (evs[i].kind == Kind::kCompute)
          ins.push_back({mid(static_cast<int64_t>(i)),
                         static_cast<int64_t>((a.stage_factor - 1) * static_cast<double>(evs[i].dur)),
                         static_cast<int64_t>(i)});
    std::sort(ins.begin(), ins.end(), [](const Insertion& x, const Insertion& y) { return x.t < y.t; });
    return ins;
  };

  // Per-stage texts: the data-parallel group on the NCCL events, pg_config in distributedInfo.
  auto dpRanks = [&](int st) {
    std::vector<int> v;
    for (int i = 0; i < per_stage; ++i) v.push_back(st * per_stage + i);
    return v;
  };
  auto ppRanks = [&](int i) {
    std::vector<int> v;
    for (int st = 0; st < a.stages; ++st) v.push_back(st * per_stage + i);
    return v;
  };
  std::vector<int> world(static_cast<size_t>(a.ranks));
  for (int r = 0; r < a.ranks; ++r) world[static_cast<size_t>(r)] = r;
  auto dpName = [&](int st) { return a.stages == 1 ? std::string("0") : std::to_string(1 + st); };
  // The group's arguments sit after ts/dur (in post, or in mid when there is no dur).
  auto rewriteGroup = [&](std::string s, int st) {
    replaceAll(s, "\"Process Group Name\": \"0\"", "\"Process Group Name\": \"" + dpName(st) + "\"");
    if (a.stages > 1)
      replaceAll(s, "\"Process Group Description\": \"default_pg\"",
                 "\"Process Group Description\": \"DATA_PARALLEL_GROUP\"");
    size_t p = s.find("\"Process Group Ranks\": \"");
    if (p != std::string::npos) {
      size_t v = p + 24, e = s.find('"', v);
      s.replace(v, e - v, groupRanks(dpRanks(st)));
    }
    auto [gp, gl] = numberAfter(s, "\"Group size\"");
    if (gp != std::string::npos) s.replace(gp, gl, std::to_string(per_stage));
    return s;
  };
  std::vector<std::vector<std::string>> stage_post(static_cast<size_t>(a.stages));
  for (int st = 0; st < a.stages; ++st)
    for (const auto& e : evs)
      stage_post[static_cast<size_t>(st)].push_back(e.has_group ? rewriteGroup(e.dur >= 0 ? e.post : e.mid, st)
                                                                : std::string());

  std::error_code ec;
  std::filesystem::create_directories(a.out + "/traces", ec);
  if (ec) return usage((a.out + ": " + ec.message()).c_str());
  std::atomic<int> next{0};
  std::atomic<bool> failed{false};
  auto writeRank = [&](int r) -> bool {
    const int st = stageOf(r);
    auto ins = insertionsOf(r);
    std::vector<int64_t> prefix(ins.size() + 1, 0);
    for (size_t i = 0; i < ins.size(); ++i) prefix[i + 1] = prefix[i] + ins[i].d;
    auto shiftAt = [&](int64_t t, bool inclusive) {  // Σ d over insertions with t_i <= t (or < t)
      auto it =
          inclusive
              ? std::upper_bound(ins.begin(), ins.end(), t, [](int64_t v, const Insertion& x) { return v < x.t; })
              : std::lower_bound(ins.begin(), ins.end(), t, [](const Insertion& x, int64_t v) { return x.t < v; });
      return prefix[static_cast<size_t>(it - ins.begin())];
    };
    std::string h = head;
    std::string pg = fmt::format(
        "{{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", "
        "\"pg_size\": {}, \"ranks\": {}}}",
        a.ranks, groupRanks(world));
    int pg_count = 1;
    if (a.stages > 1) {
      pg += fmt::format(
          ", {{\"pg_name\": \"{}\", \"pg_desc\": \"DATA_PARALLEL_GROUP\", \"backend_config\": \"cuda:nccl\", "
          "\"pg_size\": {}, \"ranks\": {}}}",
          dpName(st), per_stage, groupRanks(dpRanks(st)));
      int i = r % per_stage;
      pg += fmt::format(
          ", {{\"pg_name\": \"{}\", \"pg_desc\": \"PIPELINE_MODEL_PARALLEL_GROUP\", \"backend_config\": "
          "\"cuda:nccl\", \"pg_size\": {}, \"ranks\": {}}}",
          1 + a.stages + i, a.stages, groupRanks(ppRanks(i)));
      pg_count = 1 + a.stages + per_stage;
    }
    h.replace(
        di_open, di_close - di_open,
        fmt::format("{{\"backend\": \"nccl\", \"rank\": {}, \"world_size\": {}, \"pg_count\": {}, \"pg_config\": [{}], "
                    "\"nccl_version\": \"{}\"}}",
                    r, a.ranks, pg_count, pg, nccl_version));
    std::string path = fmt::format("{}/traces/rank{:05}.pt.trace.json.gz", a.out, r);
    gzFile gz = gzopen((path + ".partial").c_str(), "wb1");
    if (!gz) return false;
    std::string buf = h;
    bool first = true;
    for (size_t i = 0; i < evs.size(); ++i) {
      const Ev& e = evs[i];
      if (!first) buf += ",\n";
      first = false;
      if (e.ts == INT64_MIN) {
        buf += e.pre;
      } else {
        int64_t s0 = shiftAt(e.ts, true);
        buf += e.pre;
        buf += formatMicros(e.ts + s0);
        if (e.dur < 0) {
          buf += e.has_group ? stage_post[static_cast<size_t>(st)][i] : e.mid;
        } else {
          int64_t stretch = 0;
          const int64_t end = e.ts + e.dur;
          bool gpu = e.kind == Kind::kCompute || e.kind == Kind::kNccl || e.kind == Kind::kCopy;
          if (!gpu) {
            stretch = shiftAt(end, false) - s0;  // every insertion strictly inside
          } else {
            for (const auto& x : ins)
              if (x.owner == static_cast<int64_t>(i)) stretch += x.d;
          }
          buf += e.mid;
          buf += formatMicros(std::max<int64_t>(0, e.dur + stretch));
          buf += e.has_group ? stage_post[static_cast<size_t>(st)][i] : e.post;
        }
      }
      if (buf.size() > (1u << 20)) {
        if (gzwrite(gz, buf.data(), static_cast<unsigned>(buf.size())) <= 0) return gzclose(gz), false;
        buf.clear();
      }
    }
    buf += "\n" + tail;
    if (gzwrite(gz, buf.data(), static_cast<unsigned>(buf.size())) <= 0) return gzclose(gz), false;
    if (gzclose(gz) != Z_OK) return false;
    std::filesystem::rename(path + ".partial", path, ec);
    return !ec;
  };
  unsigned nt = a.threads > 0 ? static_cast<unsigned>(a.threads) : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < nt; ++t)
    pool.emplace_back([&] {
      for (int r; !failed && (r = next.fetch_add(1)) < a.ranks;)
        if (!writeRank(r)) failed = true;
    });
  for (auto& t : pool) t.join();
  if (failed) return usage(("cannot write the traces under " + a.out).c_str());

  // The answer.
  std::vector<std::string> steps_json;
  for (const auto& s : step_info) steps_json.push_back(std::to_string(s.number));
  std::string exp = fmt::format(
      "{{\n \"ranks\": {}, \"stages\": {}, \"ranks_per_stage\": {}, \"steps\": [{}],\n"
      " \"slow_rank\": {}, \"slow_rank_excess_ns\": {},\n"
      " \"gc\": {{\"rank\": {}, \"step\": {}, \"excess_ns\": {}}},\n"
      " \"slow_stage\": {}, \"stage_factor\": {},\n"
      " \"straggler_groups\": {{{}}}\n}}\n",
      a.ranks, a.stages, per_stage, fmt::join(steps_json, ", "), a.slow_rank, a.slow_rank >= 0 ? slow_d : 0, a.gc_rank,
      a.gc_rank >= 0 ? a.gc_step : -1, a.gc_rank >= 0 ? gc_d : 0, a.slow_stage,
      a.slow_stage >= 0 ? a.stage_factor : 1.0,
      a.slow_rank >= 0 ? fmt::format("\"{}\": {}", dpName(stageOf(a.slow_rank)), a.slow_rank) : std::string());
  FILE* f = std::fopen((a.out + "/expected.json").c_str(), "w");
  if (!f || std::fputs(exp.c_str(), f) < 0 || std::fclose(f) != 0) return usage("cannot write expected.json");
  std::fprintf(stderr, "fleet_traces: %d ranks (%d stages) x %zu steps in %s\n", a.ranks, a.stages, step_info.size(),
               a.out.c_str());
  return 0;
}
