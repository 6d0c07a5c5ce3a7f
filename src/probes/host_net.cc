#include "probes/host_net.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "probes/sys_files.h"

namespace gpudoctor {

namespace fs = std::filesystem;

namespace {
std::vector<std::string> listDir(const fs::path& p) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(p, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    out.push_back(it->path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

HostNet probeHostNet(const std::string& root) {
  HostNet h;
  fs::path net = fs::path(root.empty() ? "/" : root) / "sys/class/net";
  for (const auto& name : listDir(net)) {
    h.interfaces.push_back(name);
    std::string st = readSysLine(net / name / "operstate");
    if (st == "up" || st == "unknown") h.interfaces_up.push_back(name);
  }
  fs::path ibp = fs::path(root.empty() ? "/" : root) / "sys/class/infiniband";
  for (const auto& name : listDir(ibp)) {
    IbDevice d;
    d.name = name;
    for (const auto& port : listDir(ibp / name / "ports")) {
      IbPort p;
      p.port = std::atoi(port.c_str());
      std::string st = readSysLine(ibp / name / "ports" / port / "state");  // "4: ACTIVE"
      auto colon = st.find(':');
      p.state = colon == std::string::npos ? st : st.substr(colon + 1);
      while (!p.state.empty() && p.state.front() == ' ') p.state.erase(0, 1);
      p.link_layer = readSysLine(ibp / name / "ports" / port / "link_layer");
      d.ports.push_back(p);
    }
    h.ib.push_back(std::move(d));
  }
  return h;
}

void probeSettingFiles(HostNet& host, const std::vector<NcclSetting>& settings) {
  for (const auto& s : settings) {
    if (s.name != "NCCL_TOPO_FILE" || host.file(s.value)) continue;
    HostNet::FileFacts f;
    f.path = s.value;
    std::error_code ec;
    f.exists = std::filesystem::exists(s.value, ec);
    f.regular = f.exists && std::filesystem::is_regular_file(s.value, ec);
    if (f.regular) {
      std::ifstream in(s.value);
      f.readable = static_cast<bool>(in);
      if (f.readable) {
        f.head.assign(4096, '\0');
        in.read(f.head.data(), static_cast<std::streamsize>(f.head.size()));
        f.head.resize(static_cast<size_t>(in.gcount()));
      }
    }
    host.files.push_back(std::move(f));
  }
}

}  // namespace gpudoctor
