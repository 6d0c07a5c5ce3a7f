// `gpudoctor monitor`'s sampling loop: GPU (NVML) and host (/proc, /sys) samples judged against the
// thresholds, into the view, JSON, CSV, the recording and the Prometheus endpoint. Sampling runs on
// this thread; the HTTP server serves the latest rendering from its own threads, so a slow scraper
// never delays a sample.
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
#include "cli/monitor_args.h"
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
void onStopSignal(int) { g_stop = true; }

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

// The options' usage checks (exit 2) and --prometheus's address; 0 when fine.
int checkMonitorUsage(const MonitorArgs& a, std::string& listen_host, int& listen_port) {
  if (!(a.interval_s >= 0.01 && a.interval_s <= 3600))
    return fail("--interval must be between 0.01 and 3600 seconds", kUsage);
  if (a.duration_s < 0) return fail("--duration must not be negative", kUsage);
  // -q leaves the view out: without an output the run would show nothing at all.
  if (a.quiet && !a.once && a.record.empty() && a.prometheus.empty() && a.json.empty() && a.csv.empty())
    return fail("-q shows nothing without an output: add --record FILE, --prometheus PORT, --json FILE or --csv FILE",
                kUsage);
  if (std::string e = oneStdout({{"--json", a.json}, {"--csv", a.csv}}); !e.empty()) return fail(e, kUsage);
  if (a.dmon && (jsonOnly(a.json) || a.csv == "-" || a.quiet))
    return fail(
        std::string("--dmon is a view on stdout, and ") +
            (a.quiet ? "-q leaves the view out" : "stdout takes the " + std::string(a.csv == "-" ? "CSV" : "JSON")),
        kUsage);
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

// The per-sample outputs besides the recording and the exporter: --json, --csv and the view (the
// full screen, or --dmon's rows).
class SampleSinks {
 public:
  explicit SampleSinks(const MonitorArgs& a) : a_(a) {}

  // Opens the output files; "" or the error line. --json FILE while running: one line per sample
  // (JSON Lines), flushed as each comes, so a stopped monitor leaves whole lines; with --once the
  // one document, written atomically. --csv FILE: the header, then rows flushed per sample.
  std::string open() {
    if (!a_.json.empty() && !jsonOnly(a_.json) && !a_.once) {
      json_file_.reset(std::fopen(a_.json.c_str(), "w"));
      if (!json_file_) return "--json " + a_.json + ": cannot write: " + std::strerror(errno);
    }
    if (!a_.csv.empty()) {
      csv_file_.reset(a_.csv == "-" ? nullptr : std::fopen(a_.csv.c_str(), "w"));
      if (a_.csv != "-" && !csv_file_) return "--csv " + a_.csv + ": cannot write: " + std::strerror(errno);
      put(csv_file_ ? csv_file_.get() : stdout, renderMonitorCsvHeader());
    }
    if (showView() && a_.dmon) put(stdout, renderMonitorDmonHeader());
    return "";
  }

  // Writes one sample (the last one of the run: `last`); "" or the error line.
  std::string write(const MonitorSample& s, const std::vector<HealthFlag>& flags, bool last) {
    if (!a_.json.empty() && (a_.once || last || a_.prometheus.empty())) {
      std::string out = renderMonitorJson(s, flags, !a_.once);
      if (jsonOnly(a_.json))
        put(stdout, out);
      else if (!a_.once)
        put(json_file_.get(), out);
      else if (Status st = writeFileAtomic(a_.json, out); !st.ok())
        return st.message();
    }
    if (!a_.csv.empty()) put(csv_file_ ? csv_file_.get() : stdout, renderMonitorCsv(s));
    if (csv_file_ && std::ferror(csv_file_.get())) return "--csv " + a_.csv + ": a write failed";
    if (!showView()) return "";
    if (a_.dmon) {  // rows scroll: a red flag is said when it turns red, not on every row
      std::vector<HealthFlag> fresh;
      std::set<std::string> red;
      for (const auto& f : flags) {
        if (f.ok) continue;
        red.insert(f.subject + " " + f.check);
        if (!red_.count(f.subject + " " + f.check)) fresh.push_back(f);
      }
      red_ = std::move(red);
      put(stdout, renderMonitorDmon(s, fresh));
    } else {
      std::string out = renderMonitorView(s, flags);
      put(stdout, tty_ ? "\x1b[H\x1b[2J" + out : out + "\n");  // a terminal: one screen, redrawn
    }
    return "";
  }

 private:
  // The view goes to stdout unless a document does (--json -, --csv -) or -q leaves it out.
  bool showView() const { return !jsonOnly(a_.json) && a_.csv != "-" && (!a_.quiet || a_.once); }
  static void put(FILE* f, const std::string& s) {
    std::fwrite(s.data(), 1, s.size(), f);
    if (f != stdout) std::fflush(f);
  }

  const MonitorArgs& a_;
  bool tty_ = isatty(STDOUT_FILENO) != 0;
  std::set<std::string> red_;  // the dmon view's red flags of the last sample ("gpu0 clocks")
  std::unique_ptr<FILE, int (*)(FILE*)> json_file_{nullptr, std::fclose}, csv_file_{nullptr, std::fclose};
};

}  // namespace

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
  signal(SIGINT, onStopSignal);
  signal(SIGTERM, onStopSignal);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  SampleSinks sinks(a);
  if (std::string e = sinks.open(); !e.empty()) return fail(e);
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
    if (std::string e = sinks.write(s, flags, last); !e.empty()) {
      rc = fail(e);
      break;
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

}  // namespace gpudoctor::cli
