// `gpudoctor monitor`: live GPU and host metrics judged against the guide's thresholds, on the
// terminal, as JSON, into a crash-safe recording, and as a Prometheus endpoint; `monitor report`
// summarizes a recording. Sampling runs on this thread; the HTTP server serves the latest
// rendering from its own threads, so a slow scraper never delays a sample.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "analysis/host_rates.h"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/usage.h"
#include "common/atomic_file.h"
#include "diagnosis/health.h"
#include "diagnosis/monitor_summary.h"
#include "probes/host/host_counters.h"
#include "probes/nvml/gpu_sampler.h"
#include "report/monitor_report.h"
#include "sources/monitor_record/monitor_record.h"

namespace gpudoctor::cli {
namespace {

std::atomic<bool> g_stop{false};
void onSignal(int) { g_stop = true; }

struct MonitorArgs {
  double interval_s = 1, duration_s = 0, sync_every_s = 10;
  bool once = false, no_gpu = false, quiet = false;
  std::string json;  // --json FILE|-
  std::string record, prometheus, thresholds, root, nvml_library;
  std::string report_file;
  std::string report_json;
};

// "9400", ":9400", "0.0.0.0:9400", "[::1]:9400" -> host, port. Loopback unless an address is given.
bool parseListen(const std::string& s, std::string& host, int& port) {
  host = "127.0.0.1";
  std::string p = s;
  size_t colon = s.rfind(':');
  if (colon != std::string::npos) {
    std::string h = s.substr(0, colon);
    if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
    if (!h.empty()) host = h;
    p = s.substr(colon + 1);
  }
  if (p.empty() || p.find_first_not_of("0123456789") != std::string::npos || p.size() > 5) return false;
  port = std::stoi(p);
  return port > 0 && port < 65536;
}

int runReport(const MonitorArgs& a, const Thresholds& t) {
  auto rec = readMonitorRecording(a.report_file);
  if (!rec.ok()) return fail(rec.error().message);
  MonitorSummary m = summarizeMonitor(rec.value().samples, t);
  m.torn_tail = rec.value().torn_tail;
  std::string json = a.report_json.empty() ? "" : renderMonitorSummaryJson(m);
  std::string text = jsonOnly(a.report_json) ? "" : renderMonitorSummary(m);
  if (std::string err = writeOutputs(a.report_json, text, json); !err.empty()) return fail(err, kBadInput);
  return 0;
}

// The options' usage checks (exit 2) and --prometheus's address; 0 when fine.
int checkMonitorUsage(const MonitorArgs& a, std::string& listen_host, int& listen_port) {
  if (!(a.interval_s >= 0.01 && a.interval_s <= 3600))
    return fail("--interval must be between 0.01 and 3600 seconds", kUsage);
  if (a.duration_s < 0) return fail("--duration must not be negative", kUsage);
  // -q leaves the view out: without an output the run would show nothing at all.
  if (a.quiet && !a.once && a.record.empty() && a.prometheus.empty() && a.json.empty())
    return fail("-q shows nothing without an output: add --record FILE, --prometheus PORT or --json FILE", kUsage);
  if (a.record == "-") return fail("--record - : the recording is a file; for samples on stdout use --json -", kUsage);
  if (!a.prometheus.empty() && !parseListen(a.prometheus, listen_host, listen_port))
    return fail("--prometheus: \"" + a.prometheus + "\" is not [ADDR:]PORT", kUsage);
  return 0;
}

// The GPU sampler, or none (--no-gpu, or no NVML: the run is host-only) with `status` saying why.
std::unique_ptr<GpuSampler> openGpus(const MonitorArgs& a, std::string& status) {
  if (a.no_gpu) {
    status = "not sampled (--no-gpu)";
    return nullptr;
  }
  auto s = GpuSampler::open(a.nvml_library);
  if (s.ok()) return std::move(s.value());
  status = "host-only: " + s.error().message;
  if (!a.quiet) std::fprintf(stderr, "gpudoctor monitor: %s\n", status.c_str());
  return nullptr;
}

int runMonitor(const MonitorArgs& a, const Thresholds& t) {
  std::string listen_host;
  int listen_port = 0;
  if (int rc = checkMonitorUsage(a, listen_host, listen_port); rc != 0) return rc;
  auto first = readHostCounters(a.root);
  if (!first.ok()) return fail(first.error().message);
  std::string gpu_status;
  std::unique_ptr<GpuSampler> gpus = openGpus(a, gpu_status);
  MonitorRecordWriter writer;
  if (!a.record.empty())
    if (Status st = writer.open(a.record, a.sync_every_s); !st.ok()) return fail(st.message());
  // The exporter: the sampling loop swaps in a new rendering; handlers only copy a shared_ptr.
  std::mutex mu;
  auto latest = std::make_shared<const std::string>("# gpudoctor monitor: first sample pending\n");
  httplib::Server server;
  std::thread server_thread;
  if (!a.prometheus.empty()) {
    // Without TCP_NODELAY a keep-alive scrape waits out the peer's delayed ACK (~40 ms per scrape).
    server.set_tcp_nodelay(true);
    // SO_REUSEADDR only: cpp-httplib's default also sets SO_REUSEPORT, which let a second exporter
    // bind the same port and split the scrapes between the two.
    server.set_socket_options([](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
      std::shared_ptr<const std::string> body;
      {
        std::lock_guard<std::mutex> lock(mu);
        body = latest;
      }
      res.set_content(*body, "text/plain; version=0.0.4; charset=utf-8");
    });
    server.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("gpudoctor monitor: metrics at /metrics\n", "text/plain");
    });
    if (!server.bind_to_port(listen_host.c_str(), listen_port))
      return fail(fmt::format("--prometheus: cannot listen on {}:{} (in use, or not an address of this host)",
                              listen_host, listen_port));
    server_thread = std::thread([&] { server.listen_after_bind(); });
    if (!a.quiet)
      std::fprintf(stderr, "gpudoctor monitor: Prometheus metrics at http://%s:%d/metrics\n", listen_host.c_str(),
                   listen_port);
  }
  signal(SIGINT, onSignal);
  signal(SIGTERM, onSignal);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const bool json_stdout = jsonOnly(a.json);
  bool tty = isatty(STDOUT_FILENO) && !json_stdout;
  // --json FILE while running: one line per sample (JSON Lines), flushed as each comes, so a
  // stopped monitor leaves whole lines; with --once the one document, written atomically.
  std::unique_ptr<FILE, int (*)(FILE*)> json_file(nullptr, std::fclose);
  if (!a.json.empty() && !json_stdout && !a.once) {
    json_file.reset(std::fopen(a.json.c_str(), "w"));
    if (!json_file) return fail("--json " + a.json + ": cannot write: " + std::strerror(errno));
  }
  HostCounters prev = first.value();
  std::set<int> pids;
  auto start = std::chrono::steady_clock::now();
  auto deadline = start;
  int rc = 0;
  while (!g_stop) {
    deadline += std::chrono::nanoseconds(static_cast<int64_t>(a.interval_s * 1e9));
    while (!g_stop && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          deadline - std::chrono::steady_clock::now(), std::chrono::milliseconds(100)));
    if (g_stop) break;
    MonitorSample s;
    s.hostname = host;
    s.gpu_status = gpu_status;
    if (gpus) s.gpus = gpus->sample();
    std::set<int> now_pids;
    for (const auto& g : s.gpus) now_pids.insert(g.pids.begin(), g.pids.end());
    auto cur = readHostCounters(a.root, std::vector<int>(pids.begin(), pids.end()));
    if (!cur.ok()) {
      rc = fail(cur.error().message);
      break;
    }
    s.host = hostRates(prev, cur.value());
    s.interval_s = static_cast<double>(cur.value().monotonic_ns - prev.monotonic_ns) / 1e9;
    s.unix_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    prev = cur.value();
    // Process CPU needs the pid in both readings: read the new ones from now on.
    pids = now_pids;
    auto flags = judgeHealth(s, t);
    if (!a.prometheus.empty()) {
      auto body = std::make_shared<const std::string>(renderPrometheus(s, flags));
      std::lock_guard<std::mutex> lock(mu);
      latest = body;
    }
    if (!a.record.empty())
      if (Status st = writer.append(s); !st.ok()) {
        rc = fail(st.message());
        break;
      }
    bool last = a.once || (a.duration_s > 0 && std::chrono::steady_clock::now() - start >=
                                                   std::chrono::nanoseconds(static_cast<int64_t>(a.duration_s * 1e9)));
    if (!a.json.empty() && (a.once || last || a.prometheus.empty())) {
      std::string out = renderMonitorJson(s, flags, !a.once);
      if (json_stdout) {
        std::fwrite(out.data(), 1, out.size(), stdout);
      } else if (a.once) {
        if (Status st = writeFileAtomic(a.json, out); !st.ok()) {
          rc = fail(st.message());
          break;
        }
      } else {
        std::fwrite(out.data(), 1, out.size(), json_file.get());
        std::fflush(json_file.get());
      }
    }
    if (!json_stdout && (!a.quiet || a.once)) {
      std::string out = renderMonitorView(s, flags);
      if (tty)
        out = "\x1b[H\x1b[2J" + out;
      else
        out += "\n";
      std::fwrite(out.data(), 1, out.size(), stdout);
    }
    if (std::string e = stdoutError(); !e.empty()) {  // a full disk or a closed pipe ends the run
      rc = fail(e);
      std::clearerr(stdout);
      break;
    }
    if (last) break;
  }
  writer.close();
  if (server_thread.joinable()) {
    server.stop();
    server_thread.join();
  }
  return rc;
}

}  // namespace

