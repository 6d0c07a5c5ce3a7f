// libnccl-tuner-gpudoctor.so: an NCCL tuner plugin that applies the choices `gpudoctor nccl tune`
// measured: for a collective, a size range and a communicator shape, force an algorithm and protocol
// (cost 0 in NCCL's table, so it is picked) and optionally a channel count. Anything the file does
// not match keeps NCCL's own choice, channel count included. Use:
//   NCCL_TUNER_PLUGIN=/path/libnccl-tuner-gpudoctor.so GPUDOCTOR_TUNER_CONFIG=tuner.csv
// The config: lines "collective,min_bytes,max_bytes,algorithm,protocol,channels[,nranks,nnodes]"
// (# comments; nranks/nnodes 0 or absent = any shape), e.g. "allreduce,0,65535,tree,ll,0,16,2".
// "default,default" as algorithm and protocol sets only the channel count.
// A file with any line it cannot read is rejected whole: a training job must never run on half a
// configuration. Exports the v5 interface (NCCL 2.28/2.29) and v4/v3 (NCCL 2.21-2.27); the structs
// are declared here from NCCL's documented layout. It never fails a call: errors are logged through
// NCCL's logger (NCCL_DEBUG=WARN shows them) and NCCL's defaults apply.
#include <cstdarg>
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
  ncclResult_t (*getCollInfo)(void* ctx, int collType, size_t nBytes, int numPipeOps, float** collCostTable,
                              int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*finalize)(void* ctx);
} ncclTuner_v5_t;
typedef struct {
  const char* name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** ctx);
  ncclResult_t (*getCollInfo)(void* ctx, int collType, size_t nBytes, int numPipeOps, float** collCostTable,
                              int numAlgo, int numProto, int regBuff, int* nChannels);
  ncclResult_t (*destroy)(void* ctx);
} ncclTuner_v4_t;
typedef struct {
  const char* name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void** ctx);
  ncclResult_t (*getCollInfo)(void* ctx, int collType, size_t nBytes, int numPipeOps, float** collCostTable,
                              int numAlgo, int numProto, int* nChannels);
  ncclResult_t (*destroy)(void* ctx);
} ncclTuner_v3_t;
}

namespace {

// NCCL's logger levels and subsystems (ncclDebugLogLevel, ncclDebugLogSubSys).
constexpr int kLogWarn = 2, kLogInfo = 3;
constexpr unsigned long kInit = 0x1, kTuning = 0x40;

struct Rule {
  int coll;  // ncclFunc_t: Broadcast 0, Reduce 1, AllGather 2, ReduceScatter 3, AllReduce 4
  uint64_t lo, hi;
  int algo, proto, channels;  // algo = proto = -1: channels only
  uint64_t nranks, nnodes;    // 0 = any
};

struct Context {
  std::vector<Rule> rules;
  ncclDebugLogger_t log = nullptr;
};

// Through NCCL's logger when NCCL gave one (its format, its NCCL_DEBUG filter), else stderr.
void say(ncclDebugLogger_t log, int level, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
void say(ncclDebugLogger_t log, int level, const char* fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (log)
    log(level, kInit | kTuning, __func__, __LINE__, "%s", msg);
  else if (level <= kLogWarn)
    std::fprintf(stderr, "%s\n", msg);
}

int collOf(const std::string& s) {
  static const char* k[] = {"broadcast", "reduce", "allgather", "reducescatter", "allreduce"};
  for (int i = 0; i < 5; ++i)
    if (s == k[i]) return i;
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
  static const char* k[] = {"ll", "ll128", "simple"};
  for (int i = 0; i < 3; ++i)
    if (s == k[i]) return i;
  return -1;
}
std::string trimLower(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
  std::string t = a == std::string::npos ? "" : s.substr(a, b - a + 1);
  for (auto& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return t;
}
bool number(const std::string& s, uint64_t& v) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 19) return false;
  v = std::strtoull(s.c_str(), nullptr, 10);
  return true;
}

// Reads the whole file; on any unreadable line returns false with why (and no rules).
bool readConfig(const char* path, std::vector<Rule>& rules, std::string& why) {
  std::ifstream in(path);
  if (!in) {
    why = std::string("cannot read ") + path + ": " + std::strerror(errno);
    return false;
  }
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    if (auto h = line.find('#'); h != std::string::npos) line.resize(h);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(trimLower(x));
    Rule r{};
    uint64_t ch = 0;
    bool ok = (f.size() == 6 || f.size() == 8) && (r.coll = collOf(f[0])) >= 0 && number(f[1], r.lo) &&
              number(f[2], r.hi) && r.lo <= r.hi && number(f[5], ch) && ch <= 1024 &&
              (f.size() == 6 || (number(f[6], r.nranks) && number(f[7], r.nnodes)));
    if (ok && f[3] == "default" && f[4] == "default") {
      r.algo = r.proto = -1;
      ok = ch > 0;  // a rule that changes nothing is a mistake
    } else if (ok) {
      ok = (r.algo = algoOf(f[3])) >= 0 && (r.proto = protoOf(f[4])) >= 0;
    }
    if (!ok) {
      why = std::string(path) + ":" + std::to_string(lineno) + ": cannot read \"" + line +
            "\" (want collective,min_bytes,max_bytes,algorithm,protocol,channels[,nranks,nnodes])";
      rules.clear();
      return false;
    }
    r.channels = static_cast<int>(ch);
    rules.push_back(r);
  }
  return true;
}

