#include "report/text.h"

namespace gpudoctor {

std::string wrapText(const std::string& text, const std::string& indent, size_t width) {
  std::string out, line = indent;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(' ', i);
    if (j == std::string::npos) j = text.size();
    std::string word = text.substr(i, j - i);
    if (line.size() > indent.size() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = indent;
    }
    if (line.size() > indent.size()) line += " ";
    line += word;
    i = j + 1;
  }
  if (line.size() > indent.size()) out += line + "\n";
  return out;
}

}  // namespace gpudoctor
