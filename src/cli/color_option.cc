#include "cli/color_option.h"

#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace gpudoctor::cli {

CLI::Option* addColorOption(CLI::App* cmd, std::string* mode) {
  return cmd
      ->add_option("--color", *mode,
                   "Colour the report: auto (on a terminal, unless NO_COLOR is set or TERM=dumb), always, never")
      ->type_name("WHEN")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            return v == "auto" || v == "always" || v == "never" ? "" : v + ": use auto, always or never";
          },
          "WHEN", "color mode"));
}

bool colorForStdout(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') return false;
  const char* term = std::getenv("TERM");
  return term != nullptr && *term != '\0' && std::string_view(term) != "dumb" && ::isatty(STDOUT_FILENO) == 1;
}

}  // namespace gpudoctor::cli