std::function<int()> addMonitor(CLI::App& app) {
  auto a = std::make_shared<MonitorArgs>();
  auto* cmd = app.add_subcommand(
      "monitor",
      "Live GPU (NVML) and host (/proc, /sys) metrics judged against the guide's health thresholds (GPU util > 90 %, "
      "GPU memory < 95 %, IO wait < 10 %, CPU < 80 %), each red flag with its likely reason. Records to a crash-safe "
      "file, serves Prometheus metrics. `gpudoctor monitor report FILE` summarizes a recording.");
  cmd->add_option("-i,--interval", a->interval_s, "Seconds between samples")->capture_default_str();
  cmd->add_option("--duration", a->duration_s, "Stop after this many seconds (0: until Ctrl-C)")
      ->capture_default_str();
  cmd->add_flag("--once", a->once, "One sample (over one interval), then exit");
  cmd->add_option("--json", a->json,
                  "Also write the samples as JSON to FILE ('-': instead of the view, on stdout): one line per sample "
                  "(JSON Lines); with --once one indented document")
      ->type_name("FILE|-");
  cmd->add_option("--record", a->record,
                  "Append every sample to FILE (one JSON line each; a kill loses at most the sample being written)");
  cmd->add_option("--sync-every", a->sync_every_s, "fdatasync the recording every S seconds (power-loss bound)")
      ->capture_default_str();
  cmd->add_option("--prometheus", a->prometheus, "Serve /metrics on [ADDR:]PORT (127.0.0.1 unless ADDR is given)");
  cmd->add_option("--thresholds", a->thresholds, "TOML file overriding the thresholds (as for analyze)");
  cmd->add_option("--root", a->root, "Read /proc and /sys under DIR (tests, containers)");
  cmd->add_option("--nvml-library", a->nvml_library, "libnvidia-ml.so.1 to use (default: the driver's)");
  cmd->add_flag("--no-gpu", a->no_gpu, "Host metrics only");
  addQuiet(cmd, &a->quiet);  // the view is left out: needs --record, --prometheus or --json
  auto* rep = cmd->add_subcommand(
      "report", "Summarize a recording: time below / above each threshold, the bottleneck over time, per GPU");
  rep->add_option("file", a->report_file, "Recording written by --record")->required();
  addJsonOption(rep, &a->report_json, "the summary");
  rep->add_option("--thresholds", a->thresholds, "TOML file overriding the thresholds");
  return [a, cmd, rep] {
    if (!cmd->parsed()) return -1;
    Thresholds t = Thresholds::defaults();
    if (!a->thresholds.empty()) {
      auto text = readWholeFile(a->thresholds);
      if (!text.ok()) return fail(text.error().message);
      if (Status st = t.loadTomlText(text.value(), a->thresholds); !st.ok()) return fail(st.message());
    }
    return rep->parsed() ? runReport(*a, t) : runMonitor(*a, t);
  };
}

}  // namespace gpudoctor::cli
