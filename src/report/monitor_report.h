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
