// A fake libnvidia-ml.so for tests: the NVML entry points topo and the monitor use, answering from a
// small script (GPUDOCTOR_FAKE_NVML=FILE) so both are tested without a GPU. Lines:
//   gpu INDEX bus=0000:18:00.0 name=NVIDIA_H200 (underscores are spaces) uuid=GPU-.. cc=9.0
//       numa=N|unsupported cpus=0-15|unsupported pcie=5x16
//   nvlink A B COUNT      direct GPU-GPU links      nvswitch A COUNT   links into an NVSwitch
//   ancestor A B LEVEL    nvmlGpuTopologyLevel_t (default 50, SYSTEM)   init_fail CODE
//   fieldvalues off       nvmlDeviceGetFieldValues answers NOT_SUPPORTED (older call used)
//   metrics INDEX util=% memutil=% used_mib= total_mib= sm_mhz= mem_mhz= power_mw= limit_mw= temp=
//       energy_mj= energy_step_mj= (added per energy reading) pcie_tx_kbs= pcie_rx_kbs= throttle=HEX
//       ecc= pids=1,2 nvl_tx_kib= nvl_rx_kib= (NVLink counters added per reading) lose_after=N
//       (GPU_IS_LOST after N readings) xid=N
//   nvlink_counters perlink   NVLink data counters per link only (the all-links scope unsupported)
// Built three times: complete; with -DFAKE_NVML_NO_ANCESTOR (a driver lacking a required symbol); and
// with -DFAKE_NVML_OLD: only the older symbol versions (memory v1, processes v1, ClocksThrottleReasons,
// no energy counter), as an old driver has them.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Metrics {
  unsigned util = 0, memutil = 0, sm_mhz = 0, mem_mhz = 0, power_mw = 0, limit_mw = 0, temp = 0;
  unsigned pcie_tx_kbs = 0, pcie_rx_kbs = 0;
  unsigned long long used_mib = 0, total_mib = 0, energy_mj = 0, energy_step_mj = 0, throttle = 0, ecc = 0;
  unsigned long long nvl_tx_step = 0, nvl_rx_step = 0, nvl_tx = 0, nvl_rx = 0;
  unsigned long long link_tx[18] = {}, link_rx[18] = {};
  int lose_after = -1, readings = 0, xid = 0;
  std::vector<unsigned> pids;
  bool on = false;
};

struct Gpu {
  Metrics m;
  std::string bus = "0000:00:00.0", name = "Fake GPU", uuid = "GPU-fake";
  int cc_major = 9, cc_minor = 0, numa = -1, gen = 5, width = 16;
  bool numa_supported = false;
  std::string cpus;
  std::vector<int> links;  // per link: peer GPU index, or -2 for an NVSwitch
};

struct State {
  std::string path;  // the script read; a test may switch scripts within one process
  int init_fail = 0;
  bool no_field_values = false;
  bool nvl_per_link = false;
  std::vector<Gpu> gpus;
  std::map<std::pair<int, int>, int> ancestor;
};

