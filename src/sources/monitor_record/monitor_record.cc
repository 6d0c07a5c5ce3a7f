#include "sources/monitor_record/monitor_record.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "sources/byte_stream.h"

namespace gpudoctor {
namespace {

using nlohmann::json;
constexpr const char* kHeader = R"({"format":"gpudoctor-monitor-record","version":1})";

// -1 ("not available") is written as null and read back as -1.
json num(double v) { return v < 0 ? json(nullptr) : json(v); }
double getNum(const json& j, const char* k) {
  auto it = j.find(k);
  return it == j.end() || it->is_null() ? -1.0 : it->get<double>();
}

}  // namespace

std::string encodeMonitorSample(const MonitorSample& s) {
  json j;
  j["t_ns"] = s.unix_ns;
  j["interval_s"] = s.interval_s;
  j["host"] = s.hostname;
  if (!s.gpu_status.empty()) j["gpu_status"] = s.gpu_status;
  const HostMetrics& h = s.host;
  json hj = {{"cpu", num(h.cpu_util)},
             {"iowait", num(h.iowait)},
             {"cores", h.core_util},
             {"load", {h.load1, h.load5, h.load15}},
             {"mem_total", h.memory_total_bytes},
             {"mem_available", h.memory_available_bytes},
             {"psi_cpu_some", num(h.psi_cpu_some)},
             {"psi_io_some", num(h.psi_io_some)},
             {"psi_io_full", num(h.psi_io_full)},
             {"psi_mem_some", num(h.psi_memory_some)},
             {"psi_mem_full", num(h.psi_memory_full)}};
  json disks = json::array();
  for (const auto& d : h.disks)
    disks.push_back({d.name, d.read_bytes_per_s, d.write_bytes_per_s, d.reads_per_s, d.writes_per_s, d.read_await_ms,
                     d.write_await_ms, d.util, d.queue});
  hj["disks"] = disks;
  json nets = json::array();
  for (const auto& n : h.nets) nets.push_back({n.name, n.infiniband, n.rx_bytes_per_s, n.tx_bytes_per_s});
  hj["nets"] = nets;
  json procs = json::array();
  for (const auto& p : h.procs) procs.push_back({p.pid, p.comm, p.cpu_cores});
  hj["procs"] = procs;
  j["h"] = hj;
  json gpus = json::array();
  for (const auto& g : s.gpus)
    gpus.push_back({{"i", g.index},
                    {"uuid", g.uuid},
                    {"name", g.name},
                    {"bus", g.pci_bus_id},
                    {"util", num(g.util_gpu)},
                    {"mem_util", num(g.util_memory)},
                    {"mem_used", g.memory_used_bytes},
                    {"mem_total", g.memory_total_bytes},
                    {"sm_mhz", num(g.sm_clock_mhz)},
                    {"mem_mhz", num(g.memory_clock_mhz)},
                    {"power_w", num(g.power_w)},
                    {"power_limit_w", num(g.power_limit_w)},
                    {"temp_c", num(g.temperature_c)},
                    {"energy_j", num(g.energy_j)},
                    {"pcie_rx", num(g.pcie_rx_bytes_per_s)},
                    {"pcie_tx", num(g.pcie_tx_bytes_per_s)},
                    {"nvl_rx", num(g.nvlink_rx_bytes_per_s)},
                    {"nvl_tx", num(g.nvlink_tx_bytes_per_s)},
                    {"throttle", g.throttle_reasons},
                    {"xid", g.xid_events},
                    {"ecc_dbe", g.ecc_uncorrected},
                    {"pids", g.pids},
                    {"lost", g.lost}});
  j["g"] = gpus;
  return j.dump();
}

Result<MonitorSample> decodeMonitorSample(std::string_view line) {
  json j = json::parse(line.begin(), line.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{"not JSON"};
  MonitorSample s;
  try {
    s.unix_ns = j.at("t_ns").get<int64_t>();
    s.interval_s = j.at("interval_s").get<double>();
    s.hostname = j.value("host", "");
    s.gpu_status = j.value("gpu_status", "");
    const json& hj = j.at("h");
    HostMetrics& h = s.host;
    h.cpu_util = getNum(hj, "cpu");
    h.iowait = getNum(hj, "iowait");
    h.core_util = hj.at("cores").get<std::vector<double>>();
    auto load = hj.at("load").get<std::vector<double>>();
    if (load.size() != 3) return Error{"\"load\" must have 3 values"};
    h.load1 = load[0], h.load5 = load[1], h.load15 = load[2];
    h.memory_total_bytes = hj.at("mem_total").get<uint64_t>();
    h.memory_available_bytes = hj.at("mem_available").get<uint64_t>();
    h.psi_cpu_some = getNum(hj, "psi_cpu_some");
    h.psi_io_some = getNum(hj, "psi_io_some");
    h.psi_io_full = getNum(hj, "psi_io_full");
    h.psi_memory_some = getNum(hj, "psi_mem_some");
    h.psi_memory_full = getNum(hj, "psi_mem_full");
    for (const auto& d : hj.at("disks"))
      h.disks.push_back({d.at(0).get<std::string>(), d.at(1).get<double>(), d.at(2).get<double>(),
                         d.at(3).get<double>(), d.at(4).get<double>(), d.at(5).get<double>(), d.at(6).get<double>(),
                         d.at(7).get<double>(), d.at(8).get<double>()});
    for (const auto& n : hj.at("nets"))
      h.nets.push_back({n.at(0).get<std::string>(), n.at(1).get<bool>(), n.at(2).get<double>(), n.at(3).get<double>()});
    for (const auto& p : hj.at("procs"))
      h.procs.push_back({p.at(0).get<int>(), p.at(1).get<std::string>(), p.at(2).get<double>()});
    for (const auto& gj : j.at("g")) {
      GpuMetrics g;
      g.index = gj.at("i").get<int>();
      g.uuid = gj.at("uuid").get<std::string>();
      g.name = gj.at("name").get<std::string>();
      g.pci_bus_id = gj.at("bus").get<std::string>();
      g.util_gpu = getNum(gj, "util");
      g.util_memory = getNum(gj, "mem_util");
      g.memory_used_bytes = gj.at("mem_used").get<uint64_t>();
      g.memory_total_bytes = gj.at("mem_total").get<uint64_t>();
      g.sm_clock_mhz = getNum(gj, "sm_mhz");
      g.memory_clock_mhz = getNum(gj, "mem_mhz");
      g.power_w = getNum(gj, "power_w");
      g.power_limit_w = getNum(gj, "power_limit_w");
      g.temperature_c = getNum(gj, "temp_c");
      g.energy_j = getNum(gj, "energy_j");
      g.pcie_rx_bytes_per_s = getNum(gj, "pcie_rx");
      g.pcie_tx_bytes_per_s = getNum(gj, "pcie_tx");
      g.nvlink_rx_bytes_per_s = getNum(gj, "nvl_rx");
      g.nvlink_tx_bytes_per_s = getNum(gj, "nvl_tx");
      g.throttle_reasons = gj.at("throttle").get<uint64_t>();
      g.xid_events = gj.at("xid").get<int64_t>();
      g.ecc_uncorrected = gj.at("ecc_dbe").get<int64_t>();
      g.pids = gj.at("pids").get<std::vector<int>>();
      g.lost = gj.value("lost", "");
      s.gpus.push_back(std::move(g));
    }
  } catch (const json::exception& e) {
    return Error{std::string("missing or wrong field: ") + e.what()};
  }
  return s;
}

Result<MonitorRecording> readMonitorRecording(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Error{path + ": a directory; give the recording file (written by monitor --record FILE)"};
  // Plain or gzip (a recording shipped compressed reads as it is).
  auto in = ByteStream::open(path);
  if (!in.ok()) return in.error();
  std::string text;
  char buf[1 << 16];
  for (;;) {
    auto n = in.value()->read(buf, sizeof buf);
    if (!n.ok()) return n.error();
    if (n.value() == 0) break;
    text.append(buf, n.value());
  }
  if (text.rfind(kHeader, 0) != 0) return Error{path + ": not a gpudoctor monitor recording (no header line)"};
  MonitorRecording r;
  size_t p = text.find('\n');
  if (p == std::string::npos) return Error{path + ": recording has no samples"};
  ++p;
  for (int lineno = 2; p < text.size(); ++lineno) {
    size_t q = text.find('\n', p);
    bool last = q == std::string::npos;
    std::string_view line(text.data() + p, (last ? text.size() : q) - p);
    if (last) {
      // No newline: the monitor died while writing this line; it is the interval a kill can cost.
      r.torn_tail = true;
      break;
    }
    auto s = decodeMonitorSample(line);
    if (!s.ok()) return Error{path + ":" + std::to_string(lineno) + ": corrupt sample: " + s.error().message};
    r.samples.push_back(std::move(s.value()));
    p = q + 1;
  }
  if (r.samples.empty()) return Error{path + ": recording has no complete sample"};
  return r;
}

MonitorRecordWriter::~MonitorRecordWriter() { close(); }

Status MonitorRecordWriter::open(const std::string& path, double sync_every_s) {
  close();
  path_ = path;
  sync_every_s_ = sync_every_s;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Error{path + ": cannot write: " + std::strerror(errno)};
  struct stat st {};
  fstat(fd, &st);
  if (st.st_size == 0) {
    std::string h = std::string(kHeader) + "\n";
    if (::write(fd, h.data(), h.size()) != static_cast<ssize_t>(h.size())) {
      int e = errno;
      ::close(fd);
      return Error{path + ": cannot write: " + std::strerror(e)};
    }
  } else {
    // Appending to an existing file: it must be a recording, ending on a complete line.
    std::ifstream in(path, std::ios::binary);
    std::string head(std::strlen(kHeader), '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    char lastc = 0;
    in.seekg(-1, std::ios::end);
    in.get(lastc);
    if (head != kHeader) {
      ::close(fd);
      return Error{path + ": exists and is not a gpudoctor monitor recording; not appending to it"};
    }
    if (lastc != '\n') {
      // A torn line from a killed monitor: cut it off so the next sample starts a clean line (that
      // sample was lost with the kill either way).
      std::string text((std::istreambuf_iterator<char>(in.seekg(0))), {});
      size_t keep = text.rfind('\n');
      if (keep == std::string::npos || ftruncate(fd, static_cast<off_t>(keep + 1)) != 0) {
        ::close(fd);
        return Error{path + ": cannot repair the torn last line"};
      }
    }
  }
  fd_ = fd;
  last_sync_ns_ = monotonicNs();
  return {};
}

Status MonitorRecordWriter::append(const MonitorSample& s) {
  if (fd_ < 0) return Error{"recording is not open"};
  std::string line = encodeMonitorSample(s) + "\n";
  ssize_t w = ::write(fd_, line.data(), line.size());
  if (w != static_cast<ssize_t>(line.size()))
    return Error{path_ + ": write failed: " + (w < 0 ? std::strerror(errno) : "short write")};
  int64_t now = monotonicNs();
  if (static_cast<double>(now - last_sync_ns_) / 1e9 >= sync_every_s_) {
    fdatasync(fd_);
    last_sync_ns_ = now;
  }
  return {};
}

void MonitorRecordWriter::close() {
  if (fd_ >= 0) {
    fdatasync(fd_);
    ::close(fd_);
    fd_ = -1;
  }
}

}  // namespace gpudoctor
