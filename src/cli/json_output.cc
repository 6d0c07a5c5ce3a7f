#include "cli/json_output.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/atomic_file.h"
#include "sources/summary/summary_file.h"

namespace gpudoctor::cli {
namespace {

// What the JSON document must never overwrite: a gzip file, or a trace (its first 4 KiB name
// traceEvents). `analyze --json TRACE` with no trace after it analyzes the bundled example and
// would replace TRACE with its document.
bool looksLikeInput(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::string head(4096, '\0');
  f.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(f.gcount()));
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b)
    return true;
  return head.find("\"traceEvents\"") != std::string::npos;
}

}  // namespace

CLI::Option* addJsonOption(CLI::App* cmd, std::string* target, const std::string& what) {
  return cmd->add_option("--json", *target, "Also write " + what + " as JSON to FILE ('-': the JSON alone, on stdout)")
      ->type_name("FILE|-")
      ->check([](const std::string& v) -> std::string {
        if (v.empty()) return "expected a file name, or - for stdout";
        std::error_code ec;
        if (v != "-" && std::filesystem::is_directory(v, ec)) return v + " is a directory: give a file name";
        if (v != "-" && std::filesystem::is_regular_file(v, ec) && looksLikeInput(v))
          return v +
                 " exists and is a trace or compressed file, not a document this option writes: give "
                 "another file name (a trace to read goes without --json)";
        return {};
      });
}

std::string writeDocument(const std::string& target, const std::string& json) {
  if (jsonOnly(target)) {
    std::fwrite(json.data(), 1, json.size(), stdout);
    return {};
  }
  Status s = writeFileAtomic(target, json);
  return s.ok() ? std::string() : s.message();
}

std::string writeOutputs(const std::string& target, const std::string& text, const std::string& json) {
  if (!target.empty())
    if (std::string err = writeDocument(target, json); !err.empty()) return err;
  if (!jsonOnly(target)) std::fwrite(text.data(), 1, text.size(), stdout);
  return {};
}

std::string writeSummary(const std::string& target, const std::vector<RankDigest>& digests) {
  return target == "-" ? writeDocument(target, summaryDocument(digests)) : writeSummaryFile(target, digests).message();
}

}  // namespace gpudoctor::cli