ncclResult_t initCommon(size_t nRanks, size_t nNodes, ncclDebugLogger_t log, void** ctx) {
  auto* c = new Context;
  c->log = log;
  *ctx = c;
  const char* path = std::getenv("GPUDOCTOR_TUNER_CONFIG");
  if (!path || !*path) {
    say(log, kLogInfo, "gpudoctor tuner: GPUDOCTOR_TUNER_CONFIG not set; NCCL's defaults apply");
    return 0;
  }
  std::vector<Rule> all;
  std::string why;
  if (!readConfig(path, all, why)) {
    say(log, kLogWarn, "gpudoctor tuner: %s; the whole file is ignored and NCCL's defaults apply", why.c_str());
    return 0;
  }
  for (const Rule& r : all)
    if ((r.nranks == 0 || r.nranks == nRanks) && (r.nnodes == 0 || r.nnodes == nNodes)) c->rules.push_back(r);
  say(log, kLogInfo, "gpudoctor tuner: %zu of %zu rules from %s apply to this communicator (%zu ranks, %zu nodes)",
      c->rules.size(), all.size(), path, nRanks, nNodes);
  return 0;
}

ncclResult_t getCollInfo(void* ctx, int coll, size_t bytes, int, float** table, int numAlgo, int numProto, int,
                         int* nChannels) {
  auto* c = static_cast<Context*>(ctx);
  if (!c || !table) return 0;
  for (const auto& r : c->rules) {
    if (r.coll != coll || bytes < r.lo || bytes > r.hi) continue;
    if (r.algo < 0) {
      if (nChannels) *nChannels = r.channels;
      return 0;
    }
    if (r.algo >= numAlgo || r.proto >= numProto) return 0;
    // NCCL passes its float[numAlgo][numProto] table cast to float**: index it as one block.
    float* cost = reinterpret_cast<float*>(table);
    float& entry = cost[r.algo * numProto + r.proto];
    if (entry < 0) return 0;  // disabled by NCCL (-1): never forced, NCCL's choice stays
    entry = 0.0f;
    if (r.channels > 0 && nChannels) *nChannels = r.channels;
    return 0;
  }
  return 0;
}

ncclResult_t initV5(void** ctx, uint64_t, size_t nRanks, size_t nNodes, ncclDebugLogger_t log, void*, void*) {
  return initCommon(nRanks, nNodes, log, ctx);
}
ncclResult_t getCollInfoV3(void* ctx, int coll, size_t bytes, int pipe, float** table, int numAlgo, int numProto,
                           int* nChannels) {
  return getCollInfo(ctx, coll, bytes, pipe, table, numAlgo, numProto, 0, nChannels);
}
ncclResult_t finalize(void* ctx) {
  delete static_cast<Context*>(ctx);
  return 0;
}

}  // namespace

#define GPUDOCTOR_EXPORT extern "C" __attribute__((visibility("default")))
GPUDOCTOR_EXPORT const ncclTuner_v5_t ncclTunerPlugin_v5 = {"gpudoctor", initV5, getCollInfo, finalize};
GPUDOCTOR_EXPORT const ncclTuner_v4_t ncclTunerPlugin_v4 = {"gpudoctor", initCommon, getCollInfo, finalize};
GPUDOCTOR_EXPORT const ncclTuner_v3_t ncclTunerPlugin_v3 = {"gpudoctor", initCommon, getCollInfoV3, finalize};