State& state() {
  static State s;
  const char* path = std::getenv("GPUDOCTOR_FAKE_NVML");
  if (!path || s.path == path) return s;
  s = State{};
  s.path = path;
  std::ifstream f(path);
  std::string line;
  std::vector<std::tuple<int, int, int>> direct;
  std::vector<std::pair<int, int>> sw;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    if (kind == "gpu") {
      int idx = 0;
      in >> idx;
      if (static_cast<int>(s.gpus.size()) <= idx) s.gpus.resize(idx + 1);
      Gpu& g = s.gpus[idx];
      std::string kv;
      while (in >> kv) {
        auto eq = kv.find('=');
        if (eq == std::string::npos) continue;
        std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
        for (auto& c : v)
          if (c == '_') c = ' ';
        if (k == "bus")
          g.bus = v;
        else if (k == "name")
          g.name = v;
        else if (k == "uuid")
          g.uuid = v;
        else if (k == "cc")
          std::sscanf(v.c_str(), "%d.%d", &g.cc_major, &g.cc_minor);
        else if (k == "numa") {
          g.numa_supported = v != "unsupported";
          g.numa = g.numa_supported ? std::atoi(v.c_str()) : -1;
        } else if (k == "cpus")
          g.cpus = v == "unsupported" ? "" : v;
        else if (k == "pcie")
          std::sscanf(v.c_str(), "%dx%d", &g.gen, &g.width);
      }
    } else if (kind == "nvlink") {
      int a, b, c;
      in >> a >> b >> c;
      direct.emplace_back(a, b, c);
    } else if (kind == "nvswitch") {
      int a, c;
      in >> a >> c;
      sw.emplace_back(a, c);
    } else if (kind == "ancestor") {
      int a, b, l;
      in >> a >> b >> l;
      s.ancestor[{a, b}] = s.ancestor[{b, a}] = l;
    } else if (kind == "fieldvalues") {
      std::string v;
      in >> v;
      s.no_field_values = v == "off";
    } else if (kind == "nvlink_counters") {
      std::string v;
      in >> v;
      s.nvl_per_link = v == "perlink";
    } else if (kind == "metrics") {
      int idx = 0;
      in >> idx;
      if (static_cast<int>(s.gpus.size()) <= idx) s.gpus.resize(idx + 1);
      Metrics& m = s.gpus[idx].m;
      m.on = true;
      std::string kv;
      while (in >> kv) {
        auto eq = kv.find('=');
        if (eq == std::string::npos) continue;
        std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
        unsigned long long x = std::strtoull(v.c_str(), nullptr, 0);
        if (k == "util")
          m.util = static_cast<unsigned>(x);
        else if (k == "memutil")
          m.memutil = static_cast<unsigned>(x);
        else if (k == "used_mib")
          m.used_mib = x;
        else if (k == "total_mib")
          m.total_mib = x;
        else if (k == "sm_mhz")
          m.sm_mhz = static_cast<unsigned>(x);
        else if (k == "mem_mhz")
          m.mem_mhz = static_cast<unsigned>(x);
        else if (k == "power_mw")
          m.power_mw = static_cast<unsigned>(x);
        else if (k == "limit_mw")
          m.limit_mw = static_cast<unsigned>(x);
        else if (k == "temp")
          m.temp = static_cast<unsigned>(x);
        else if (k == "energy_mj")
          m.energy_mj = x;
        else if (k == "energy_step_mj")
          m.energy_step_mj = x;
        else if (k == "pcie_tx_kbs")
          m.pcie_tx_kbs = static_cast<unsigned>(x);
        else if (k == "pcie_rx_kbs")
          m.pcie_rx_kbs = static_cast<unsigned>(x);
        else if (k == "throttle")
          m.throttle = x;
        else if (k == "ecc")
          m.ecc = x;
        else if (k == "nvl_tx_kib")
          m.nvl_tx_step = x;
        else if (k == "nvl_rx_kib")
          m.nvl_rx_step = x;
        else if (k == "lose_after")
          m.lose_after = static_cast<int>(x);
        else if (k == "xid")
          m.xid = static_cast<int>(x);
        else if (k == "pids") {
          std::istringstream ps(v);
          std::string p;
          while (std::getline(ps, p, ',')) m.pids.push_back(static_cast<unsigned>(std::atoi(p.c_str())));
        }
      }
    } else if (kind == "init_fail") {
      in >> s.init_fail;
    }
  }
  for (auto [a, b, c] : direct)
    for (int i = 0; i < c; ++i) {
      s.gpus[a].links.push_back(b);
      s.gpus[b].links.push_back(a);
    }
  for (auto [a, c] : sw)
    for (int i = 0; i < c; ++i) s.gpus[a].links.push_back(-2);
  return s;
}

