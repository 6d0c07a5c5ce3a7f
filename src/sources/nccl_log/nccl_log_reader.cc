#include "sources/nccl_log/nccl_log_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gpudoctor {

namespace {

std::string_view trimValue(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '.')) s.remove_suffix(1);
  return s;
}

// Integer after `key` in `s` ("nRanks 2" with key "nRanks "), or -1.
int intAfter(std::string_view s, std::string_view key) {
  size_t p = s.find(key);
  if (p == std::string_view::npos) return -1;
  p += key.size();
  int v = 0;
  bool any = false;
  while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
    v = v * 10 + (s[p] - '0');
    if (v > 100000000) return -1;
    any = true;
    ++p;
  }
  return any ? v : -1;
}

std::string wordAfter(std::string_view s, std::string_view key) {
  size_t p = s.find(key);
  if (p == std::string_view::npos) return "";
  p += key.size();
  size_t e = s.find_first_of(" \t;,", p);
  return std::string(s.substr(p, e == std::string_view::npos ? std::string_view::npos : e - p));
}

class Parser {
 public:
  // NCCL's own lines read so far.
  auto ncclLines() const { return f_.nccl_lines; }
  void line(std::string_view raw) {
    ++f_.lines;
    size_t k = raw.find(" NCCL ");
    if (k == std::string_view::npos) return;
    std::string_view head = raw.substr(0, k);  // "host:pid:tid [dev]"
    std::string_view rest = raw.substr(k + 6);
    // NCCL's own lines carry a level after "NCCL": prose that mentions NCCL is not a log line.
    if (!rest.starts_with("INFO ") && !rest.starts_with("WARN ") && !rest.starts_with("TRACE ") &&
        !rest.starts_with("ABORT "))
      return;
    ++f_.nccl_lines;
    std::string host(head.substr(0, head.find(':')));
    if (rest.substr(0, 5) == "WARN ") {
      std::string w(trimValue(rest.substr(5)));
      if (std::find(f_.warnings.begin(), f_.warnings.end(), w) == f_.warnings.end() && f_.warnings.size() < 100)
        f_.warnings.push_back(w);
      return;
    }
    if (rest.substr(0, 5) != "INFO ") return;
    std::string_view m = trimValue(rest.substr(5));
    auto starts = [&](std::string_view p) { return m.substr(0, p.size()) == p; };
    auto has = [&](std::string_view p) { return m.find(p) != std::string_view::npos; };

    if (starts("NCCL version ")) {
      f_.versions.insert(std::string(trimValue(m.substr(13))));
    } else if (starts("Using network ")) {
      f_.networks.insert(std::string(trimValue(m.substr(14))));
    } else if (starts("NET/IB : No device found")) {
      f_.ib_no_device = true;
    } else if (starts("NET/IB : Using ") || starts("NET/IB: Using ")) {
      std::string_view devs = m.substr(m.find("Using ") + 6);
      devs = devs.substr(0, devs.find(';'));
      for (size_t p = 0; (p = devs.find(']', p)) != std::string_view::npos; ++p) {
        size_t e = devs.find_first_of(" [", p + 1);
        std::string d(devs.substr(p + 1, e == std::string_view::npos ? std::string_view::npos : e - p - 1));
        if (!d.empty()) f_.ib_devices.insert(d);
      }
    } else if (starts("NET/Socket : Using ")) {
      std::string_view devs = m.substr(19);
      for (size_t p = 0; (p = devs.find(']', p)) != std::string_view::npos; ++p) {
        size_t e = devs.find(':', p);
        f_.socket_devices.insert(std::string(devs.substr(p + 1, e == std::string_view::npos ? 0 : e - p - 1)));
      }
    } else if (has("/Plugin: ") || has("/Plugin : ")) {
      std::string kind(m.substr(0, m.find('/')));
      if (has("Could not find") || has("No plugin found"))
        f_.plugins.emplace(kind, "not found (built-in)");
      else if (has("Loaded") || has("loaded"))
        f_.plugins[kind] = std::string(trimValue(m.substr(m.find(':') + 1)));
    } else if (starts("Initialized NET plugin ")) {
      f_.plugins["NET"] = "built-in " + std::string(trimValue(m.substr(23)));
    } else if (starts("comm ") && has(" nRanks ")) {
      auto& c = comm(wordAfter(m, "comm "));
      c.nranks = intAfter(m, "nRanks ");
      c.nnodes = intAfter(m, "nNodes ");
      c.local_ranks = intAfter(m, "localRanks ");
      if (int r = intAfter(m, "rank "); r >= 0) c.ranks_seen.insert(r);
      c.hosts.insert(host);
      last_comm_ = &c;
    } else if (starts("ncclCommInitRank") && has("commId ")) {
      std::string ptr = wordAfter(m, "comm ");
      std::string id = wordAfter(m, "commId ");
      alias_[ptr] = id;
      auto& c = comm(ptr);
      if (int n = intAfter(m, "nranks "); n > 0) c.nranks = n;
      if (int r = intAfter(m, "rank "); r >= 0) c.ranks_seen.insert(r);
      c.hosts.insert(host);
      if (has("Init COMPLETE")) c.init_complete = true;
    } else if (starts("Init timings") && has(" total ")) {
      if (last_comm_) {
        double t = std::atof(std::string(m.substr(m.find(" total ") + 7)).c_str());
        last_comm_->init_seconds = std::max(last_comm_->init_seconds, t);
      }
    } else if (has(" coll channels,")) {
      NcclCommFacts* c = last_comm_;
      if (c) {
        c->coll_channels = std::atoi(std::string(m).c_str());
        if (size_t p = m.find(" nvls channels"); p != std::string_view::npos) {
          size_t b = m.rfind(", ", p);
          c->nvls_channels = std::atoi(std::string(m.substr(b + 2, p - b - 2)).c_str());
        }
        if (size_t p = m.find(" collnet channels"); p != std::string_view::npos) {
          size_t b = m.rfind(", ", p);
          c->collnet_channels = std::atoi(std::string(m.substr(b + 2, p - b - 2)).c_str());
        }
        if (size_t p = m.find(" p2p channels,"); p != std::string_view::npos) {
          size_t b = m.rfind(", ", p);
          c->p2p_channels = std::atoi(std::string(m.substr(b + 2, p - b - 2)).c_str());
        }
      }
    } else if ((starts("Channel ") || starts("Ring ")) && has(" via ")) {
      // "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM", "... via NET/IB/0/GDRDMA", "... via SHM/direct/direct"
      std::string t(trimValue(m.substr(m.find(" via ") + 5)));
      bool gdr = t.find("GDRDMA") != std::string::npos;
      std::string kind = t.substr(0, t.find('/'));
      if (kind == "NET") {
        size_t s2 = t.find('/', 4);
        kind = t.substr(0, s2);  // NET/IB or NET/Socket
        ++f_.net_connections;
        if (gdr) ++f_.gdr_connections;
      } else if (kind == "P2P") {
        size_t s2 = t.find('/', 4);
        kind = t.substr(0, s2);  // P2P/CUMEM, P2P/IPC, P2P/direct pointer
      }
      ++f_.transports[kind];
    } else if ((starts("Channel ") || starts("Ring ")) && has(" : ") && !has("->")) {
      if (f_.rings.size() < 64) f_.rings.emplace_back(trimValue(m.substr(m.find(" : ") + 3)));
    } else if (starts("Trees ")) {
      for (size_t p = 0; (p = m.find('[', p)) != std::string_view::npos; ++p) ++f_.trees;
    } else if (has(" set by environment to ")) {
      size_t p = m.find(" set by environment to ");
      f_.settings[std::string(m.substr(0, p))] = std::string(trimValue(m.substr(p + 23)));
    } else if (has("NVLS multicast support is available")) {
      f_.nvls_available = true;
    } else if (has("NVLS multicast support is not available")) {
      f_.nvls_unavailable = true;
    }
  }

