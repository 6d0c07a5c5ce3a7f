// Renderings of the live monitor: the terminal view (one screen, every red flag with its reason),
// the Prometheus exposition (text format 0.0.4), and the summary of a recording.
#pragma once
#include <string>
#include <vector>

#include "diagnosis/health.h"
#include "diagnosis/monitor_summary.h"
#include "model/monitor_sample.h"

namespace gpudoctor {

// One screen (<= 100 columns): per GPU and host figures, then the health flags.
std::string renderMonitorView(const MonitorSample& s, const std::vector<HealthFlag>& flags);
// nvidia-smi dmon's layout: a two-line "#" header (names, units), then one line per GPU per sample:
// time, gpu, pwr, gtemp, sm (GPU utilization), mem (memory-bandwidth utilization), fb (memory used,
// GiB) and fb%, pclk, mclk, PCIe and NVLink rx/tx (GB/s), xid; "-" where not read. Red flags follow
// as "#" lines, so a script that skips comments reads only rows.
std::string renderMonitorDmonHeader();
std::string renderMonitorDmon(const MonitorSample& s, const std::vector<HealthFlag>& flags);
// The same columns as CSV: a header line of names with their units, then one row per GPU per sample
// (time in ISO 8601 UTC; an empty field where not read).
std::string renderMonitorCsvHeader();
std::string renderMonitorCsv(const MonitorSample& s);
// The sample and its flags as one JSON object, every field named in base units (n/a: null; the
// recording's own compact encoding, sources/monitor_record, is for `monitor report`): indented for
// one sample (--once), else on one line per sample (JSON Lines, for a stream a script reads line by
// line).
std::string renderMonitorJson(const MonitorSample& s, const std::vector<HealthFlag>& flags, bool one_line = false);
// Prometheus text exposition 0.0.4: prefix gpudoctor_, base units, dcgm-exporter's GPU labels
// (gpu, UUID, pci_bus_id, device, modelName, Hostname).
std::string renderPrometheus(const MonitorSample& s, const std::vector<HealthFlag>& flags);
// A recording's summary as text, or as JSON.
std::string renderMonitorSummary(const MonitorSummary& m);
std::string renderMonitorSummaryJson(const MonitorSummary& m);

}  // namespace gpudoctor
