// The on-disk form of a `gpudoctor record` recording (.gdrec): what libgpudoctor-record.so
// (gpu/recorder/) writes from CUPTI's activity records and sources/record/ reads into a RankTrace.
// One file per recorded process, little-endian, written by one background thread:
//
//   FileHeader, then records: RecordHeader {type, size} followed by `size` payload bytes.
//
// Every record is size-prefixed, so a reader skips types it does not know (a newer minor
// version) and sees a truncated file as a record that runs past the end. A file is complete only
// when its last record is kEnd; the recorder writes NAME.gdrec.partial and renames it at the end,
// so a file without the suffix was finished. Times are CUPTI timestamps (ns); FileHeader pairs the
// first with the host's realtime clock so recordings of several processes and hosts line up.
#pragma once
#include <cstdint>

#include <string_view>

namespace gpudoctor::recording {

// A CUDA call (as the recording names it, without CUPTI's "_vNNNN") that launches GPU work:
// kernel launches (cudaLaunchKernel, cuLaunchKernelEx, cooperative ones) and graph launches, not
// cudaLaunchHostFunc / cuLaunchHostFunc, which queue host work. The recorder counts them, the
// reader matches them to their GPU work.
inline bool isLaunchCall(std::string_view n) {
  return ((n.substr(0, 10) == "cudaLaunch" || n.substr(0, 8) == "cuLaunch") &&
          n.find("HostFunc") == std::string_view::npos) ||
         n == "cudaGraphLaunch" || n == "cuGraphLaunch";
}
inline bool isGraphLaunchCall(std::string_view n) { return n == "cudaGraphLaunch" || n == "cuGraphLaunch"; }

// The NVTX ranges that are steps when the recording names no pattern (PyTorch's profiler steps).
inline constexpr char kDefaultStepPattern[] = "^ProfilerStep#[0-9]+$";

inline constexpr char kMagic[8] = {'G', 'D', 'R', 'E', 'C', '\0', '\r', '\n'};
inline constexpr uint32_t kVersion = 1;  // a reader refuses any other major version

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;  // sizeof(FileHeader) as written, so fields can be appended
  int64_t pid;
  int32_t rank;               // from RANK, OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID; -1 when none
  int32_t local_rank;         // LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID; -1 when none
  int32_t world_size;         // WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS; -1 when none
  uint32_t cupti_version;     // cuptiGetVersion
  uint64_t cupti_start_ns;    // cuptiGetTimestamp() at initialization ...
  int64_t realtime_start_ns;  // ... and CLOCK_REALTIME (ns since the epoch) at the same moment
};
static_assert(sizeof(FileHeader) == 56);

enum class Type : uint16_t {
  kString = 1,     // u32 id, then the bytes (no terminator): kernel, API, NVTX and info strings
  kInfo = 2,       // key '\0' value: host, command, nvtx_step, launcher, ...
  kDevice = 3,     // Device
  kKernel = 4,     // Kernel
  kCopy = 5,       // Copy (memcpy and memset)
  kApi = 6,        // Api (CUDA runtime and driver calls)
  kSync = 7,       // Sync (CUPTI synchronization records)
  kRange = 8,      // Range (NVTX push/pop and start/end ranges, paired by the recorder)
  kOverhead = 9,   // Overhead (CUPTI's own buffer and instrumentation work)
  kWindow = 10,    // Window: a span during which the recorder was attached
  kEnd = 11,       // End: written last; its absence means the process stopped before the recorder finished
  kNcclCall = 12,  // NcclCall: an NCCL API call as NCCL's NVTX range payload describes it
};

struct RecordHeader {
  uint16_t type;
  uint16_t reserved;
  uint32_t size;  // payload bytes that follow
};
static_assert(sizeof(RecordHeader) == 8);

struct Device {
  uint32_t id;
  uint32_t sms;
  uint32_t cc_major;
  uint32_t cc_minor;
  uint64_t global_memory_bytes;
  uint32_t name;  // string id
  uint32_t reserved;
};
static_assert(sizeof(Device) == 32);

struct Kernel {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t correlation;  // the launch call's (for graph kernels: the graph launch's)
  uint32_t device;
  uint32_t stream;
  uint32_t name;  // string id (mangled, as CUPTI gives it)
  int32_t grid[3];
  int32_t block[3];
  uint32_t registers;
  uint32_t static_smem;
  uint32_t dynamic_smem;
  uint32_t graph_id;       // 0 when not launched from a graph
  uint64_t graph_node_id;  // 0 when not launched from a graph
};
static_assert(sizeof(Kernel) == 80);

