#include "model/nccl.h"

#include <fmt/format.h>

#include "common/exact_time.h"

namespace gpudoctor {

Result<NcclVersion> parseNcclVersion(const std::string& text) {
  auto bad = Error{"cannot read NCCL version \"" + text + "\" (expected e.g. 2.28.3)"};
  std::string t = text;
  if (auto dash = t.find('-'); dash != std::string::npos) t = t.substr(0, dash);
  if (t.find('.') == std::string::npos) {
    auto code = parseInt64(t);
    if (!code || *code < 20000 || *code > 999999) return bad;
    return static_cast<NcclVersion>(*code);
  }
  int parts[3] = {0, 0, 0};
  size_t p = 0;
  for (int i = 0; i < 3 && p <= t.size(); ++i) {
    size_t dot = t.find('.', p);
    std::string part = t.substr(p, dot == std::string::npos ? std::string::npos : dot - p);
    auto v = parseInt64(part);
    if (!v || *v < 0 || *v > 99) return bad;
    parts[i] = static_cast<int>(*v);
    if (dot == std::string::npos) {
      p = t.size() + 1;
      break;
    }
    p = dot + 1;
    if (i == 2) return bad;  // a fourth component
  }
  // Well-formed but not a release: say so rather than "cannot read".
  if (parts[0] != 2)
    return Error{"NCCL version \"" + text + "\" is not a release of NCCL 2 (they are numbered 2.X.Y, e.g. 2.28.3)"};
  return parts[0] * 10000 + parts[1] * 100 + parts[2];
}

std::string ncclVersionString(NcclVersion v) { return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100); }

bool HostNet::any_active_ib() const {
  for (const auto& d : ib)
    for (const auto& p : d.ports)
      if (p.state == "ACTIVE") return true;
  return false;
}

const HostNet::FileFacts* HostNet::file(const std::string& path) const {
  for (const auto& f : files)
    if (f.path == path) return &f;
  return nullptr;
}

}  // namespace gpudoctor
