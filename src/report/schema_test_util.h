// Tests of JSON documents only a GPU machine writes (bench gpu, nccl bench, nccl tune): the document
// rendered from a fabricated result is validated against docs/schemas/<doc>.schema.json by
// scripts/checks/check_json_schemas.py (python3-jsonschema), as the ctest json_schemas does for the verbs
// that run without a GPU. GPUDOCTOR_SCHEMA_SAMPLES=DIR also leaves the document there (for drafting
// a schema with check_json_schemas.py --draft).
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace gpudoctor::testing {

// Whether python3 with jsonschema is there (install_deps.sh --test installs python3-jsonschema).
inline bool schemaValidatorAvailable() { return std::system("python3 -c 'import jsonschema' >/dev/null 2>&1") == 0; }

// Returns "" when the document validates (or no validator is installed), else the validator's output.
inline std::string schemaProblems(const std::string& doc, const std::string& json) {
  namespace fs = std::filesystem;
  if (const char* keep = std::getenv("GPUDOCTOR_SCHEMA_SAMPLES"))
    std::ofstream(fs::path(keep) / (doc + ".json")) << json;
  fs::path f = fs::temp_directory_path() / ("gpudoctor_schema_" + doc + "_" + std::to_string(::getpid()) + ".json");
  std::ofstream(f) << json;
  std::string cmd = "python3 " + std::string(GPUDOCTOR_SOURCE_DIR) + "/scripts/checks/check_json_schemas.py - " +
                    std::string(GPUDOCTOR_SOURCE_DIR) + " - --files " + doc + "=" + f.string() + " 2>&1";
  std::string out;
  int status = -1;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    status = ::pclose(p);
  }
  fs::remove(f);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77) return {};  // no python3-jsonschema: the ctest says so
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? std::string() : out.empty() ? "validator did not run" : out;
}

}  // namespace gpudoctor::testing
