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
#include "sources/record/record_passes.h"
#include "sources/trace_reader.h"

namespace gpudoctor {

namespace rec = recording;

namespace {

constexpr uint32_t kMaxRecordBytes = 1u << 20;  // a string or info record longer than this is corrupt
constexpr uint64_t kMaxSpanNs = 400ull * 24 * 3600 * 1000000000ull;  // 400 days: a longer interval is corrupt
constexpr uint64_t kMaxCopyBytes = 1ull << 50;           // 1 PiB: a larger copy or memset is a corrupt record
constexpr uint64_t kMaxRecordTimeNs = (1ull << 62) - 1;  // any time (and clock) beyond is corrupt

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

class RecordParser {
 public:
  RecordParser(ByteStream& in, std::string name, RecordingFacts* facts_out)
      : in_(in), name_(std::move(name)), facts_(facts_out) {}

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
    if (h.cupti_start_ns > kMaxRecordTimeNs || h.realtime_start_ns < 0 ||
        h.realtime_start_ns > static_cast<int64_t>(kMaxRecordTimeNs))
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
    if (end < start || end - start > kMaxSpanNs || end > kMaxRecordTimeNs)
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
    return addRecordEvent(tr_, k, start, end, name, track);
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
        if (c.start_ns > kMaxRecordTimeNs || (rec::isNcclCollectiveSchema(c.schema) && c.bytes > kMaxCopyBytes))
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

  void finish() {
    for (const rec::Sync& s : syncs_) {
      auto d = stream_device_.find(s.stream);
      Event& e = add(EventKind::kSyncEvent, s.start_ns, s.end_ns, tr_.strings.intern(syncName(s.type)),
                     gpuTrack(d != stream_device_.end() ? d->second : 0, s.stream));
      e.correlation = s.correlation;
    }
    dropNestedDriverCalls(d_);
    std::sort(windows_.begin(), windows_.end());
    unlinkSharedCorrelations(d_);
    attachNcclCalls(d_);
    countLaunches(d_);
    findSteps(d_);
    noteBadWindows(d_);
    for (uint32_t i : d_.step_events) tr_.events[i].roles = kRoleStep;  // carried through the sort
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

  DecodedRecording d_;  // first: the names below refer into it
  RecordingFacts& facts = d_.facts;
  RankTrace& tr_ = d_.tr;
  std::vector<rec::NcclCall>& nccl_calls_ = d_.nccl_calls;
  std::vector<std::pair<int64_t, int64_t>>& windows_ = d_.windows;  // attach windows (CUPTI ns), sorted before use
  ByteStream& in_;
  std::string name_;
  RecordingFacts* facts_;
  int64_t pid_ = 0;
  uint32_t dummy4_ = 0;
  std::unordered_map<uint32_t, std::string> strings_;
  std::unordered_map<uint64_t, uint32_t> pooled_;
  std::unordered_map<uint64_t, uint32_t> host_tracks_, gpu_tracks_;
  std::unordered_map<uint32_t, uint32_t> stream_device_;
  std::vector<rec::Sync> syncs_;
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
  RecordParser r(*in.value(), path, facts);
  return r.run();
}

Result<RankTrace> readRecordingFromMemory(const char* data, size_t size, const std::string& name,
                                          RecordingFacts* facts) {
  auto in = ByteStream::fromMemory(data, size, name);
  RecordParser r(*in, name, facts);
  return r.run();
}

const TraceReader& recordTraceReader() {
  static const RecordTraceReader r;
  return r;
}

}  // namespace gpudoctor
