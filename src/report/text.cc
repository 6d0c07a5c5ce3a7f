#include "report/text.h"

#include <algorithm>

namespace gpudoctor {

namespace {
size_t g_text_width = 100;
}  // namespace

size_t textWidth() { return g_text_width; }
void setTextWidth(size_t columns) { g_text_width = std::clamp(columns, kMinTextWidth, kMaxTextWidth); }

std::string wrapLed(const std::string& lead, const std::string& text, const std::string& indent) {
  std::string o = wrapText(text, indent, textWidth());
  return o.empty() ? o : o.replace(0, indent.size(), lead);
}

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

std::string headingLines(const std::string& text) {
  std::string h = wrapText(text, "", textWidth());
  if (!h.empty()) h.pop_back();
  return h;
}

namespace {
bool isCommand(std::string_view body) {
  std::string_view first = body.substr(0, body.find(' '));
  for (std::string_view c : {"kubectl", "sbatch", "unset", "srun", "salloc", "torchrun", "mpirun", "numactl", "export",
                             "python", "deepspeed", "accelerate"})
    if (first == c) return true;
  if (first.find('=') != std::string_view::npos && first.find('=') > 0 && first[0] >= 'A' && first[0] <= 'Z')
    return true;
  // "Megatron: --tensor-model-parallel-size 1 ...": a label followed by flags.
  return first.size() > 1 && first.back() == ':' && body.find(" --") == first.size();
}
}  // namespace

std::string fitLines(const std::string& text, size_t width) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    bool has_nl = nl != std::string::npos;
    std::string line = text.substr(pos, (has_nl ? nl : text.size()) - pos);
    pos = has_nl ? nl + 1 : text.size();
    if (line.size() <= width) {
      out += line + (has_nl ? "\n" : "");
      continue;
    }
    size_t lead = line.find_first_not_of(' ');
    if (lead == std::string::npos) lead = 0;
    const std::string body = line.substr(lead);
    const bool cmd = isCommand(body);
    // Broken at the last space that fits, the spacing inside the line kept (tables stay aligned).
    const std::string next_indent(lead + (cmd ? 4 : 2), ' ');
    const size_t room = cmd ? width - 2 : width;  // a command line keeps two columns for " \\"
    std::string cur = line;
    size_t min_break = lead + 1;
    while (cur.size() > room) {
      size_t brk = cur.rfind(' ', room);
      if (brk == std::string::npos || brk < min_break) brk = cur.find(' ', room);  // one long word: after it
      if (brk == std::string::npos) break;
      std::string head = cur.substr(0, brk);
      while (!head.empty() && head.back() == ' ') head.pop_back();
      size_t rest = cur.find_first_not_of(' ', brk);
      if (rest == std::string::npos) {
        cur = head;
        break;
      }
      out += head + (cmd ? " \\" : "") + "\n";
      cur = next_indent + cur.substr(rest);
      min_break = next_indent.size() + 1;
    }
    out += cur + (has_nl ? "\n" : "");
  }
  return out;
}

std::string pasteBlock(const std::vector<std::string>& fixes, const std::string& indent, size_t width) {
  if (fixes.empty()) return "";
  const std::string in = indent + "    ";
  std::string o = indent + "fix:\n";
  for (const auto& f : fixes) o += isCommand(f) ? in + f + "\n" : wrapText(f, in + "# ", width);
  return o;
}

}  // namespace gpudoctor
