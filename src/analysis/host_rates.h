// Host rates over an interval from two counter readings, with iostat's and vmstat's arithmetic.
#pragma once
#include "model/host_counters.h"
#include "model/monitor_sample.h"

namespace gpudoctor {

// Rates between prev and cur (cur read later). Devices present in only one reading are skipped;
// a counter that went backwards (reset, device replaced) counts as zero for the interval.
HostMetrics hostRates(const HostCounters& prev, const HostCounters& cur);

}  // namespace gpudoctor