struct PciInfo {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

Gpu* gpu(void* h) {
  auto i = reinterpret_cast<intptr_t>(h) - 1;
  auto& g = state().gpus;
  return i >= 0 && i < static_cast<intptr_t>(g.size()) ? &g[i] : nullptr;
}

void fillPci(const std::string& bus, PciInfo* p) {
  std::memset(p, 0, sizeof(*p));
  // NVML writes the domain with 8 digits, upper case.
  std::string up = bus;
  for (auto& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::snprintf(p->busId, sizeof(p->busId), "0000%s", up.c_str());
  std::snprintf(p->busIdLegacy, sizeof(p->busIdLegacy), "%s", up.c_str());
  std::sscanf(bus.c_str(), "%x:%x:%x", &p->domain, &p->bus, &p->device);
}

}  // namespace

extern "C" {
int nvmlInit_v2() { return state().init_fail; }
const char* nvmlErrorString(int r) {
  switch (r) {
    case 0:
      return "Success";
    case 3:
      return "Not Supported";
    case 9:
      return "Driver Not Loaded";
    default:
      return "Unknown Error";
  }
}
int nvmlDeviceGetCount_v2(unsigned int* n) {
  *n = static_cast<unsigned int>(state().gpus.size());
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void** h) {
  if (i >= state().gpus.size()) return 2;
  *h = reinterpret_cast<void*>(static_cast<intptr_t>(i) + 1);
  return 0;
}
int nvmlDeviceGetName(void* h, char* buf, unsigned int n) {
  std::snprintf(buf, n, "%s", gpu(h)->name.c_str());
  return 0;
}
int nvmlDeviceGetUUID(void* h, char* buf, unsigned int n) {
  std::snprintf(buf, n, "%s", gpu(h)->uuid.c_str());
  return 0;
}
int nvmlDeviceGetPciInfo_v3(void* h, PciInfo* p) {
  fillPci(gpu(h)->bus, p);
  return 0;
}
#ifndef FAKE_NVML_NO_ANCESTOR
int nvmlDeviceGetTopologyCommonAncestor(void* a, void* b, int* level) {
  auto ia = reinterpret_cast<intptr_t>(a) - 1, ib = reinterpret_cast<intptr_t>(b) - 1;
  auto it = state().ancestor.find({static_cast<int>(ia), static_cast<int>(ib)});
  *level = it == state().ancestor.end() ? 50 : it->second;
  return 0;
}
#endif
int nvmlDeviceGetNvLinkState(void* h, unsigned int link, int* active) {
  Gpu* g = gpu(h);
  if (link >= 18) return 2;
  if (link >= g->links.size()) return g->links.empty() ? 3 : (*active = 0, 0);
  *active = 1;
  return 0;
}
struct FieldValue {
  unsigned int fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType, nvmlReturn;
  union {
    double d;
    unsigned int ui;
    unsigned long long ull;
  } value;
};
// NVML_FI_DEV_NVLINK_GET_STATE (165) and the NVLink data counters (138/139); the script's "fieldvalues off" makes it
// unsupported.
int nvmlDeviceGetFieldValues(void* h, int count, FieldValue* v) {
  Gpu* g = gpu(h);
  for (int i = 0; i < count; ++i) {
    v[i].nvmlReturn = 3;
    if (v[i].fieldId == 165 && !state().no_field_values && v[i].scopeId < 18) {
      v[i].nvmlReturn = 0;
      v[i].value.ui = v[i].scopeId < g->links.size() ? 1 : 0;
    }
    if ((v[i].fieldId == 138 || v[i].fieldId == 139) && g->m.on && !state().no_field_values) {
      bool tx = v[i].fieldId == 138;
      unsigned long long step = tx ? g->m.nvl_tx_step : g->m.nvl_rx_step;
      if (!state().nvl_per_link) {
        auto& c = tx ? g->m.nvl_tx : g->m.nvl_rx;
        c += step;
        v[i].nvmlReturn = 0;
        v[i].value.ull = c;
      } else if (v[i].scopeId < g->links.size() && !g->links.empty()) {
        auto& c = (tx ? g->m.link_tx : g->m.link_rx)[v[i].scopeId];
        c += step / g->links.size();
        v[i].nvmlReturn = 0;
        v[i].value.ull = c;
      }
    }
  }
  return 0;
}
int nvmlDeviceGetNvLinkRemoteDeviceType(void* h, unsigned int link, int* type) {
  Gpu* g = gpu(h);
  if (link >= g->links.size()) return 2;
  *type = g->links[link] == -2 ? 2 : 0;
  return 0;
}
int nvmlDeviceGetNvLinkRemotePciInfo_v2(void* h, unsigned int link, PciInfo* p) {
  Gpu* g = gpu(h);
  if (link >= g->links.size()) return 2;
  fillPci(g->links[link] >= 0 ? state().gpus[g->links[link]].bus : std::string("0000:ff:00.0"), p);
  return 0;
}
int nvmlDeviceGetCpuAffinity(void* h, unsigned int n, unsigned long* mask) {
  Gpu* g = gpu(h);
  if (g->cpus.empty()) return 3;
  std::memset(mask, 0, n * sizeof(unsigned long));
  std::istringstream in(g->cpus);
  std::string part;
  while (std::getline(in, part, ',')) {
    int a = 0, b = 0;
    if (std::sscanf(part.c_str(), "%d-%d", &a, &b) < 2) b = a;
    for (int c = a; c <= b; ++c)
      if (c / 64 < static_cast<int>(n)) mask[c / 64] |= 1ul << (c % 64);
  }
  return 0;
}
int nvmlDeviceGetNumaNodeId(void* h, unsigned int* node) {
  Gpu* g = gpu(h);
  if (!g->numa_supported) return 3;
  *node = static_cast<unsigned int>(g->numa);
  return 0;
}
int nvmlDeviceGetCudaComputeCapability(void* h, int* major, int* minor) {
  *major = gpu(h)->cc_major;
  *minor = gpu(h)->cc_minor;
  return 0;
}
int nvmlDeviceGetMaxPcieLinkGeneration(void* h, unsigned int* v) {
  *v = gpu(h)->gen;
  return 0;
}
int nvmlDeviceGetMaxPcieLinkWidth(void* h, unsigned int* v) {
  *v = gpu(h)->width;
  return 0;
}

// The monitor's entry points. A GPU without a "metrics" line answers NOT_SUPPORTED.
int nvmlDeviceGetUtilizationRates(void* h, unsigned* u) {
  Metrics& m = gpu(h)->m;
  if (!m.on) return 3;
  if (m.lose_after >= 0 && m.readings >= m.lose_after) return 15;  // GPU_IS_LOST
  ++m.readings;
  u[0] = m.util;
  u[1] = m.memutil;
  return 0;
}
#ifdef FAKE_NVML_OLD
int nvmlDeviceGetMemoryInfo(void* h, unsigned long long* v) {
  Metrics& m = gpu(h)->m;
  if (!m.on) return 3;
  v[0] = m.total_mib << 20;
  v[2] = m.used_mib << 20;
  v[1] = v[0] - v[2];
  return 0;
}
int nvmlDeviceGetCurrentClocksThrottleReasons(void* h, unsigned long long* r) {
  *r = gpu(h)->m.throttle;
  return gpu(h)->m.on ? 0 : 3;
}
struct ProcV1 {
  unsigned pid;
  unsigned long long mem;
};
int nvmlDeviceGetComputeRunningProcesses(void* h, unsigned* count, ProcV1* p) {
  Metrics& m = gpu(h)->m;
  if (m.pids.size() > *count) return 7;
  *count = static_cast<unsigned>(m.pids.size());
  for (size_t i = 0; i < m.pids.size(); ++i) p[i] = {m.pids[i], 1ull << 30};
  return 0;
}
#else
struct MemV2 {
  unsigned version;
  unsigned long long total, reserved, free, used;
};
int nvmlDeviceGetMemoryInfo_v2(void* h, MemV2* v) {
  Metrics& m = gpu(h)->m;
  if (!m.on) return 3;
  if (v->version != (static_cast<unsigned>(sizeof(MemV2)) | (2u << 24))) return 25;  // VERSION_MISMATCH
  v->total = m.total_mib << 20;
  v->used = m.used_mib << 20;
  v->reserved = 0;
  v->free = v->total - v->used;
  return 0;
}
int nvmlDeviceGetCurrentClocksEventReasons(void* h, unsigned long long* r) {
  *r = gpu(h)->m.throttle;
  return gpu(h)->m.on ? 0 : 3;
}
int nvmlDeviceGetTotalEnergyConsumption(void* h, unsigned long long* mj) {
  *mj = gpu(h)->m.energy_mj;
  gpu(h)->m.energy_mj += gpu(h)->m.energy_step_mj;
  return gpu(h)->m.on ? 0 : 3;
}
struct Proc {
  unsigned pid;
  unsigned long long mem;
  unsigned gi, ci;
};
int nvmlDeviceGetComputeRunningProcesses_v3(void* h, unsigned* count, Proc* p) {
  Metrics& m = gpu(h)->m;
  if (m.pids.size() > *count) return 7;
  *count = static_cast<unsigned>(m.pids.size());
  for (size_t i = 0; i < m.pids.size(); ++i) p[i] = {m.pids[i], 1ull << 30, 0, 0};
  return 0;
}
#endif
int nvmlDeviceGetClockInfo(void* h, int type, unsigned* v) {
  Metrics& m = gpu(h)->m;
  *v = type == 1 ? m.sm_mhz : m.mem_mhz;
  return m.on ? 0 : 3;
}
int nvmlDeviceGetPowerUsage(void* h, unsigned* v) {
  *v = gpu(h)->m.power_mw;
  return gpu(h)->m.on ? 0 : 3;
}
int nvmlDeviceGetEnforcedPowerLimit(void* h, unsigned* v) {
  *v = gpu(h)->m.limit_mw;
  return gpu(h)->m.on ? 0 : 3;
}
int nvmlDeviceGetTemperature(void* h, int, unsigned* v) {
  *v = gpu(h)->m.temp;
  return gpu(h)->m.on ? 0 : 3;
}
int nvmlDeviceGetPcieThroughput(void* h, int counter, unsigned* v) {
  *v = counter == 0 ? gpu(h)->m.pcie_tx_kbs : gpu(h)->m.pcie_rx_kbs;
  return gpu(h)->m.on ? 0 : 3;
}
int nvmlDeviceGetTotalEccErrors(void* h, int, int, unsigned long long* v) {
  *v = gpu(h)->m.ecc;
  return gpu(h)->m.on ? 0 : 3;
}
// XID events: each GPU's scripted count is delivered once, then the set times out.
struct EventData {
  void* device;
  unsigned long long type, data;
  unsigned gi, ci;
};
int nvmlEventSetCreate(void** set) {
  *set = reinterpret_cast<void*>(1);
  return 0;
}
int nvmlDeviceRegisterEvents(void*, unsigned long long, void*) { return 0; }
int nvmlEventSetWait_v2(void*, EventData* e, unsigned) {
  auto& gs = state().gpus;
  for (size_t i = 0; i < gs.size(); ++i)
    if (gs[i].m.xid > 0) {
      --gs[i].m.xid;
      *e = {reinterpret_cast<void*>(static_cast<intptr_t>(i) + 1), 0x8, 79, 0, 0};
      return 0;
    }
  return 10;  // TIMEOUT
}
int nvmlEventSetFree(void*) { return 0; }
}
