#include "sources/kineto/range_collectives.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/comm_kernels.h"
#include "model/shapes.h"
#include "sources/kineto/roles.h"

namespace gpudoctor {
namespace {

constexpr std::string_view kRangePrefix = "nccl:";

// "all_gather", "_all_gather_base", "allgather_into_tensor_coalesced", ...
bool isAllGather(std::string_view name) {
  std::string s;
  for (char c : name)
    if (c != '_') s.push_back(c);
  return s.rfind("allgather", 0) == 0;
}

std::string defaultGroupRanks(int world) {
  std::string s = "[";
  for (int r = 0; r < world; ++r) s += (r ? ", " : "") + std::to_string(r);
  return s + "]";
}

}  // namespace

void collectivesFromRanges(RankTrace& t) {
  std::unordered_map<int64_t, uint32_t> kernel_of;      // correlation -> NCCL kernel without a collective
  std::vector<int8_t> nccl_name(t.strings.size(), -1);  // per string: an NCCL kernel's name (-1 not yet known)
  for (uint32_t i = 0; i < t.events.size(); ++i) {
    const Event& e = t.events[i];
    if (e.kind != EventKind::kKernel || e.collective != 0 || e.correlation < 0) continue;
    int8_t& n = nccl_name[e.name];
    if (n < 0) n = commKernelLibrary(t.strings.view(e.name)) == "nccl" ? 1 : 0;
    if (n) kernel_of.emplace(e.correlation, i);
  }
  if (kernel_of.empty()) return;
  // The default group: named as PyTorch describes it in newer traces' pg_config, all ranks in it.
  uint32_t ranks = t.world_size > 0 ? t.strings.intern(defaultGroupRanks(t.world_size)) : 0;
  uint32_t name = t.world_size > 0 ? t.strings.intern("default_pg") : 0;
  std::unordered_map<uint32_t, uint32_t> open;  // host track -> the latest "nccl:" range on it
  for (uint32_t i = 0; i < t.events.size(); ++i) {
    const Event& e = t.events[i];
    if (e.kind == EventKind::kRange && t.strings.view(e.name).substr(0, kRangePrefix.size()) == kRangePrefix) {
      open[e.track] = i;
      continue;
    }
    if (e.kind != EventKind::kRuntimeCall && e.kind != EventKind::kDriverCall) continue;
    auto k = kernel_of.find(e.correlation);
    if (k == kernel_of.end()) continue;
    auto r = open.find(e.track);
    if (r == open.end() || e.start_ns >= t.events[r->second].end_ns()) continue;
    // One collective per kernel (each gets its own sequence number in the group).
    const Event& range = t.events[r->second];
    Collective col;
    col.coll_name = t.strings.intern(std::string(t.strings.view(range.name).substr(kRangePrefix.size())));
    col.dtype = range.dtype;
    col.in_nelems = range.shapes ? firstShapeElements(t.strings.view(range.shapes)) : -1;
    col.group_size = t.world_size > 0 ? t.world_size : -1;
    // The range records the call's input: an all-gather's is one rank's part of its output.
    if (col.in_nelems > 0 && col.group_size > 0 && isAllGather(t.strings.view(col.coll_name)))
      col.out_nelems = col.in_nelems * col.group_size;
    col.pg_ranks = ranks;
    col.pg_name = name;
    col.process_group = processGroupOf(col);
    t.collectives.push_back(col);
    t.events[k->second].collective = static_cast<uint32_t>(t.collectives.size());
  }
}

}  // namespace gpudoctor
