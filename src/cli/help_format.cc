#include "cli/help_format.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>

#include "cli/exit_codes.h"

namespace gpudoctor::cli {

namespace {

size_t helpWidth() {
  winsize w{};
  if (::isatty(1) && ::ioctl(1, TIOCGWINSZ, &w) == 0 && w.ws_col >= 60) return std::min<size_t>(w.ws_col, 100);
  return 100;
}

// Words of text filled into lines of at most `width`, the first after `first` (already on the
// line, `first_len` columns), the others indented by `indent` spaces. Blank lines and lines that
// start with two spaces (examples, lists) are kept as they are.
std::string fill(const std::string& text, size_t first_len, size_t indent, size_t width) {
  std::string out, line;
  size_t col = first_len;
  std::istringstream paras(text);
  std::string para;
  bool first_para = true;
  while (std::getline(paras, para)) {
    if (!first_para) {
      out += "\n" + std::string(indent, ' ');
      col = indent;
    }
    first_para = false;
    if (para.rfind("  ", 0) == 0 || para.empty()) {
      out += para;
      col += para.size();
      continue;
    }
    std::istringstream words(para);
    std::string w;
    bool line_start = true;
    while (words >> w) {
      if (!line_start && col + 1 + w.size() > width) {
        out += "\n" + std::string(indent, ' ');
        col = indent;
        line_start = true;
      }
      if (!line_start) {
        out += ' ';
        ++col;
      }
      out += w;
      col += w.size();
      line_start = false;
    }
  }
  return out;
}

class WrappedFormatter : public CLI::Formatter {
 public:
  WrappedFormatter() { column_width(30); }

  std::string make_option_opts(const CLI::Option* opt) const override {
    if (opt->get_type_size() == 0) return "";  // a flag
    std::string t = opt->get_type_name();
    size_t cut = t.find_first_of(": ");
    if (cut != std::string::npos) t = t.substr(0, cut);  // "INT:INT in [1 - 100000]" -> "INT"
    if (t == "TEXT" && opt->get_name().find("path") == std::string::npos) t = "VALUE";
    bool many = opt->get_expected_max() > 1 && t.find("...") == std::string::npos;
    return t.empty() ? "" : " " + t + (many ? " ..." : "");
  }

  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string d = opt->get_description();
    const std::string def = opt->get_default_str();
    if (!def.empty() && opt->get_type_size() != 0 && d.find("default") == std::string::npos)
      d += " (default " + def + ")";
    return d;
  }

  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    std::string name = "  " + make_option_name(opt, is_positional) + make_option_opts(opt);
    const size_t col = get_column_width(), width = helpWidth();
    std::string out = name;
    if (name.size() + 2 > col) {
      out += "\n" + std::string(col, ' ');
    } else {
      out += std::string(col - name.size(), ' ');
    }
    return out + fill(make_option_desc(opt), col, col, width) + "\n";
  }

  std::string make_subcommand(const CLI::App* sub) const override {
    // The list shows a verb's first paragraph; its own --help has the rest.
    std::string d = sub->get_description();
    d = d.substr(0, d.find("\n\n"));
    std::replace(d.begin(), d.end(), '\n', ' ');
    std::string name = "  " + sub->get_display_name();
    const size_t col = get_column_width();
    std::string out =
        name + (name.size() + 2 > col ? "\n" + std::string(col, ' ') : std::string(col - name.size(), ' '));
    return out + fill(d, col, col, helpWidth()) + "\n";
  }

  std::string make_description(const CLI::App* app) const override {
    std::string d = app->get_description();
    if (d.empty()) return "";
    return fill(d, 0, 0, helpWidth()) + "\n";
  }

  std::string make_footer(const CLI::App* app) const override {
    std::string f = app->get_footer();
    if (f.empty()) return "";
    return "\n" + fill(f, 0, 0, helpWidth()) + "\n";
  }
};

