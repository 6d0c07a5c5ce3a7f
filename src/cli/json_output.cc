#include "cli/json_output.h"

#include <cstdio>
#include <filesystem>

#include "common/atomic_file.h"

namespace gpudoctor::cli {

CLI::Option* addJsonOption(CLI::App* cmd, std::string* target, const std::string& what) {
  return cmd
      ->add_option("--json", *target, "Also write " + what + " as JSON to FILE ('-': the JSON alone, on stdout)")
      ->type_name("FILE|-")
      ->check([](const std::string& v) -> std::string {
        if (v.empty()) return "expected a file name, or - for stdout";
        std::error_code ec;
        if (v != "-" && std::filesystem::is_directory(v, ec)) return v + " is a directory: give a file name";
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

}  // namespace gpudoctor::cli
