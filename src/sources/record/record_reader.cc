#include "sources/record/record_reader.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <regex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/comm_kernels.h"
#include "model/recording.h"
#include "sources/byte_stream.h"
#include "sources/kineto/roles.h"
#include "sources/record/periodic_steps.h"
#include "sources/trace_reader.h"

namespace gpudoctor {

namespace rec = recording;

namespace {

constexpr uint32_t kMaxRecordBytes = 1u << 20;  // a string or info record longer than this is corrupt
constexpr uint64_t kMaxSpanNs = 400ull * 24 * 3600 * 1000000000ull;  // 400 days: a longer interval is corrupt
constexpr uint64_t kMaxCopyBytes = 1ull << 50;     // 1 PiB: a larger copy or memset is a corrupt record
constexpr uint64_t kMaxTimeNs = (1ull << 62) - 1;  // any time (and clock) beyond is corrupt

std::string demangle(std::string_view s) {
  if (s.substr(0, 2) != "_Z") return std::string(s);
  std::string z(s);
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(z.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && d ? std::string(d.get()) : z;
}

// Kineto's names for copies, so the readers' roles and the analyses see one vocabulary.
std::string copyName(const rec::Copy& c) {
  auto mem = [](uint8_t k) -> std::string_view {
    switch (k) {
      case 1:
        return "Pageable";
      case 2:
        return "Pinned";
      case 3:
        return "Device";
      case 4:
        return "Array";
      case 5:
        return "Managed";
      case 6:
        return "Device Static";
      case 7:
        return "Managed Static";
      default:
        return "Unknown";
    }
  };
  if (c.is_memset) return "Memset (" + std::string(mem(c.src_kind)) + ")";
  static constexpr std::string_view kKinds[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                                "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  std::string_view k = c.copy_kind < std::size(kKinds) ? kKinds[c.copy_kind] : "Unknown";
  return "Memcpy " + std::string(k) + " (" + std::string(mem(c.src_kind)) + " -> " + std::string(mem(c.dst_kind)) + ")";
}

std::string_view syncName(uint32_t type) {
  switch (type) {
    case 1:
      return "Event Sync";
    case 2:
      return "Stream Wait Event";
    case 3:
      return "Stream Sync";
    case 4:
      return "Context Sync";
    default:
      return "Sync";
  }
}

class Reader {
 public:
  Reader(ByteStream& in, std::string name, RecordingFacts* facts) : in_(in), name_(std::move(name)), facts_(facts) {}

  Result<RankTrace> run() {
    rec::FileHeader h{};
    auto got = readSome(reinterpret_cast<char*>(&h), sizeof h);
    if (!got.ok()) return got.error();
    if (got.value() < sizeof h || std::memcmp(h.magic, rec::kMagic, sizeof h.magic) != 0)
      return Error{name_ + ": not a gpudoctor recording (no GDREC header)"};
    if (h.version != rec::kVersion)
      return Error{name_ + ": recording format version " + std::to_string(h.version) +
                   ", this gpudoctor reads version " + std::to_string(rec::kVersion) +
                   " (use the gpudoctor that recorded it)"};
    if (h.header_bytes < sizeof h || h.header_bytes > 4096)
      return Error{name_ + ": corrupt recording header (header size " + std::to_string(h.header_bytes) + ")"};
    if (auto s = skip(h.header_bytes - sizeof h); !s.ok()) return s.error();
    tr_.path = name_;
    tr_.rank = h.rank;
    tr_.world_size = h.world_size;
    // Both clocks below 2^62 ns, so that every time (also below 2^62) plus the offset fits in 64 bits.
    if (h.cupti_start_ns > kMaxTimeNs || h.realtime_start_ns < 0 ||
        h.realtime_start_ns > static_cast<int64_t>(kMaxTimeNs))
      return Error{name_ + ": corrupt recording header (clock times out of range)"};
    tr_.base_time_ns = h.realtime_start_ns - static_cast<int64_t>(h.cupti_start_ns);
    tr_.has_base_time = true;
    tr_.platform = "cuda";
    pid_ = h.pid;
    bool ended = false;
    std::vector<char> payload;
    uint64_t offset = h.header_bytes;
    for (;;) {
      rec::RecordHeader rh{};
      auto n = readSome(reinterpret_cast<char*>(&rh), sizeof rh);
      if (!n.ok()) return n.error();
      if (n.value() == 0) break;
      if (n.value() < sizeof rh) return truncated(offset);
      if (ended) return Error{name_ + ": data after the end record at byte " + std::to_string(offset)};
      if (rh.size > kMaxRecordBytes)
        return Error{name_ + ": corrupt record at byte " + std::to_string(offset) + " (" + std::to_string(rh.size) +
                     " bytes)"};
      payload.resize(rh.size);
      auto p = readSome(payload.data(), rh.size);
      if (!p.ok()) return p.error();
      if (p.value() < rh.size) return truncated(offset);
      if (auto s = record(static_cast<rec::Type>(rh.type), payload, offset); !s.ok()) return s.error();
      ended = rh.type == static_cast<uint16_t>(rec::Type::kEnd);
      offset += sizeof rh + rh.size;
    }
    if (!ended)
      return Error{
          name_ +
          ": recording has no end record (the process stopped before the recorder finished, or the file is cut)"};
    finish();
    tr_.stats.file_bytes = in_.fileBytes();
    tr_.stats.input_bytes = offset;
    tr_.stats.kept_events = tr_.events.size();
    if (facts_ != nullptr) *facts_ = facts;
    return std::move(tr_);
  }

 private:
  Error truncated(uint64_t offset) const {
    return Error{name_ + ": recording cut at byte " + std::to_string(offset) + " (truncated file)"};
  }

  Result<size_t> readSome(char* dst, size_t n) {
    size_t got = 0;
    while (got < n) {
      auto r = in_.read(dst + got, n - got);
      if (!r.ok()) return r.error();
      if (r.value() == 0) break;
      got += r.value();
    }
    return got;
  }
  Status skip(size_t n) {
    std::vector<char> tmp(n);
    auto r = readSome(tmp.data(), n);
    if (!r.ok()) return r.error();
    if (r.value() < n) return truncated(0);
    return {};
  }

  template <class T>
  Status fixed(const std::vector<char>& p, uint64_t offset, T& out) {
    if (p.size() < sizeof(T))
      return Error{name_ + ": corrupt record at byte " + std::to_string(offset) + " (" + std::to_string(p.size()) +
                   " bytes, expected " + std::to_string(sizeof(T)) + ")"};
    std::memcpy(&out, p.data(), sizeof(T));  // a newer minor version may append fields: read the known prefix
    return {};
  }
  // CUPTI leaves a record's times 0 when the work or call was still in flight as the recorder
  // detached or the process ended: such a record is counted and left out, not a corrupt file.
  static bool untimed(uint64_t start, uint64_t end) { return start == 0 || end == 0; }
  Status span(uint64_t start, uint64_t end, uint64_t offset) {
    if (end < start || end - start > kMaxSpanNs || end > kMaxTimeNs)
      return Error{name_ + ": corrupt times in the record at byte " + std::to_string(offset)};
    return {};
  }

  // The pool id of a recording string (kernel names demangled once).
  uint32_t str(uint32_t id, bool demangled = false) {
    if (id == 0) return StringPool::kEmpty;
    uint64_t key = (static_cast<uint64_t>(demangled) << 32) | id;
    auto it = pooled_.find(key);
    if (it != pooled_.end()) return it->second;
    auto s = strings_.find(id);
    std::string_view text = s != strings_.end() ? std::string_view(s->second) : std::string_view("?");
    uint32_t v = demangled ? tr_.strings.intern(demangle(text)) : tr_.strings.intern(text);
    pooled_.emplace(key, v);
    return v;
  }
  uint32_t hostTrack(uint32_t tid) {
    uint64_t key = tid;
    auto [it, fresh] = host_tracks_.try_emplace(key, 0);
    if (fresh) {
      Track t;
      t.pid = pid_;
      t.tid = tid;
      it->second = static_cast<uint32_t>(tr_.tracks.size());
      tr_.tracks.push_back(t);
    }
    return it->second;
  }
  uint32_t gpuTrack(uint32_t device, uint32_t stream) {
    uint64_t key = (static_cast<uint64_t>(device) << 32) | stream;
    auto [it, fresh] = gpu_tracks_.try_emplace(key, 0);
    if (fresh) {
      Track t;
      t.gpu = true;
      t.pid = device;
      t.tid = stream;
      it->second = static_cast<uint32_t>(tr_.tracks.size());
      tr_.tracks.push_back(t);
    }
    stream_device_.try_emplace(stream, device);
    return it->second;
  }
  Event& add(EventKind k, uint64_t start, uint64_t end, uint32_t name, uint32_t track) {
    Event e;
    e.kind = k;
    e.start_ns = static_cast<int64_t>(start);
    e.dur_ns = static_cast<int64_t>(end - start);
    e.name = name;
    e.track = track;
    tr_.events.push_back(e);
    return tr_.events.back();
  }

  Status record(rec::Type t, const std::vector<char>& p, uint64_t offset) {
    switch (t) {
      case rec::Type::kString: {
        if (p.size() < 4) return fixed(p, offset, dummy4_);
        uint32_t id;
        std::memcpy(&id, p.data(), 4);
        strings_[id] = std::string(p.data() + 4, p.size() - 4);
        return {};
      }
      case rec::Type::kInfo: {
        std::string_view kv(p.data(), p.size());
        size_t z = kv.find('\0');
        if (z == std::string_view::npos)
          return Error{name_ + ": corrupt info record at byte " + std::to_string(offset)};
        std::string k(kv.substr(0, z)), v(kv.substr(z + 1));
        if (k == "host")
          facts.host = v;
        else if (k == "process")
          facts.process = v;
        else if (k == "command")
          facts.command = v;
        else if (k == "nvtx_step")
          facts.nvtx_step = v;
        else if (k == "cupti")
          facts.cupti_path = v;
        return {};
      }
      case rec::Type::kDevice: {
        rec::Device d;
        if (auto s = fixed(p, offset, d); !s.ok()) return s;
        DeviceProps dp;
        dp.id = d.id;
        dp.name = std::string(tr_.strings.view(str(d.name)));
        dp.total_global_mem = static_cast<int64_t>(d.global_memory_bytes);
        dp.num_sms = d.sms;
        dp.compute_major = static_cast<int>(d.cc_major);
        dp.compute_minor = static_cast<int>(d.cc_minor);
        for (const auto& x : tr_.devices)
          if (x.id == dp.id) return {};
        tr_.devices.push_back(dp);
        return {};
      }
      case rec::Type::kKernel: {
        rec::Kernel k;
        if (auto s = fixed(p, offset, k); !s.ok()) return s;
        ++facts.kernels;
        if (untimed(k.start_ns, k.end_ns)) {  // CUPTI gave no times: in flight when the recorder detached
          ++facts.untimed_gpu_records;
          return {};
        }
        if (auto s = span(k.start_ns, k.end_ns, offset); !s.ok()) return s;
        Event& e = add(EventKind::kKernel, k.start_ns, k.end_ns, str(k.name, true), gpuTrack(k.device, k.stream));
        e.correlation = k.correlation;
        if (k.graph_id != 0) ++facts.graph_kernels;
        return {};
      }
      case rec::Type::kCopy: {
        rec::Copy c;
        if (auto s = fixed(p, offset, c); !s.ok()) return s;
        if (c.bytes > kMaxCopyBytes)
          return Error{name_ + ": corrupt byte count in the record at byte " + std::to_string(offset)};
        if (untimed(c.start_ns, c.end_ns)) {
          ++facts.untimed_gpu_records;
          return {};
        }
        if (auto s = span(c.start_ns, c.end_ns, offset); !s.ok()) return s;
        Event& e = add(c.is_memset ? EventKind::kMemset : EventKind::kMemcpy, c.start_ns, c.end_ns,
                       tr_.strings.intern(copyName(c)), gpuTrack(c.device, c.stream));
        e.correlation = c.correlation;
        e.bytes = static_cast<int64_t>(c.bytes);
        return {};
      }
      case rec::Type::kApi: {
        rec::Api a;
        if (auto s = fixed(p, offset, a); !s.ok()) return s;
        if (untimed(a.start_ns, a.end_ns)) {
          ++facts.untimed_calls;
          return {};
        }
        if (auto s = span(a.start_ns, a.end_ns, offset); !s.ok()) return s;
        bool driver = a.domain == static_cast<uint8_t>(rec::ApiDomain::kDriver);
        Event& e = add(driver ? EventKind::kDriverCall : EventKind::kRuntimeCall, a.start_ns, a.end_ns, str(a.name),
                       hostTrack(a.tid));
        e.correlation = a.correlation;
        return {};
      }
      case rec::Type::kSync: {
        rec::Sync s;
        if (auto st = fixed(p, offset, s); !st.ok()) return st;
        if (auto st = span(s.start_ns, s.end_ns, offset); !st.ok()) return st;
        syncs_.push_back(s);
        return {};
      }
      case rec::Type::kRange: {
        rec::Range r;
        if (auto s = fixed(p, offset, r); !s.ok()) return s;
        if (auto s = span(r.start_ns, r.end_ns, offset); !s.ok()) return s;
        add(EventKind::kRange, r.start_ns, r.end_ns, str(r.name), hostTrack(r.tid));
        ++facts.ranges;
        return {};
      }
      case rec::Type::kOverhead: {
        rec::Overhead o;
        if (auto s = fixed(p, offset, o); !s.ok()) return s;
        if (auto s = span(o.start_ns, o.end_ns, offset); !s.ok()) return s;
        add(EventKind::kProfilerOverhead, o.start_ns, o.end_ns, tr_.strings.intern("CUPTI overhead"), hostTrack(0));
        return {};
      }
      case rec::Type::kWindow: {
        rec::Window w;
        if (auto s = fixed(p, offset, w); !s.ok()) return s;
        if (auto s = span(w.start_ns, w.end_ns, offset); !s.ok()) return s;
        ++facts.windows;
        last_window_end_ = std::max<int64_t>(last_window_end_, static_cast<int64_t>(w.end_ns));
        windows_.push_back({static_cast<int64_t>(w.start_ns), static_cast<int64_t>(w.end_ns)});
        return {};
      }
      case rec::Type::kNcclCall: {
        rec::NcclCall c;
        if (auto s = fixed(p, offset, c); !s.ok()) return s;
        if (c.start_ns > kMaxTimeNs || (rec::isNcclCollectiveSchema(c.schema) && c.bytes > kMaxCopyBytes))
          return Error{name_ + ": corrupt NCCL call record at byte " + std::to_string(offset)};
        nccl_calls_.push_back(c);
        return {};
      }
      case rec::Type::kEnd: {
        rec::End e;
        if (auto s = fixed(p, offset, e); !s.ok()) return s;
        facts.dropped = e.dropped;
        return {};
      }
      default:
        return {};  // a newer minor version's record: skipped
    }
  }

  // Driver calls made inside a runtime call on the same thread (cudaMemcpy -> cuMemcpy...) are the
  // runtime call's own work: dropped, their GPU work given the runtime call's correlation.
  void dropNestedDriverCalls() {
    std::unordered_map<uint32_t, std::vector<uint32_t>> by_track;
    for (uint32_t i = 0; i < tr_.events.size(); ++i) {
      EventKind k = tr_.events[i].kind;
      if (k == EventKind::kRuntimeCall || k == EventKind::kDriverCall) by_track[tr_.events[i].track].push_back(i);
    }
    std::unordered_map<int64_t, int64_t> remap;
    std::vector<bool> drop(tr_.events.size(), false);
    for (auto& [track, v] : by_track) {
      std::sort(v.begin(), v.end(), [&](uint32_t a, uint32_t b) {
        const Event &x = tr_.events[a], &y = tr_.events[b];
        return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.dur_ns > y.dur_ns;
      });
      int64_t open_end = INT64_MIN, open_corr = -1;
      for (uint32_t i : v) {
        const Event& e = tr_.events[i];
        if (e.kind == EventKind::kRuntimeCall) {
          if (e.end_ns() > open_end) {
            open_end = e.end_ns();
            open_corr = e.correlation;
          }
        } else if (e.end_ns() <= open_end) {
          drop[i] = true;
          remap[e.correlation] = open_corr;
        }
      }
    }
    if (remap.empty()) return;
    std::vector<Event> kept;
    kept.reserve(tr_.events.size());
    for (uint32_t i = 0; i < tr_.events.size(); ++i) {
      if (drop[i]) {
        ++facts.nested_driver_calls;
        continue;
      }
      Event e = tr_.events[i];
      if (isGpuWork(e.kind)) {
        auto it = remap.find(e.correlation);
        if (it != remap.end()) e.correlation = it->second;
      }
      kept.push_back(e);
    }
    tr_.events = std::move(kept);
  }

  // CUPTI gives every API call its own correlation id, and the call's GPU work carries it. Seen on
  // an H200 (CUDA 13.0, record --sample): after a late re-attach, thousands of calls of one window
  // carried one id, so their GPU work cannot be told apart. Calls sharing an id, and the GPU work
  // carrying it, are unlinked (correlation -1); a window where they are more than 1 % of the calls
  // gives no steps (badWindow).
  void unlinkSharedCorrelations() {
    std::unordered_map<int64_t, uint32_t> calls;
    for (const Event& e : tr_.events)
      if ((e.kind == EventKind::kRuntimeCall || e.kind == EventKind::kDriverCall) && e.correlation >= 0)
        ++calls[e.correlation];
    std::unordered_set<int64_t> shared;
    for (auto& [c, n] : calls)
      if (n > 1) shared.insert(c);
    if (shared.empty()) return;
    std::vector<std::pair<uint64_t, uint64_t>> per_window(windows_.size());  // (calls, unlinked calls)
    for (Event& e : tr_.events) {
      if (e.correlation < 0 || !shared.count(e.correlation)) continue;
      e.correlation = -1;
      if (e.kind == EventKind::kRuntimeCall || e.kind == EventKind::kDriverCall) ++facts.shared_correlation_calls;
    }
    for (const Event& e : tr_.events) {
      if (e.kind != EventKind::kRuntimeCall && e.kind != EventKind::kDriverCall) continue;
      size_t w = windowOf(e.start_ns);
      if (w == SIZE_MAX) continue;
      ++per_window[w].first;
      per_window[w].second += e.correlation < 0;
    }
    for (size_t w = 0; w < per_window.size(); ++w)
      if (per_window[w].second * 100 > per_window[w].first) bad_windows_.insert(w);
  }
  // The attach window holding time t (windows_ sorted), or SIZE_MAX.
  size_t windowOf(int64_t t) const {
    auto it = std::upper_bound(windows_.begin(), windows_.end(), std::make_pair(t, INT64_MAX));
    if (it == windows_.begin()) return SIZE_MAX;
    --it;
    return t <= it->second ? static_cast<size_t>(it - windows_.begin()) : SIZE_MAX;
  }
  bool badWindow(int64_t t) const { return !bad_windows_.empty() && bad_windows_.count(windowOf(t)) != 0; }

  // NCCL's own account of each collective (its NVTX payload: communicator, bytes) given to the NCCL
  // kernel it launched: a kernel gets the calls its launching thread made after that thread's
  // previous NCCL launch, up to its own launch call (one call, or the calls of an ncclGroup). The
  // collective's bytes follow PyTorch's convention (the larger of input and output): NCCL gives
  // allgather's sent and reducescatter's received bytes per rank, so those are multiplied by the
  // communicator's size, known from ncclCommDestroy's payload or, with a single communicator, the
  // recording's world size; unknown otherwise (0). The dtype is unknown (NCCL gives bytes only).
  void attachNcclCalls() {
    if (nccl_calls_.empty()) return;
    std::unordered_map<uint64_t, int> comm_size;
    std::unordered_set<uint64_t> comms;
    std::unordered_map<uint32_t, std::vector<const rec::NcclCall*>> by_tid;
    for (const auto& c : nccl_calls_) {
      if (rec::isNcclCommSizeSchema(c.schema) && c.arg > 0 && c.arg <= (1 << 24)) comm_size[c.comm] = c.arg;
      if (!rec::isNcclCollectiveSchema(c.schema)) continue;
      comms.insert(c.comm);
      by_tid[c.tid].push_back(&c);
    }
    for (auto& [tid, v] : by_tid)
      std::stable_sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
    // The launch call (thread, start) of each correlation.
    std::unordered_map<int64_t, std::pair<uint32_t, int64_t>> launch;
    for (const Event& e : tr_.events)
      if ((e.kind == EventKind::kRuntimeCall || e.kind == EventKind::kDriverCall) && e.correlation >= 0 &&
          rec::isLaunchCall(tr_.strings.view(e.name)))
        launch.try_emplace(e.correlation, static_cast<uint32_t>(tr_.tracks[e.track].tid), e.start_ns);
    struct Kern {
      int64_t launch_ns;
      uint32_t event;
    };
    std::unordered_map<uint32_t, std::vector<Kern>> kernels;  // launching thread -> its NCCL kernels
    std::unordered_map<uint32_t, bool> is_nccl;
    for (uint32_t i = 0; i < tr_.events.size(); ++i) {
      const Event& e = tr_.events[i];
      if (e.kind != EventKind::kKernel || e.correlation < 0) continue;
      auto [n, fresh] = is_nccl.try_emplace(e.name, false);
      if (fresh) n->second = commKernelLibrary(tr_.strings.view(e.name)) == "nccl";
      if (!n->second) continue;
      auto l = launch.find(e.correlation);
      if (l != launch.end()) kernels[l->second.first].push_back({l->second.second, i});
    }
    const int world = tr_.world_size > 0 && comms.size() == 1 ? tr_.world_size : -1;
    for (auto& [tid, ks] : kernels) {
      auto calls = by_tid.find(tid);
      if (calls == by_tid.end()) continue;
      std::sort(ks.begin(), ks.end(), [](const Kern& a, const Kern& b) { return a.launch_ns < b.launch_ns; });
      const auto& cs = calls->second;
      size_t next = 0;
      for (const Kern& k : ks) {
        size_t from = next;
        while (next < cs.size() && static_cast<int64_t>(cs[next]->start_ns) <= k.launch_ns) ++next;
        if (next == from) continue;  // a kernel NCCL launched without a call of its own in the window
        std::string kind;
        uint64_t comm = cs[from]->comm;
        int64_t bytes = 0;
        int n = -1;
        for (size_t j = from; j < next; ++j) {
          const rec::NcclCall& c = *cs[j];
          std::string_view k1 = ncclSchemaName(c.schema);
          kind = j == from ? std::string(k1) : (kind == k1 ? kind : std::string("grouped"));
          auto sz = comm_size.find(c.comm);
          int size = sz != comm_size.end() ? sz->second : world;
          if (c.comm != comm) comm = 0;
          n = j == from ? size : (n == size ? n : -1);
          bool per_rank = c.schema == static_cast<uint32_t>(rec::NcclSchema::kAllGather) ||
                          c.schema == static_cast<uint32_t>(rec::NcclSchema::kReduceScatter);
          if (bytes >= 0)
            bytes = per_rank ? (size > 0 ? bytes + static_cast<int64_t>(c.bytes) * size : -1)
                             : bytes + static_cast<int64_t>(c.bytes);
        }
        Collective col;
        col.coll_name = tr_.strings.intern(kind);
        col.group_size = n;
        if (comm != 0) {
          char h[32];
          std::snprintf(h, sizeof h, "nccl:%016llx", static_cast<unsigned long long>(comm));
          col.process_group = col.pg_name = tr_.strings.intern(h);
        }
        tr_.collectives.push_back(col);
        Event& e = tr_.events[k.event];
        e.collective = static_cast<uint32_t>(tr_.collectives.size());
        e.bytes = std::max<int64_t>(0, bytes);
        ++facts.nccl_kernels_with_calls;
      }
    }
    facts.nccl_calls = 0;
    for (auto& [tid, v] : by_tid) facts.nccl_calls += v.size();
  }
  static std::string_view ncclSchemaName(uint32_t s) {
    switch (static_cast<rec::NcclSchema>(s)) {
      case rec::NcclSchema::kAllGather:
        return "allgather";
      case rec::NcclSchema::kAllReduce:
        return "allreduce";
      case rec::NcclSchema::kBroadcast:
        return "broadcast";
      case rec::NcclSchema::kReduceScatter:
        return "reduce_scatter";
      case rec::NcclSchema::kReduce:
        return "reduce";
      case rec::NcclSchema::kSend:
        return "send";
      case rec::NcclSchema::kRecv:
        return "recv";
      case rec::NcclSchema::kAlltoAll:
        return "all_to_all";
      case rec::NcclSchema::kGather:
        return "gather";
      case rec::NcclSchema::kScatter:
        return "scatter";
      default:
        return "unknown";
    }
  }

  // Every launch call with the GPU work it queued (the first kernel's or copy's name), in time
  // order over all threads: PyTorch launches backward from autograd's thread, XLA from a pool, so
  // one thread's launches are only part of the step's sequence. Launches during a stream capture
  // queue no work (the graph replays it later) and are counted apart.
  void countLaunches() {
    std::unordered_map<int64_t, std::pair<int64_t, uint32_t>> first;  // correlation -> (start, name)
    for (const Event& e : tr_.events) {
      if (!isGpuWork(e.kind) || e.correlation < 0) continue;
      auto [it, fresh] = first.try_emplace(e.correlation, e.start_ns, e.name);
      if (!fresh && e.start_ns < it->second.first) it->second = {e.start_ns, e.name};
    }
    std::unordered_map<uint32_t, uint8_t> kind;  // name -> 1 launch, 2 graph launch, 4 begin capture, 8 end capture
    std::unordered_map<uint32_t, std::vector<std::pair<int64_t, int64_t>>> captures;  // track -> capture spans
    std::unordered_map<uint32_t, int64_t> capture_open;
    std::vector<const Event*> calls;
    for (const Event& e : tr_.events) {
      if (e.kind != EventKind::kRuntimeCall && e.kind != EventKind::kDriverCall) continue;
      auto [k, fresh] = kind.try_emplace(e.name, 0);
      if (fresh) {
        std::string_view n = tr_.strings.view(e.name);
        k->second = static_cast<uint8_t>((rec::isLaunchCall(n) ? 1 : 0) | (rec::isGraphLaunchCall(n) ? 2 : 0) |
                                         (n.find("StreamBeginCapture") != std::string_view::npos ? 4 : 0) |
                                         (n.find("StreamEndCapture") != std::string_view::npos ? 8 : 0));
      }
      if (k->second & 4) capture_open[e.track] = e.start_ns;
      if ((k->second & 8) && capture_open.count(e.track)) {
        captures[e.track].push_back({capture_open[e.track], e.end_ns()});
        capture_open.erase(e.track);
      }
      if (k->second & 3) calls.push_back(&e);
    }
    auto captured = [&](const Event& e) {
      auto it = captures.find(e.track);
      if (it == captures.end()) return false;
      for (auto& [b, x] : it->second)
        if (e.start_ns >= b && e.end_ns() <= x) return true;
      return false;
    };
    std::unordered_map<uint32_t, size_t> per_track;
    for (const Event* e : calls) {
      ++facts.launch_calls;
      if (kind[e->name] & 2) ++facts.graph_launches;
      auto it = first.find(e->correlation);
      if (it == first.end()) {
        if (captured(*e))
          ++facts.captured_launches;
        else
          ++facts.launches_without_gpu_work;
        continue;
      }
      launches_.push_back({e->start_ns, e->end_ns(), it->second.second});
      ++per_track[e->track];
    }
    size_t most = 0;
    for (auto& [track, n] : per_track)
      if (n > most || (n == most && track < main_track_)) {
        most = n;
        main_track_ = track;
      }
    std::sort(launches_.begin(), launches_.end(),
              [](const LaunchMark& a, const LaunchMark& b) { return a.start_ns < b.start_ns; });
  }

  // Steps: NVTX ranges matching the pattern, else the launch period of the thread that launches most.
  void findSteps() {
    std::string pattern = facts.nvtx_step.empty() ? std::string(rec::kDefaultStepPattern) : facts.nvtx_step;
    std::regex re;
    try {
      re = std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error&) {
      re = std::regex(std::string(rec::kDefaultStepPattern));
    }
    std::unordered_map<uint32_t, bool> matches;
    for (uint32_t i = 0; i < tr_.events.size(); ++i) {
      const Event& e = tr_.events[i];
      if (e.kind != EventKind::kRange) continue;
      auto [it, fresh] = matches.try_emplace(e.name, false);
      if (fresh) it->second = std::regex_search(std::string(tr_.strings.view(e.name)), re);
      if (it->second && !badWindow(e.start_ns)) step_events_.push_back(i);
    }
    if (!step_events_.empty()) {
      facts.steps_from = "nvtx";
      facts.steps_note = std::to_string(step_events_.size()) + " NVTX ranges matching " + pattern;
      return;
    }
    if (launches_.empty()) {
      facts.steps_from = "none";
      facts.steps_note = "no launches with GPU work";
      return;
    }
    // Each attach window is a continuous run of the loop (a sampled recording has several, with
    // the detached time between them): its period and phase are found on its own launches, and no
    // step spans two windows.
    std::vector<std::vector<LaunchMark>> split;  // only when there are several windows
    if (windows_.size() > 1) {
      split.resize(windows_.size());
      size_t w = 0;
      for (const LaunchMark& l : launches_) {
        while (w + 1 < windows_.size() && l.start_ns >= windows_[w + 1].first) ++w;
        split[w].push_back(l);
      }
    }
    std::vector<const std::vector<LaunchMark>*> runs;
    if (split.empty()) runs.push_back(&launches_);
    for (const auto& r : split) runs.push_back(&r);
    const uint32_t main_track = main_track_;
    size_t number = 0, with_steps = 0;
    std::string first_note, why_none;
    for (size_t r = 0; r < runs.size(); ++r) {
      if (bad_windows_.count(r)) continue;
      PeriodicSteps ps = findPeriodicSteps(*runs[r]);
      if (ps.period == 0) {
        if (why_none.empty()) why_none = ps.why_none;
        continue;
      }
      if (first_note.empty()) {
        char m[32];
        std::snprintf(m, sizeof m, "%.1f", 100 * ps.match);
        first_note = "a period of " + std::to_string(ps.period) + " launches, " + m + " % self-match";
      }
      ++with_steps;
      for (size_t k = 0; k + 1 < ps.boundaries.size(); ++k) {
        uint32_t name = tr_.strings.intern("step #" + std::to_string(++number) + " (launch period)");
        add(EventKind::kRange, static_cast<uint64_t>(ps.boundaries[k]), static_cast<uint64_t>(ps.boundaries[k + 1]),
            name, main_track);
        step_events_.push_back(static_cast<uint32_t>(tr_.events.size() - 1));
      }
    }
    if (number == 0) {
      facts.steps_from = "none";
      facts.steps_note =
          runs.size() == 1 ? why_none : why_none + " (in each of " + std::to_string(runs.size()) + " attach windows)";
      return;
    }
    facts.steps_from = "periodicity";
    facts.steps_note = runs.size() == 1 ? first_note
                                        : first_note + " (in the first; steps in " + std::to_string(with_steps) +
                                              " of " + std::to_string(runs.size()) + " attach windows)";
  }
  // Said after the steps, whichever way they were found.
  void noteBadWindows() {
    if (bad_windows_.empty()) return;
    facts.steps_note += "; " + std::to_string(bad_windows_.size()) + " attach window" +
                        (bad_windows_.size() == 1 ? "" : "s") + " left out: CUPTI gave " +
                        std::to_string(facts.shared_correlation_calls) +
                        " calls shared correlation ids, so their GPU work is not linked to them";
  }

  void finish() {
    for (const rec::Sync& s : syncs_) {
      auto d = stream_device_.find(s.stream);
      Event& e = add(EventKind::kSyncEvent, s.start_ns, s.end_ns, tr_.strings.intern(syncName(s.type)),
                     gpuTrack(d != stream_device_.end() ? d->second : 0, s.stream));
      e.correlation = s.correlation;
    }
    dropNestedDriverCalls();
    std::sort(windows_.begin(), windows_.end());
    unlinkSharedCorrelations();
    attachNcclCalls();
    countLaunches();
    findSteps();
    noteBadWindows();
    for (uint32_t i : step_events_) tr_.events[i].roles = kRoleStep;  // carried through the sort
    std::sort(tr_.events.begin(), tr_.events.end(), [](const Event& a, const Event& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.dur_ns > b.dur_ns;
    });
    std::vector<uint32_t> steps;
    for (uint32_t i = 0; i < tr_.events.size(); ++i)
      if (tr_.events[i].roles & kRoleStep) steps.push_back(i);
    KinetoRoleAssigner roles(tr_);  // CUDA's call names and the communication kernels' names
    for (uint32_t i = 0; i < tr_.events.size(); ++i) {
      roles.apply(i);
      tr_.events[i].roles &= static_cast<uint16_t>(~kRoleStep);  // steps are ours, not Kineto's names
    }
    tr_.step_marks.clear();
    int64_t number = 0;
    for (uint32_t i : steps) {
      tr_.events[i].roles |= kRoleStep;
      tr_.step_marks.push_back({i, ++number});
    }
    facts.steps = tr_.step_marks.size();
    const int64_t base = tr_.base_time_ns;
    for (Event& e : tr_.events) e.start_ns += base;
    if (last_window_end_ != INT64_MIN) tr_.record_window_end_ns = last_window_end_ + base;
  }

  RecordingFacts facts;
  ByteStream& in_;
  std::string name_;
  RecordingFacts* facts_;
  RankTrace tr_;
  int64_t pid_ = 0;
  uint32_t dummy4_ = 0;
  std::unordered_map<uint32_t, std::string> strings_;
  std::unordered_map<uint64_t, uint32_t> pooled_;
  std::unordered_map<uint64_t, uint32_t> host_tracks_, gpu_tracks_;
  std::unordered_map<uint32_t, uint32_t> stream_device_;
  std::vector<rec::Sync> syncs_;
  std::vector<rec::NcclCall> nccl_calls_;
  std::vector<uint32_t> step_events_;
  std::vector<LaunchMark> launches_;                  // every thread's, in start order
  std::vector<std::pair<int64_t, int64_t>> windows_;  // attach windows (CUPTI ns), sorted before use
  std::unordered_set<size_t> bad_windows_;            // windows whose calls share correlation ids
  uint32_t main_track_ = 0;                           // the thread that launches most: steps are drawn on it
  int64_t last_window_end_ = INT64_MIN;
};

class RecordTraceReader final : public TraceReader {
 public:
  std::string_view name() const override { return "record"; }
  std::string_view description() const override { return "gpudoctor record recording, .gdrec or .gdrec.gz"; }
  bool probe(std::string_view head, std::string_view) const override { return looksLikeRecording(head); }
  Result<RankTrace> read(const std::string& path) const override { return readRecording(path); }
};

}  // namespace

bool looksLikeRecording(std::string_view head) {
  return head.size() >= sizeof rec::kMagic && std::memcmp(head.data(), rec::kMagic, sizeof rec::kMagic) == 0;
}

Result<RankTrace> readRecording(const std::string& path, RecordingFacts* facts) {
  auto in = ByteStream::open(path);
  if (!in.ok()) return in.error();
  Reader r(*in.value(), path, facts);
  return r.run();
}

Result<RankTrace> readRecordingFromMemory(const char* data, size_t size, const std::string& name,
                                          RecordingFacts* facts) {
  auto in = ByteStream::fromMemory(data, size, name);
  Reader r(*in, name, facts);
  return r.run();
}

const TraceReader& recordTraceReader() {
  static const RecordTraceReader r;
  return r;
}

}  // namespace gpudoctor
