#include "sources/summary/digest_exchange.h"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>

#include "sources/summary/summary_file.h"

namespace gpudoctor {

std::string encodeDigestShare(const std::vector<RankDigest>& digests, uint64_t bytes) {
  std::string payload = "OK " + std::to_string(bytes) + "\n";
  for (const auto& d : digests) payload += summaryLine(d) + "\n";
  return payload;
}

std::string encodeDigestShareError(const std::string& message) { return "ERR\n" + message; }

Result<DigestShares> decodeDigestShares(const std::vector<std::string>& texts) {
  DigestShares out;
  for (size_t p = 0; p < texts.size(); ++p) {
    std::string_view text = texts[p];
    size_t nl = text.find('\n');
    std::string_view head = text.substr(0, nl);
    if (head == "ERR") return Error{fmt::format("MPI process {}: {}", p, text.substr(nl + 1))};
    out.bytes += std::strtoull(std::string(head.substr(3)).c_str(), nullptr, 10);
    size_t line = 0;
    for (size_t at = nl + 1; at < text.size();) {
      size_t e = text.find('\n', at);
      if (e == std::string_view::npos) e = text.size();
      auto d = parseSummaryLine(text.substr(at, e - at), fmt::format("MPI process {}: summary {}", p, ++line));
      if (!d.ok()) return d.error();
      out.digests.push_back(std::move(d.value()));
      at = e + 1;
    }
  }
  return out;
}

}  // namespace gpudoctor
