// libFuzzer target: arbitrary text as an NCCL settings file (export lines, env lists, logs) through
// the reader and the judgement. Any crash, hang, leak or UB report is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "diagnosis/nccl_env_check.h"
#include "sources/nccl_env/settings_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudoctor;
  auto s = readNcclSettings(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.sh");
  if (!s.ok()) return 0;
  static const HostNet host = [] {
    HostNet h;
    h.interfaces = {"eth0", "ib0", "lo"};
    h.ib = {{"mlx5_0", {{1, "ACTIVE", "InfiniBand"}}}};
    return h;
  }();
  EnvCheckOptions o;
  o.version = size % 2 ? 22803 : 21903;
  o.host = &host;
  o.multi_node = size % 3 == 0;
  (void)checkNcclEnv(s.value(), NcclVarTable::builtin(), o);
  return 0;
}
