// A fake libnvidia-ml.so for tests: the NVML entry points topo uses, answering from a small script
// (GPUDOCTOR_FAKE_NVML=FILE) so discovery is tested without a GPU. Lines:
//   gpu INDEX bus=0000:18:00.0 name=NVIDIA_H200 (underscores are spaces) uuid=GPU-.. cc=9.0
//       numa=N|unsupported cpus=0-15|unsupported pcie=5x16
//   nvlink A B COUNT      direct GPU-GPU links      nvswitch A COUNT   links into an NVSwitch
//   ancestor A B LEVEL    nvmlGpuTopologyLevel_t (default 50, SYSTEM)   init_fail CODE
//   fieldvalues off       nvmlDeviceGetFieldValues answers NOT_SUPPORTED (older call used)
// Built twice: complete, and with -DFAKE_NVML_NO_ANCESTOR (a driver lacking a required symbol).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Gpu {
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
        if (k == "bus") g.bus = v;
        else if (k == "name") g.name = v;
        else if (k == "uuid") g.uuid = v;
        else if (k == "cc") std::sscanf(v.c_str(), "%d.%d", &g.cc_major, &g.cc_minor);
        else if (k == "numa") {
          g.numa_supported = v != "unsupported";
          g.numa = g.numa_supported ? std::atoi(v.c_str()) : -1;
        } else if (k == "cpus") g.cpus = v == "unsupported" ? "" : v;
        else if (k == "pcie") std::sscanf(v.c_str(), "%dx%d", &g.gen, &g.width);
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
int nvmlShutdown() { return 0; }
const char* nvmlErrorString(int r) {
  switch (r) {
    case 0: return "Success";
    case 3: return "Not Supported";
    case 9: return "Driver Not Loaded";
    default: return "Unknown Error";
  }
}
int nvmlSystemGetDriverVersion(char* buf, unsigned int n) {
  std::snprintf(buf, n, "999.99");
  return 0;
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
// Only NVML_FI_DEV_NVLINK_GET_STATE (165); the script's "fieldvalues off" makes it unsupported.
int nvmlDeviceGetFieldValues(void* h, int count, FieldValue* v) {
  Gpu* g = gpu(h);
  for (int i = 0; i < count; ++i) {
    v[i].nvmlReturn = 3;
    if (v[i].fieldId == 165 && !state().no_field_values && v[i].scopeId < 18) {
      v[i].nvmlReturn = 0;
      v[i].value.ui = v[i].scopeId < g->links.size() ? 1 : 0;
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
int nvmlDeviceGetNvLinkVersion(void* h, unsigned int link, unsigned int* v) {
  *v = 4;
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
}
