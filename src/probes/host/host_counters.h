// Raw host counters from /proc and /sys, read the way iostat, vmstat and node_exporter read them:
// CPU jiffies per core, load, memory, per-disk I/O, network and InfiniBand port bytes, pressure
// stall totals, and the CPU time of given processes (those using the GPUs). Counters only; rates
// come from two samples (analysis/host_rates.h). The root is configurable so tests read fake trees
// (testdata/sysroot/...).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "model/host_counters.h"

namespace gpudoctor {

// Parsers of each file's text (exposed for tests); malformed lines are skipped, as the kernel's
// formats grow columns over versions.
std::vector<CpuTicks> parseProcStat(std::string_view text);
std::vector<DiskCounters> parseDiskstats(std::string_view text);
std::vector<NetCounters> parseNetDev(std::string_view text);
// "some avg10=... total=N" / "full ...": the two totals (µs), -1 when absent.
void parsePressure(std::string_view text, int64_t& some_us, int64_t& full_us);
// /proc/PID/stat: utime + stime, the command name between the outer parentheses.
bool parseProcPidStat(std::string_view text, ProcCpu& out);

// Reads ROOT/proc and ROOT/sys. /proc/stat is required (its absence is an error naming the path);
// everything else is optional and left empty when missing. `pids`: processes whose CPU to read.
Result<HostCounters> readHostCounters(const std::string& root, const std::vector<int>& pids = {});

}  // namespace gpudoctor
