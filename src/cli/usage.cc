#include "cli/usage.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/spelling.h"

namespace gpudoctor::cli {
namespace {

// A validator that reads the value as a number and asks `ok` of it; `what` completes "must be ...".
CLI::Validator number(bool (*ok)(double), const char* what, bool whole) {
  return CLI::Validator(
      [ok, what, whole](std::string& s) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(s.c_str(), &end);
        const bool read =
            end != s.c_str() && *end == '\0' && errno == 0 && (!whole || s.find_first_of(".eE") == std::string::npos);
        return read && ok(v) ? std::string() : std::string("must be ") + what + ", not " + s;
      },
      "", "");
}

}  // namespace

CLI::Validator positive() {
  return number([](double v) { return v > 0; }, "above 0", false);
}
CLI::Validator nonNegative() {
  return number([](double v) { return v >= 0; }, "0 or more", false);
}
CLI::Validator wholeNumber() {
  return number([](double v) { return v >= 0; }, "a whole number, 0 or more", true);
}

CLI::Option* addQuiet(CLI::App* cmd, bool* quiet) {
  return cmd->add_flag("-q,--quiet", *quiet,
                       "Only errors and the output asked for: no progress, notes, summaries or live view");
}

namespace {

// Short flags that a verb gave up so that each letter has one meaning across gpudoctor (and
// nccl-tests' meaning where nccl bench and tune take its flags): the verb, the flag, what to write.
struct RetiredShort {
  const char* verb;
  const char* flag;
  const char* message;
};
constexpr RetiredShort kRetiredShorts[] = {
    {"monitor", "-d", "-d is not monitor's: write --duration (-d is --dtype in nccl bench and tune, as in nccl-tests)"},
    {"tune", "-r", "-r is not nccl tune's: write --repeats (-r is the root rank in nccl-tests)"},
    {"tune", "-o", "-o is not nccl tune's: write --out (-o is the reduction operation in nccl-tests)"},
};

}  // namespace

std::string unknownOption(const CLI::App& app, const std::string& word) {
  const std::string name = word.substr(0, word.find('='));
  for (const auto& r : kRetiredShorts)
    if (app.get_name() == r.verb && name == r.flag) return r.message;
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options()) {
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    for (const auto& s : o->get_snames()) names.push_back("-" + s);
  }
  std::string best = nearestName(name, names);
  return "unknown option " + name + (best.empty() ? "" : " (did you mean " + best + "?)");
}

std::string oneStdout(const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::string dashes;
  int n = 0;
  for (const auto& [flag, value] : outputs)
    if (value == "-") dashes += (n++ ? " and " : "") + flag + " -";
  return n > 1 ? dashes + " would all write to stdout: give all but one a file name" : "";
}

std::string stdoutError() {
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return "";
  const int e = errno;
  return std::string("cannot write to stdout: ") +
         (e != 0 ? std::strerror(e) : "a write failed (a full disk, or a closed output?)");
}

}  // namespace gpudoctor::cli
