// libnccl-tuner-gpudoctor.so: an NCCL tuner plugin (ncclTunerPlugin_v5, NCCL 2.28) that applies the
// choices `gpudoctor nccl tune` measured: for a collective and a size range, force an algorithm and
// protocol (cost 0 in NCCL's table, so it is picked) and optionally a channel count. Sizes and
// collectives not in the file keep NCCL's own choice. Use:
//   NCCL_TUNER_PLUGIN=/path/libnccl-tuner-gpudoctor.so GPUDOCTOR_TUNER_CONFIG=tuner.csv
// The config: lines "collective,min_bytes,max_bytes,algorithm,protocol,channels" (# comments),
// e.g. "allreduce,0,65535,tree,ll,0". The struct is declared here from NCCL's documented layout.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
typedef int ncclResult_t;
typedef void (*ncclDebugLogger_t)(int level, unsigned long flags, const char* file, int line, const char* fmt, ...);
typedef struct {
  const char* name;
  ncclResult_t (*init)(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction,
                       void* nvlDomainInfo, void* constants);
  ncclResult_t (*getCollInfo)(void* ctx, int collType, size_t nBytes, int numPipeOps, float** collCostTable, int numAlgo,
                              int numProto, int regBuff, int* nChannels);
  ncclResult_t (*finalize)(void* ctx);
} ncclTuner_v5_t;
}

namespace {

struct Rule {
  int coll;  // ncclFunc_t: Broadcast 0, Reduce 1, AllGather 2, ReduceScatter 3, AllReduce 4
  uint64_t lo, hi;
  int algo, proto, channels;
};

struct Context {
  std::vector<Rule> rules;
  ncclDebugLogger_t log = nullptr;
};

int collOf(const std::string& s) {
  if (s == "broadcast") return 0;
  if (s == "reduce") return 1;
  if (s == "allgather") return 2;
  if (s == "reducescatter") return 3;
  if (s == "allreduce") return 4;
  return -1;
}
// NCCL's indices: algorithms TREE 0, RING 1, COLLNET_DIRECT 2, COLLNET_CHAIN 3, NVLS 4, NVLS_TREE 5, PAT 6;
// protocols LL 0, LL128 1, SIMPLE 2.
int algoOf(const std::string& s) {
  static const char* k[] = {"tree", "ring", "collnetdirect", "collnetchain", "nvls", "nvlstree", "pat"};
  for (int i = 0; i < 7; ++i)
    if (s == k[i]) return i;
  return -1;
}
int protoOf(const std::string& s) {
  if (s == "ll") return 0;
  if (s == "ll128") return 1;
  if (s == "simple") return 2;
  return -1;
}
std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

ncclResult_t init(void** ctx, uint64_t, size_t, size_t, ncclDebugLogger_t log, void*, void*) {
  auto* c = new Context;
  c->log = log;
  *ctx = c;
  const char* path = std::getenv("GPUDOCTOR_TUNER_CONFIG");
  if (!path || !*path) return 0;  // nothing to apply: NCCL's defaults
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "gpudoctor tuner: cannot read GPUDOCTOR_TUNER_CONFIG=%s; using NCCL's defaults\n", path);
    return 0;
  }
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (auto h = line.find('#'); h != std::string::npos) line.resize(h);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string x;
    while (std::getline(ss, x, ',')) f.push_back(lower(x.substr(x.find_first_not_of(" \t") == std::string::npos ? 0 : x.find_first_not_of(" \t"))));
    Rule r{};
    bool ok = f.size() == 6;
    if (ok) {
      r.coll = collOf(f[0]);
      r.lo = std::strtoull(f[1].c_str(), nullptr, 10);
      r.hi = std::strtoull(f[2].c_str(), nullptr, 10);
      r.algo = algoOf(f[3]);
      r.proto = protoOf(f[4]);
      r.channels = std::atoi(f[5].c_str());
      ok = r.coll >= 0 && r.algo >= 0 && r.proto >= 0 && r.lo <= r.hi && r.channels >= 0;
    }
    if (!ok) {
      std::fprintf(stderr, "gpudoctor tuner: %s:%d: cannot read \"%s\"; line ignored\n", path, lineno, line.c_str());
      continue;
    }
    c->rules.push_back(r);
  }
  return 0;
}

ncclResult_t getCollInfo(void* ctx, int coll, size_t bytes, int, float** table, int numAlgo, int numProto, int,
                         int* nChannels) {
  auto* c = static_cast<Context*>(ctx);
  for (const auto& r : c->rules) {
    if (r.coll != coll || bytes < r.lo || bytes > r.hi) continue;
    if (r.algo >= numAlgo || r.proto >= numProto) return 0;
    // NCCL passes its float[numAlgo][numProto] table cast to float**: index it as one block.
    float* cost = reinterpret_cast<float*>(table);
    float& entry = cost[r.algo * numProto + r.proto];
    if (entry < 0) return 0;  // disabled by NCCL (-1): cannot be forced, keep NCCL's choice
    entry = 0.0f;
    if (r.channels > 0) *nChannels = r.channels;
    return 0;
  }
  return 0;
}

ncclResult_t finalize(void* ctx) {
  delete static_cast<Context*>(ctx);
  return 0;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const ncclTuner_v5_t ncclTunerPlugin_v5 = {"gpudoctor", init, getCollInfo,
                                                                                         finalize};