struct Copy {
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t bytes;
  uint32_t correlation;
  uint32_t device;
  uint32_t stream;
  uint32_t graph_id;
  uint8_t copy_kind;  // CUpti_ActivityMemcpyKind; 0 with is_memset
  uint8_t src_kind;   // CUpti_ActivityMemoryKind (memset: the memory kind)
  uint8_t dst_kind;
  uint8_t is_memset;
  uint32_t reserved;
};
static_assert(sizeof(Copy) == 48);

enum class ApiDomain : uint8_t { kRuntime = 1, kDriver = 2 };

struct Api {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t correlation;
  uint32_t tid;    // system thread id
  uint32_t cbid;   // CUPTI callback id in its domain
  uint32_t name;   // string id, without CUPTI's "_vNNNN" suffix
  uint8_t domain;  // ApiDomain
  uint8_t reserved[7];
};
static_assert(sizeof(Api) == 40);

struct Sync {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t correlation;
  uint32_t type;  // CUpti_ActivitySynchronizationType: 1 event, 2 stream wait event, 3 stream, 4 context
  uint32_t stream;
  uint32_t event;
};
static_assert(sizeof(Sync) == 32);

struct Range {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t tid;
  uint32_t name;    // string id
  uint32_t domain;  // string id (0: the default domain)
  uint32_t reserved;
};
static_assert(sizeof(Range) == 32);

struct Overhead {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t kind;  // CUpti_ActivityOverheadKind
  uint32_t reserved;
};
static_assert(sizeof(Overhead) == 24);

struct Window {
  uint64_t start_ns;
  uint64_t end_ns;
};
static_assert(sizeof(Window) == 16);

// NCCL (2.19 and later, unless NCCL_NVTX_DISABLE=1) pushes an NVTX range for each API call with a
// binary payload in one of its static schemas (NCCL's src/include/nvtx_payload_schemas.h, the same
// layouts in 2.28 and 2.30): collectives begin {uint64 communicator hash; size_t bytes; int ...},
// ncclCommDestroy / ncclCommAbort {uint64 hash; int nranks; int rank; int cudaDev}. The recorder
// copies the fields from the range push; the reader gives each NCCL kernel the calls its launching
// thread made since its previous NCCL launch (several in a group).
enum class NcclSchema : uint32_t {  // NCCL's NVTX_SID_* (schema id minus NVTX's static start, 1 << 24)
  kCommInitRank = 0,
  kCommInitAll = 1,
  kCommDestroy = 2,
  kCommAbort = 3,
  kAllGather = 4,
  kAllReduce = 5,
  kBroadcast = 6,
  kReduceScatter = 7,
  kReduce = 8,
  kSend = 9,
  kRecv = 10,
  kAlltoAll = 16,
  kGather = 17,
  kScatter = 18,
};
inline bool isNcclCollectiveSchema(uint32_t s) { return (s >= 4 && s <= 10) || (s >= 16 && s <= 18); }
inline bool isNcclCommSizeSchema(uint32_t s) { return s == 0 || s == 2 || s == 3 || s == 11 || s == 12; }
// The payload's size, sizeof NCCL's struct: {u64 comm; size_t bytes} for allgather and alltoall,
// 24 bytes (padded) for the others. Another library's static schema with the same id is refused.
inline uint32_t ncclPayloadBytes(uint32_t s) {
  return s == static_cast<uint32_t>(NcclSchema::kAllGather) || s == static_cast<uint32_t>(NcclSchema::kAlltoAll) ? 16
                                                                                                                 : 24;
}

struct NcclCall {
  uint64_t start_ns;  // CUPTI timestamp at the range push
  uint32_t tid;       // system thread id, as Api::tid
  uint32_t schema;    // NcclSchema
  uint64_t comm;      // the communicator's hash (the same on every member rank)
  uint64_t bytes;     // collectives: NCCL's message bytes (allgather: sent per rank; reducescatter: received per rank)
  int32_t arg;        // collectives: root, peer or reduction op (-1 none); comm calls: nranks
  int32_t arg2;       // comm calls: this rank in the communicator; else -1
};
static_assert(sizeof(NcclCall) == 40);

struct End {
  uint64_t records;          // records written before this one
  uint64_t dropped;          // CUPTI records dropped for lack of buffers
  uint64_t buffers;          // activity buffers CUPTI filled
  uint64_t buffer_bytes;     // the pool's size at the end
  uint64_t launch_calls;     // runtime/driver launch calls recorded
  uint64_t kernels;          // kernel records
  uint64_t unpaired_ranges;  // NVTX range starts without an end at the end
  uint64_t end_ns;           // cuptiGetTimestamp() when the recorder finished
};
static_assert(sizeof(End) == 64);

}  // namespace gpudoctor::recording
