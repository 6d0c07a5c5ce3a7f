// libFuzzer target: arbitrary bytes as what the monitor and the tuner plugin read from outside:
// /proc and /sys files (stat, diskstats, net/dev, pressure, PID/stat), a recording line, a NCCL log
// (the nccl log reader), and the tuner plugin's configuration file, whose parser runs inside the
// user's training job and must never crash it. Any crash, hang, leak or UB report is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "diagnosis/nccl_log_check.h"
#include "probes/host/host_counters.h"
#include "sources/monitor_record/monitor_record.h"
#include "sources/nccl_log/nccl_log_reader.h"

// The plugin is a shared library of one file; its parser is compiled in here to be fuzzed directly.
#include "gpu/tuner_plugin/tuner_plugin.cc"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudoctor;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)parseProcStat(text);
  (void)parseDiskstats(text);
  (void)parseNetDev(text);
  int64_t a = 0, b = 0;
  parsePressure(text, a, b);
  ProcCpu p;
  (void)parseProcPidStat(text, p);
  (void)decodeMonitorSample(text);
  if (auto f = readNcclLogText(std::string(text), "fuzz.log"); f.ok()) (void)judgeNcclLog(f.value());
  static const std::string path = "/tmp/gpudoctor_fuzz_tuner_" + std::to_string(getpid()) + ".csv";
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
    std::vector<Rule> rules;
    std::string why;
    if (readConfig(path.c_str(), rules, why)) {
      Context c;
      c.rules = rules;
      float table[7][3] = {};
      int nch = 0;
      for (int coll = 0; coll < 5; ++coll)
        for (size_t bytes : {size_t{0}, size_t{1} << 20, ~size_t{0}})
          getCollInfo(&c, coll, bytes, 1, reinterpret_cast<float**>(table), 7, 3, 0, &nch);
    }
  }
  return 0;
}
