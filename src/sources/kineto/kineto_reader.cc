#include "sources/kineto/kineto_reader.h"

#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "common/exact_time.h"
#include "common/memory.h"
#include "sources/kineto/json_scan.h"
#include "sources/kineto/range_collectives.h"
#include "sources/kineto/raw_event.h"
#include "sources/kineto/roles.h"

namespace gpudoctor {
namespace {

namespace od = simdjson::ondemand;

bool gpuSide(EventKind k) { return isGpuWork(k) || k == EventKind::kGpuRange || k == EventKind::kSyncEvent; }

// Times beyond these are not real traces; bounding them keeps every sum and end time inside int64.
constexpr int64_t kMaxTimeNs = int64_t{4'000'000'000'000'000'000};  // ±127 years around the epoch
constexpr int64_t kMaxDurNs = int64_t{1'000'000'000'000'000};       // 11.6 days for one event

class Reader {
 public:
  Reader(ByteStream& in, std::string name, const KinetoReadOptions& opt)
      : in_(in), name_(std::move(name)), cap_(std::max<size_t>(opt.chunk_bytes, 4096)) {
    buf_.resize(cap_ + 2 + simdjson::SIMDJSON_PADDING);
    cur_ = len_ = 1;  // buf_[0] is kept free so a batch can be wrapped in '[' ... ']'
    // Size the parser once for the largest batch: growing it batch by batch maps fresh pages each time.
    if (parser_.allocate(cap_ + 2)) {
    }  // on failure iterate() reports the error
  }

  Result<RankTrace> run() {
    auto t0 = std::chrono::steady_clock::now();
    tr_.path = name_;
    // Kineto events average 300-400 bytes of JSON; gzip shrinks traces about 10x. Reserving
    // address space costs no memory until touched, and saves copying the events as they grow.
    uint64_t json_guess = in_.sizeOnDisk() * (in_.compressed() ? 12 : 1);
    // Best effort, capped at 64 M events (3.6 GB of address space): a refused reservation (strict
    // overcommit) just means the vector grows as usual.
    try {
      reserveHuge(tr_.events, std::min<uint64_t>(json_guess / 250, uint64_t{1} << 26));
    } catch (const std::exception&) {
    }
    // Skip a UTF-8 byte-order mark.
    if (ensure(3) && std::memcmp(&buf_[cur_], "\xEF\xBB\xBF", 3) == 0) cur_ += 3;
    int c = peekNonWs();
    if (c < 0) return fail(st_.ok() ? "empty file" : "");
    Status s;
    if (c == '{') {
      ++cur_;
      s = topObject();
    } else if (c == '[') {
      ++cur_;
      s = events(/*top_level=*/true);
    } else {
      return fail("not a JSON trace (starts with neither '{' nor '[')");
    }
    if (!s.ok()) return Error{s.message()};
    if (!st_.ok()) return Error{st_.message()};
    finish();
    tr_.stats.parse_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return std::move(tr_);
  }

 private:
  // ---- buffer management ------------------------------------------------------------------
  uint64_t offsetOf(size_t i) const { return base_off_ + (i - 1); }

  Error failAt(size_t i, const std::string& what) {
    return Error{name_ + ": " + what + " at byte " + std::to_string(offsetOf(i))};
  }
  Error fail(const std::string& what) {
    if (!st_.ok()) return Error{st_.message()};
    return Error{name_ + ": " + what};
  }

  // Moves the unconsumed bytes to the front and reads more; grows the buffer when it is full of
  // one unfinished value. False at the end of input or on a read error (st_ set).
  bool refill() {
    if (eof_) return false;
    if (cur_ > 1) {
      std::memmove(&buf_[1], &buf_[cur_], len_ - cur_);
      base_off_ += cur_ - 1;
      len_ = 1 + (len_ - cur_);
      cur_ = 1;
    }
    if (len_ - 1 >= cap_) {
      cap_ *= 2;
      buf_.resize(cap_ + 2 + simdjson::SIMDJSON_PADDING);
      if (parser_.allocate(cap_ + 2)) {
      }  // on failure iterate() reports the error
    }
    auto r = in_.read(&buf_[len_], cap_ + 1 - len_);
    if (!r.ok()) {
      st_ = Error{r.error().message};
      eof_ = true;
      return false;
    }
    if (r.value() == 0) {
      eof_ = true;
      return false;
    }
    len_ += r.value();
    tr_.stats.input_bytes += r.value();
    return true;
  }

  bool ensure(size_t n) {
    while (len_ - cur_ < n)
      if (!refill()) return false;
    return true;
  }

  int peekNonWs() {
    for (;;) {
      while (cur_ < len_) {
        char c = buf_[cur_];
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return static_cast<unsigned char>(c);
        ++cur_;
      }
      if (!refill()) return -1;
    }
  }

  // End of the value at cur_, refilling as needed (positions are re-derived after a refill).
  size_t valueEnd() {
    for (;;) {
      size_t e = findValueEnd(buf_.data(), cur_, len_, eof_);
      if (e != kNoEnd) return e;
      if (!refill()) {
        size_t e2 = findValueEnd(buf_.data(), cur_, len_, true);
        return buf_[cur_] == '{' || buf_[cur_] == '[' || buf_[cur_] == '"' ? kNoEnd : e2;
      }
    }
  }

  // ---- top level ----------------------------------------------------------------------------
  Status topObject() {
    bool need_comma = false;
    for (;;) {
      int c = peekNonWs();
      if (c < 0) return truncated("inside the top-level object");
      if (c == '}') {
        ++cur_;
        return {};
      }
      if (need_comma) {
        if (c != ',') return failAt(cur_, "expected ',' or '}' in the top-level object");
        ++cur_;
        c = peekNonWs();
        if (c < 0) return truncated("inside the top-level object");
      }
      if (c != '"') return failAt(cur_, "expected a key in the top-level object");
      size_t ke = valueEnd();
      if (ke == kNoEnd) return truncated("inside a key");
      std::string key(&buf_[cur_ + 1], ke - cur_ - 2);
      cur_ = ke;
      c = peekNonWs();
      if (c != ':') return c < 0 ? truncated("after a key") : failAt(cur_, "expected ':'");
      ++cur_;
      c = peekNonWs();
      if (c < 0) return truncated("before a value");
      if (key == "traceEvents" && c == '[') {
        ++cur_;
        saw_events_ = true;
        Status s = events(false);
        if (!s.ok()) return s;
      } else {
        size_t ve = valueEnd();
        if (ve == kNoEnd) return truncated("inside the value of \"" + key + "\"");
        Status s = metadata(key, std::string_view(&buf_[cur_], ve - cur_));
        if (!s.ok()) return s;
        cur_ = ve;
      }
      need_comma = true;
    }
  }

  Error truncated(const std::string& where) {
    if (!st_.ok()) return Error{st_.message()};
    return Error{name_ + ": truncated JSON: input ends " + where + " at byte " + std::to_string(offsetOf(len_))};
  }

  Status metadata(const std::string& key, std::string_view text) {
    if (key != "deviceProperties" && key != "distributedInfo" && key != "baseTimeNanoseconds" && key != "schemaVersion")
      return {};
    simdjson::dom::parser p;
    simdjson::dom::element el;
    if (p.parse(text.data(), text.size(), true).get(el)) return failAt(cur_, "invalid JSON in \"" + key + "\"");
    if (key == "baseTimeNanoseconds") {
      uint64_t u;
      int64_t i;
      if (!el.get_uint64().get(u) && u <= static_cast<uint64_t>(kMaxTimeNs))
        tr_.base_time_ns = static_cast<int64_t>(u);
      else if (!el.get_int64().get(i) && i >= -kMaxTimeNs && i <= kMaxTimeNs)
        tr_.base_time_ns = i;
      else
        return failAt(cur_, "baseTimeNanoseconds is not an integer in range");
      tr_.has_base_time = true;
    } else if (key == "schemaVersion") {
      int64_t v;
      if (!el.get_int64().get(v)) tr_.schema_version = static_cast<int>(v);
    } else if (key == "distributedInfo") {
      int64_t v;
      std::string_view s;
      if (!el["rank"].get_int64().get(v)) tr_.rank = static_cast<int>(v);
      if (!el["world_size"].get_int64().get(v)) tr_.world_size = static_cast<int>(v);
      if (!el["backend"].get_string().get(s)) tr_.backend = s;
      if (!el["nccl_version"].get_string().get(s)) tr_.nccl_version = s;
      simdjson::dom::array groups;
      if (!el["pg_config"].get_array().get(groups))
        for (auto g : groups) {
          ProcessGroupInfo pg;
          if (!g["pg_name"].get_string().get(s)) pg.name = s;
          if (!g["pg_desc"].get_string().get(s)) pg.desc = s;
          simdjson::dom::array ranks;
          if (!g["ranks"].get_array().get(ranks))
            for (auto r : ranks)
              if (!r.get_int64().get(v) && v >= 0 && v <= INT32_MAX) pg.ranks.push_back(static_cast<int>(v));
          if (!pg.name.empty()) tr_.process_groups.push_back(std::move(pg));
        }
    } else if (key == "deviceProperties") {
      simdjson::dom::array arr;
      if (el.get_array().get(arr)) return {};
      for (auto d : arr) {
        DeviceProps dp;
        int64_t v;
        std::string_view s;
        if (!d["id"].get_int64().get(v)) dp.id = v;
        if (!d["name"].get_string().get(s)) dp.name = s;
        if (!d["totalGlobalMem"].get_int64().get(v)) dp.total_global_mem = v;
        if (!d["numSms"].get_int64().get(v)) dp.num_sms = v;
        if (!d["computeMajor"].get_int64().get(v)) dp.compute_major = static_cast<int>(v);
        if (!d["computeMinor"].get_int64().get(v)) dp.compute_minor = static_cast<int>(v);
        tr_.devices.push_back(std::move(dp));
      }
    }
    return {};
  }

  // ---- traceEvents ----------------------------------------------------------------------------
  Status events(bool top_level) {
    bool need_comma = false;
    for (;;) {
      int c = peekNonWs();
      if (c < 0) {
        // Chrome's JSON Array Format allows the closing ']' to be missing.
        if (top_level && st_.ok()) return {};
        return truncated("inside traceEvents");
      }
      if (c == ']') {
        ++cur_;
        return {};
      }
      if (need_comma) {
        if (c != ',') return failAt(cur_, "expected ',' or ']' between trace events");
        ++cur_;
        need_comma = false;
        c = peekNonWs();
        if (c < 0) return truncated("inside traceEvents");
      }
      if (c != '{') return failAt(cur_, "a trace event is not a JSON object");
      // Take every complete event already in the buffer as one batch.
      size_t first = cur_, p = cur_, last_end = kNoEnd;
      size_t n = 0;
      for (;;) {
        if (n > 0) {
          while (p < len_ && (buf_[p] == ' ' || buf_[p] == '\n' || buf_[p] == '\r' || buf_[p] == '\t')) ++p;
          if (p >= len_ || buf_[p] != ',') break;
          ++p;
          while (p < len_ && (buf_[p] == ' ' || buf_[p] == '\n' || buf_[p] == '\r' || buf_[p] == '\t')) ++p;
          if (p >= len_ || buf_[p] != '{') break;
        }
        size_t e = findCompositeEnd(buf_.data(), p, len_);
        if (e == kNoEnd) break;
        last_end = e;
        p = e;
        ++n;
      }
      if (n == 0) {
        if (!refill()) return truncated("inside a trace event");
        continue;
      }
      Status s = parseBatch(first, last_end, n);
      if (!s.ok()) return s;
      cur_ = last_end;
      need_comma = true;
    }
  }

  Status parseBatch(size_t first, size_t end, size_t n) {
    char before = buf_[first - 1], after = buf_[end];
    buf_[first - 1] = '[';
    buf_[end] = ']';
    Status s = parseArray(first - 1, end + 1);
    buf_[first - 1] = before;
    buf_[end] = after;
    tr_.stats.json_events += n;
    return s;
  }

  Status parseArray(size_t b, size_t e) {
    od::document doc;
    auto bad = [&](const char* what) {
      return failAt(b + 1, std::string("invalid trace event JSON (") + what + ") in the events starting");
    };
    if (parser_.iterate(&buf_[b], e - b, buf_.size() - b).get(doc)) return bad("parse");
    od::array arr;
    if (doc.get_array().get(arr)) return bad("not an array");
    for (auto item : arr) {
      od::object obj;
      if (item.get_object().get(obj)) return bad("not an object");
      RawEvent ev;
      if (auto err = readRawEvent(obj, ev)) return bad(simdjson::error_message(err));
      addEvent(ev);
    }
    return {};
  }

  uint32_t trackOf(const RawEvent& ev, bool gpu) {
    uint32_t pid_id = strings().intern(ev.pid_tok);
    uint32_t tid_id = strings().intern(ev.tid_tok);
    uint64_t key = (uint64_t{pid_id} << 32) | tid_id;
    auto it = track_index_.find(key);
    if (it != track_index_.end()) {
      if (gpu) tr_.tracks[it->second].gpu = true;
      return it->second;
    }
    Track t;
    t.gpu = gpu;
    t.pid = ev.pid_str ? 0 : parseInt64(ev.pid_tok).value_or(0);
    t.tid = ev.tid_str ? 0 : parseInt64(ev.tid_tok).value_or(0);
    if (ev.pid_str || ev.tid_str) t.name = strings().intern(std::string(ev.pid_tok) + "/" + std::string(ev.tid_tok));
    auto idx = static_cast<uint32_t>(tr_.tracks.size());
    tr_.tracks.push_back(t);
    track_index_.emplace(key, idx);
    return idx;
  }

  StringPool& strings() { return tr_.strings; }

  void addEvent(const RawEvent& ev) {
    switch (ev.ph) {
      case 'X':
      case 'B':
      case 'E':
        break;
      case 's':
      case 'f':
      case 't':
        ++tr_.stats.flow_events;
        return;
      case 'M':
        ++tr_.stats.metadata_events;
        if (ev.name == "thread_name" && !ev.meta_name.empty()) {
          RawEvent t = ev;
          uint32_t tr = trackOf(t, false);
          tr_.tracks[tr].label = strings().intern(ev.meta_name);
        }
        return;
      default:
        ++tr_.stats.instant_events;
        // Kineto marks the end of what it recorded; a step annotation can outlive it.
        if (ev.name == "Record Window End")
          if (auto t = parseMicrosToNanos(ev.ts_tok); t && *t <= kMaxTimeNs && *t >= -kMaxTimeNs)
            tr_.record_window_end_ns = std::max(tr_.record_window_end_ns, *t);
        // [memory] events: Device Type 1 is a CUDA device (0 is host memory, not compared with the GPU's).
        if (ev.device_type == 1 && ev.total_allocated > tr_.peak_allocated_bytes) {
          tr_.peak_allocated_bytes = ev.total_allocated;
          tr_.peak_device = ev.device_id;
        }
        if (ev.device_type == 1 && ev.total_allocated >= 0)
          if (auto t = parseMicrosToNanos(ev.ts_tok); t && *t <= kMaxTimeNs && *t >= -kMaxTimeNs)
            tr_.gpu_memory.add(*t, ev.total_allocated, ev.device_id);
        return;
    }
    auto ts = parseMicrosToNanos(ev.ts_tok);
    if (ts && (*ts > kMaxTimeNs || *ts < -kMaxTimeNs)) ts.reset();
    if (!ts) {
      ++tr_.stats.instant_events;  // no usable timestamp: not an interval
      return;
    }
    int64_t start = *ts;
    EventKind kind = ev.has_cat ? kindFromCat(ev.cat) : EventKind::kOther;
    if (ev.ph == 'B' || ev.ph == 'E') {
      uint32_t track = trackOf(ev, gpuSide(kind));
      auto& stack = open_[track];
      if (ev.ph == 'B') {
        stack.push_back(pending(ev, kind, track, start));
        return;
      }
      if (stack.empty()) {
        ++tr_.stats.unmatched_begin_end;
        return;
      }
      Event e = stack.back();
      stack.pop_back();
      e.dur_ns = std::max<int64_t>(0, start - e.start_ns);
      tr_.events.push_back(e);
      ++tr_.stats.kept_events;
      return;
    }
    int64_t dur = 0;
    if (!ev.dur_tok.empty()) {
      auto d = parseMicrosToNanos(ev.dur_tok);
      if (d && *d > 0) dur = std::min(*d, kMaxDurNs);
    }
    uint32_t track = trackOf(ev, gpuSide(kind));
    Event e = pending(ev, kind, track, start);
    e.dur_ns = dur;
    tr_.events.push_back(e);
    ++tr_.stats.kept_events;
  }

  Event pending(const RawEvent& ev, EventKind kind, uint32_t track, int64_t start) {
    Event e;
    e.start_ns = start;  // base time is added in finish(): it may come after traceEvents
    e.kind = kind;
    e.track = track;
    e.name = strings().intern(ev.name);
    e.correlation = ev.correlation;
    e.external_id = ev.external_id;
    if (ev.bytes > 0) e.bytes = ev.bytes;
    if (kind == EventKind::kKernel && ev.has_coll) {
      Collective c;
      c.coll_name = strings().intern(ev.coll_name);
      c.dtype = strings().intern(ev.dtype);
      c.in_nelems = ev.in_nelems;
      c.out_nelems = ev.out_nelems;
      c.group_size = static_cast<int32_t>(ev.group_size);
      c.pg_ranks = strings().intern(ev.pg_ranks);
      c.pg_name = strings().intern(ev.pg_name);
      c.process_group = processGroupOf(c);
      tr_.collectives.push_back(c);
      e.collective = static_cast<uint32_t>(tr_.collectives.size());
    } else if (kind == EventKind::kHostOp || (kind == EventKind::kRange && ev.name.substr(0, 5) == "nccl:")) {
      if (!ev.input_type.empty()) e.dtype = strings().intern(ev.input_type);
      if (!ev.input_dims.empty()) e.shapes = strings().intern(ev.input_dims);
    }
    return e;
  }

  void finish() {
    for (auto& [track, stack] : open_) tr_.stats.unmatched_begin_end += stack.size();
    // Sorting before adding the base time gives the same order (every start moves by the same amount).
    std::sort(tr_.events.begin(), tr_.events.end(), [](const Event& a, const Event& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.dur_ns > b.dur_ns;
    });
    collectivesFromRanges(tr_);
    // One pass: absolute times, and roles from Kineto's names (classified once per string).
    int64_t base = tr_.has_base_time ? tr_.base_time_ns : 0;
    KinetoRoleAssigner roles(tr_);
    for (uint32_t i = 0; i < tr_.events.size(); ++i) {
      tr_.events[i].start_ns += base;
      roles.apply(i);
    }
    if (tr_.record_window_end_ns != INT64_MIN) tr_.record_window_end_ns += base;
    tr_.gpu_memory.finish(base);
    // The accelerator stack: device names first, else the runtime's call names.
    auto has = [](std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; };
    for (const auto& d : tr_.devices) {
      if (has(d.name, "AMD") || has(d.name, "Instinct") || has(d.name, "Radeon"))
        tr_.platform = "rocm";
      else if (has(d.name, "MTIA"))
        tr_.platform = "mtia";
      else if (tr_.platform.empty() && !d.name.empty())
        tr_.platform = "cuda";
    }
    for (const Event& e : tr_.events) {
      if (!tr_.platform.empty()) break;
      if (e.kind != EventKind::kRuntimeCall) continue;
      std::string_view n = tr_.strings.view(e.name);
      tr_.platform = n.substr(0, 3) == "hip" ? "rocm" : n.substr(0, 2) == "cu" ? "cuda" : "";
    }
    tr_.stats.file_bytes = in_.fileBytes();
    if (!saw_events_ && tr_.events.empty() && tr_.stats.json_events == 0) no_events_ = true;
  }

  ByteStream& in_;
  std::string name_;
  size_t cap_;
  std::vector<char> buf_;
  size_t cur_, len_;
  uint64_t base_off_ = 0;
  bool eof_ = false, saw_events_ = false, no_events_ = false;
  Status st_;
  od::parser parser_;
  RankTrace tr_;
  std::unordered_map<uint64_t, uint32_t> track_index_;
  std::unordered_map<uint32_t, std::vector<Event>> open_;
};

}  // namespace

Result<RankTrace> readKinetoTrace(ByteStream& in, const std::string& name, const KinetoReadOptions& opt) {
  Reader r(in, name, opt);
  auto res = r.run();
  if (res.ok() && res.value().stats.json_events == 0)
    return Error{name + ": no trace events (no \"traceEvents\" array, or it is empty): not a profiler trace"};
  return res;
}

Result<RankTrace> readKinetoTrace(const std::string& path, const KinetoReadOptions& opt) {
  auto in = ByteStream::open(path);
  if (!in.ok()) return in.error();
  return readKinetoTrace(*in.value(), path, opt);
}

}  // namespace gpudoctor