  NcclLogFacts take() {
    // Merge comms known under both their pointer and their commId.
    std::map<std::string, NcclCommFacts> merged;
    for (auto& [key, c] : f_.comms) {
      std::string id = alias_.count(key) ? alias_[key] : key;
      auto& m = merged[id];
      m.id = id;
      m.nranks = std::max(m.nranks, c.nranks);
      m.nnodes = std::max(m.nnodes, c.nnodes);
      m.local_ranks = std::max(m.local_ranks, c.local_ranks);
      m.coll_channels = std::max(m.coll_channels, c.coll_channels);
      m.nvls_channels = std::max(m.nvls_channels, c.nvls_channels);
      m.p2p_channels = std::max(m.p2p_channels, c.p2p_channels);
      m.collnet_channels = std::max(m.collnet_channels, c.collnet_channels);
      m.ranks_seen.insert(c.ranks_seen.begin(), c.ranks_seen.end());
      m.hosts.insert(c.hosts.begin(), c.hosts.end());
      m.init_complete |= c.init_complete;
      m.init_seconds = std::max(m.init_seconds, c.init_seconds);
    }
    f_.comms = std::move(merged);
    return std::move(f_);
  }

 private:
  NcclCommFacts& comm(const std::string& ptr) {
    auto& c = f_.comms[ptr];
    if (c.id.empty()) c.id = ptr;
    return c;
  }

  NcclLogFacts f_;
  std::map<std::string, std::string> alias_;  // comm pointer -> commId
  NcclCommFacts* last_comm_ = nullptr;
};

}  // namespace

Result<NcclLogFacts> readNcclLogText(const std::string& text, const std::string& name) {
  Parser p;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) p.line(line);
  NcclLogFacts f = p.take();
  if (f.nccl_lines == 0) return Error{name + ": no NCCL lines (expected an NCCL_DEBUG=INFO log)"};
  return f;
}

Result<NcclLogFacts> readNcclLogs(const std::vector<std::string>& paths) {
  Parser p;
  for (const auto& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error{path + ": cannot open: " + std::strerror(errno)};
    std::string line;
    const auto before = p.ncclLines();
    while (std::getline(in, line)) {
      if (line.find('\0') != std::string::npos) return Error{path + ": binary data, not an NCCL log"};
      p.line(line);
    }
    if (in.bad()) return Error{path + ": read failed"};
    if (p.ncclLines() == before) return Error{path + ": no NCCL lines (expected an NCCL_DEBUG=INFO log)"};
  }
  return p.take();
}

}  // namespace gpudoctor
