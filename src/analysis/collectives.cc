#include "analysis/collectives.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <tuple>

#include "model/comm_kernels.h"
#include "model/shapes.h"

namespace gpudoctor {

int dtypeBytes(std::string_view d) {
  // Kernel arguments give ScalarType names ("Float", "BFloat16"); older traces' "Input type" gives C++
  // type names ("float", "long int", "c10::Half").
  if (d.substr(0, 5) == "c10::") d.remove_prefix(5);
  if (d == "Float" || d == "Int" || d == "float" || d == "int" || d == "UInt32" || d == "unsigned int" ||
      d == "ComplexHalf" || d == "complex<c10::Half>")
    return 4;
  if (d == "Double" || d == "Long" || d == "double" || d == "long" || d == "long int" || d == "long long" ||
      d == "UInt64" || d == "unsigned long" || d == "ComplexFloat" || d == "complex<float>")
    return 8;
  if (d == "Half" || d == "BFloat16" || d == "Short" || d == "short" || d == "short int" || d == "UInt16") return 2;
  if (d == "Byte" || d == "Char" || d == "Bool" || d == "bool" || d == "unsigned char" || d == "signed char" ||
      d == "Float8_e4m3fn" || d == "Float8_e5m2" || d == "UInt8" || d == "Int8" || d == "Float8_e4m3fnuz" ||
      d == "Float8_e5m2fnuz")
    return 1;
  if (d == "ComplexDouble" || d == "complex<double>") return 16;
  return 0;
}

double busFactor(std::string_view c, int n) {
  if (n <= 0) return 0;
  double dn = n;
  std::string s;
  for (char ch : c)
    if (ch != '_' && ch != ' ') s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  if (s == "allreduce" || s == "allreducecoalesced") return 2.0 * (dn - 1) / dn;
  // ProcessGroupNCCL records names such as "_allgather_base", "allgather_into_tensor_coalesced",
  // "_reduce_scatter_base": every allgather / reducescatter / alltoall form moves (n-1)/n.
  if (s.rfind("allgather", 0) == 0 || s.rfind("reducescatter", 0) == 0 || s.rfind("alltoall", 0) == 0 ||
      s == "gather" || s == "scatter")
    return (dn - 1) / dn;
  return 1.0;  // broadcast, reduce, send, recv, sendrecv
}

std::string ncclKernelCollective(std::string_view name) {
  for (std::string_view prefix : {"ncclDevKernel_", "ncclKernel_"}) {
    if (name.substr(0, prefix.size()) != prefix) continue;
    std::string_view rest = name.substr(prefix.size());
    rest = rest.substr(0, rest.find_first_of("_("));
    static constexpr std::string_view kKnown[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast",
                                                  "Reduce",    "SendRecv",  "AllToAll"};
    for (auto k : kKnown)
      if (rest == k) {
        std::string o;
        for (char c : k) o += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return o;
      }
  }
  return {};
}

std::string ncclKernelVariant(std::string_view name) {
  auto paren = name.find('(');
  std::string_view stem = name.substr(0, paren);
  static constexpr std::string_view kAlgos[] = {"COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS_TREE", "NVLS",
                                                "TREE",           "RING",          "PAT"};
  static constexpr std::string_view kProtos[] = {"LL128", "SIMPLE", "LL"};
  for (auto a : kAlgos) {
    auto pos = stem.find("_" + std::string(a) + "_");
    if (pos == std::string_view::npos) continue;
    // NCCL >= 2.19: ..._RING_LL(...); older: ncclKernel_AllReduce_RING_LL_Sum_float(...).
    std::string_view rest = stem.substr(pos + 1 + a.size() + 1);
    for (auto p : kProtos)
      if (rest == p || (rest.substr(0, p.size()) == p && rest.size() > p.size() && rest[p.size()] == '_'))
        return std::string(a) + "_" + std::string(p);
    return std::string(a);
  }
  return {};
}

namespace {
using Key = std::tuple<std::string, std::string, std::string, int64_t, int, std::string>;

// An all-reduce by another library's kernels (symmetric memory, vLLM's or TensorRT-LLM's custom
// all-reduce): "allreduce" named by the library, its size from the launching operator's first input
// (symm_mem::one_shot_all_reduce(input, ...)), the trace's world as the group (one node's
// tensor-parallel group in the traces that use them). Other libraries' kernels (expert-parallel
// dispatch/combine, NVSHMEM) have no collective size in the trace: none.
std::optional<Key> otherLibraryKey(const TraceIndex& idx, const Event& e) {
  const RankTrace& t = *idx.trace;
  const std::string_view lib = commKernelLibrary(t.strings.view(e.name));
  if (lib != "symmetric_memory" && lib != "custom_allreduce") return std::nullopt;
  const std::string_view name = t.strings.view(e.name);
  if (name.find("all_reduce") == std::string_view::npos && name.find("allreduce") == std::string_view::npos &&
      name.find("cross_device_reduce") == std::string_view::npos && name.find("ar_fusion") == std::string_view::npos)
    return std::nullopt;
  std::string dtype;
  int64_t bytes = 0;
  if (uint32_t op = e.external_id >= 0 ? idx.op_of.find(e.external_id) : IdMap::kNone; op != IdMap::kNone) {
    const Event& o = t.events[op];
    std::string_view d = t.strings.view(o.dtype);
    if (d.substr(0, 5) == "c10::") d.remove_prefix(5);  // "c10::BFloat16": the kernels' "BFloat16"
    dtype = std::string(d);
    const int64_t n = o.shapes ? firstShapeElements(t.strings.view(o.shapes)) : -1;
    bytes = n > 0 ? n * dtypeBytes(dtype) : 0;
  }
  return Key{"allreduce", dtype, std::string(lib), bytes, t.world_size > 0 ? t.world_size : 0, ""};
}
}  // namespace

std::vector<CollectiveStats> summarizeCollectives(const std::vector<RankWindows>& ranks) {
  std::map<Key, std::vector<int64_t>> groups;
  for (const auto& r : ranks)
    for (const auto& w : *r.windows) {
      const TraceIndex& idx = *r.idx;
      const RankTrace& t = *idx.trace;
      const auto& ev = t.events;
      auto it = idx.firstStartingAt(idx.gpu_work, w.begin_ns);
      for (; it != idx.gpu_work.end() && ev[*it].start_ns < w.end_ns; ++it) {
        const Event& e = ev[*it];
        if (e.kind != EventKind::kKernel) continue;
        if (idx.class_of_event[*it] == KernelClass::kCommOther) {
          if (auto k = otherLibraryKey(idx, e)) groups[*k].push_back(e.dur_ns);
          continue;
        }
        if (idx.class_of_event[*it] != KernelClass::kNccl) continue;
        // Without PyTorch's arguments (a collective outside record_param_comms): the kind from the
        // kernel's name, the size unknown (0).
        std::string coll, dtype, group;
        if (e.collective == 0) {
          coll = ncclKernelCollective(t.strings.view(e.name));
          coll = coll.empty() ? "unknown" : coll;
        }
        int64_t bytes = 0;
        int n = 0;
        if (e.collective > 0) {
          const Collective& c = t.collectives[e.collective - 1];
          coll = std::string(t.strings.view(c.coll_name));
          dtype = std::string(t.strings.view(c.dtype));
          bytes = std::max<int64_t>(0, std::max(c.in_nelems, c.out_nelems)) * dtypeBytes(dtype);
          if (bytes == 0 && c.in_nelems < 0 && c.out_nelems < 0) bytes = e.bytes;  // a source that gives bytes (record)
          n = c.group_size;
          group = std::string(t.strings.view(c.process_group));
        }
        groups[Key{coll, dtype, ncclKernelVariant(t.strings.view(e.name)), bytes, n, group}].push_back(e.dur_ns);
      }
    }
  std::vector<CollectiveStats> out;
  for (auto& [k, durs] : groups) {
    CollectiveStats s;
    std::tie(s.collective, s.dtype, s.variant, s.bytes, s.group_size, s.process_group) = k;
    s.dur = DurationStats::of(durs);
    s.bus_factor = busFactor(s.collective, s.group_size);
    if (s.dur.mean_ns > 0 && s.bytes > 0) {
      s.algbw_gbps = static_cast<double>(s.bytes) / s.dur.mean_ns;  // bytes/ns == GB/s
      s.busbw_gbps = s.algbw_gbps * s.bus_factor;
    }
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.dur.total_ns > b.dur.total_ns; });
  return out;
}

}  // namespace gpudoctor