// Examples, by verb path ("nccl env"). Each line at most 100 columns (a test checks every verb).
const std::map<std::string, const char*>& examples() {
  static const std::map<std::string, const char*> m = {
      {"analyze",
       "Examples:\n"
       "  gpudoctor analyze                                 # the bundled 2-rank example\n"
       "  gpudoctor analyze run/traces/ --steps 5-8 --json report.json\n"
       "  gpudoctor analyze run/ --summary-out run.gdsum.gz # many ranks: keep the rank summaries\n"
       "  mpirun -np 8 gpudoctor analyze --mpi run/         # many files over MPI processes"},
      {"checklist",
       "Examples:\n"
       "  gpudoctor checklist run/traces/\n"
       "  gpudoctor checklist run/traces/ --strict          # exit 1 when an item fails (a CI gate)"},
      {"nccl",
       "Examples:\n"
       "  gpudoctor nccl env --from job.sh\n"
       "  gpudoctor nccl log rank0.log rank1.log"},
      {"nccl env",
       "Examples:\n"
       "  gpudoctor nccl env                                # this process's NCCL_* environment\n"
       "  gpudoctor nccl env --from job.sh --from pod.yaml  # export lines, Kubernetes env lists\n"
       "  gpudoctor nccl env --nccl-version 2.21.5 --from block.sh   # a file: for the job's machines\n"
       "  gpudoctor nccl env --this-host --from job.sh      # ... also against this host's NICs and HCAs"},
      {"nccl log",
       "Examples:\n"
       "  gpudoctor nccl log rank0.log rank1.log            # NCCL_DEBUG=INFO output"},
      {"nccl bench",
       "Examples:\n"
       "  gpudoctor nccl bench -b 8 -e 8G -f 2 --collectives all   # nccl-tests' flags\n"
       "  torchrun --nproc-per-node 8 --no-python gpudoctor nccl bench -b 1M -e 1G"},
      {"nccl tune",
       "Examples:\n"
       "  gpudoctor nccl tune --out tuner.conf\n"
       "  gpudoctor nccl tune --algos ring,tree --json tune.json --out tuner.conf"},
      {"plan",
       "Examples:\n"
       "  gpudoctor plan --model llama2-7b --gpu h100 --gpus-per-node 8 --nodes 2 --global-batch 512\n"
       "  gpudoctor plan --config examples/plan/llama2_7b_2x8_h100.toml\n"
       "  gpudoctor plan --model gpt2 --layers 4 --hidden 512 --heads 8 --from-trace traces/   # vs a run"},
      {"topo",
       "Examples:\n"
       "  gpudoctor topo                                    # this node, as nvidia-smi topo -m prints it\n"
       "  gpudoctor topo --nccl-xml nccl_topo.xml           # then NCCL_TOPO_FILE=nccl_topo.xml\n"
       "  gpudoctor topo --topology testdata/topology/dgx1_v100.toml"},
      {"place",
       "Examples:\n"
       "  gpudoctor place --gpus 4                          # this node\n"
       "  gpudoctor place --nodes 16 --gpus-per-node 8 --topology cluster.toml   # a cluster"},
      {"pack",
       "Examples:\n"
       "  gpudoctor pack /data/train /data/shards --shard-size 256M --threads 4\n"
       "  gpudoctor pack SRC OUT --shuffle 17 --max-samples 10000 --skip-bad"},
      {"bench",
       "Examples:\n"
       "  gpudoctor bench io /data/scratch\n"
       "  gpudoctor bench gpu --quick"},
      {"bench io",
       "Examples:\n"
       "  gpudoctor bench io /data/scratch                  # about 15 s on a 2-core VM\n"
       "  gpudoctor bench io /data/scratch --from-trace traces/ --batch-size 32"},
      {"bench gpu",
       "Examples:\n"
       "  gpudoctor bench gpu --quick --only gemm,attention # a smoke run of two parts\n"
       "  gpudoctor bench gpu --datasheet H200 --ceilings-out h200.json   # no GPU needed"},
      {"monitor",
       "Examples:\n"
       "  gpudoctor monitor                                 # live view, every second, until Ctrl-C\n"
       "  gpudoctor monitor --once --json -                 # one sample for scripts\n"
       "  gpudoctor monitor --dmon --csv gpus.csv           # nvidia-smi dmon's rows, and the same as CSV\n"
       "  gpudoctor monitor -q --record run.jsonl --prometheus 9400"},
      {"monitor report",
       "Examples:\n"
       "  gpudoctor monitor report run.jsonl\n"
       "  gpudoctor monitor report run.jsonl --json summary.json"},
  };
  return m;
}

// The examples, then the exit-code table (cli/exit_codes.h), under every verb.
void addExamples(CLI::App* app, const std::string& path) {
  for (CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) {
    std::string p = path.empty() ? sub->get_name() : path + " " + sub->get_name();
    auto it = examples().find(p);
    // (compare and record carry their examples in their descriptions)
    std::string footer = it != examples().end() ? std::string(it->second) + "\n\n" : "";
    footer += kExitStatusHelp;
    if (p == "record") footer += " A job that fails gives its own exit status (128+N for signal N).";
    sub->footer(footer);
    addExamples(sub, p);
  }
}

}  // namespace

size_t reportColumns() {
  if (const char* env = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v > 0) return static_cast<size_t>(v);
  }
  winsize w{};
  if (::isatty(1) && ::ioctl(1, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  return 100;
}

void useWrappedHelp(CLI::App& app) { app.formatter(std::make_shared<WrappedFormatter>()); }

void addHelpExamples(CLI::App& app) {
  addExamples(&app, "");
  app.footer(kExitStatusHelp);
}

}  // namespace gpudoctor::cli
