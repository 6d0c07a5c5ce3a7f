// gpudoctor: one binary, verbs users know the shape of. This file only dispatches.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "cli/commands.h"
#include "cli/help_format.h"

namespace gpudoctor::cli {
namespace {
std::vector<std::string> g_argv;
std::vector<std::string> g_job;
}
const std::vector<std::string>& commandLine() { return g_argv; }
const std::vector<std::string>& jobCommand() { return g_job; }
}  // namespace gpudoctor::cli

int main(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) gpudoctor::cli::g_argv.emplace_back(argv[i]);
  CLI::App app{
      "gpudoctor " GPUDOCTOR_VERSION
      ": find what limits a GPU training job and say, with numbers, what to change first.\n"
      "Run `gpudoctor analyze` with no argument to see a report on the bundled example trace."};
  gpudoctor::cli::useWrappedHelp(app);
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("gpudoctor ") + GPUDOCTOR_VERSION);
  auto analyze = gpudoctor::cli::addAnalyze(app);
  auto checklist = gpudoctor::cli::addChecklist(app);
  auto compare = gpudoctor::cli::addCompare(app);
  auto nccl = gpudoctor::cli::addNccl(app);
  auto plan = gpudoctor::cli::addPlan(app);
  auto topo = gpudoctor::cli::addTopo(app);
  auto place = gpudoctor::cli::addPlace(app);
  auto pack = gpudoctor::cli::addPack(app);
  auto bench = gpudoctor::cli::addBench(app);
  auto monitor = gpudoctor::cli::addMonitor(app);
  auto record = gpudoctor::cli::addRecord(app);
  gpudoctor::cli::addHelpExamples(app);
  // An unknown verb is named, with the verbs there are (CLI11 would say "A subcommand is required").
  const std::vector<CLI::App*> all = app.get_subcommands([](const CLI::App*) { return true; });
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(all.begin(), all.end(), [&](const CLI::App* s) { return s->check_name(argv[1]); })) {
    std::string verbs;
    for (const CLI::App* s : all) verbs += (verbs.empty() ? "" : ", ") + s->get_name();
    std::fprintf(stderr, "gpudoctor: error: unknown verb \"%s\" (verbs: %s; see gpudoctor --help)\n", argv[1], verbs.c_str());
    return 2;
  }
  // `record ... -- CMD ARGS`: the job's words are not parsed as gpudoctor's (CLI11 would give the
  // `--` to the top-level app); record takes them from jobCommand().
  if (argc > 2 && std::string_view(argv[1]) == "record") {
    for (int i = 2; i < argc; ++i) {
      if (std::string_view(argv[i]) != "--") continue;
      for (int j = i + 1; j < argc; ++j) gpudoctor::cli::g_job.emplace_back(argv[j]);
      argc = i;
      break;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Point to the help of the verb that was being parsed (its chain: "nccl env").
    std::string verb;
    for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
      sub = sub->get_subcommands().front();
      verb += " " + sub->get_name();
    }
    std::fprintf(stderr, "gpudoctor: error: %s (see gpudoctor%s --help)\n", e.what(), verb.c_str());
    return 2;
  }
  // The help's examples are checked by parsing them (src/cli/help_cli_test.cc): stop before running.
  if (std::getenv("GPUDOCTOR_PARSE_ONLY")) return 0;
  try {
    if (app.got_subcommand("analyze")) return analyze();
    if (app.got_subcommand("checklist")) return checklist();
    if (app.got_subcommand("compare")) return compare();
    if (app.got_subcommand("nccl")) return nccl();
    if (app.got_subcommand("plan")) return plan();
    if (app.got_subcommand("topo")) return topo();
    if (app.got_subcommand("place")) return place();
    if (app.got_subcommand("pack")) return pack();
    if (app.got_subcommand("bench")) return bench();
    if (app.got_subcommand("monitor")) return monitor();
    if (app.got_subcommand("record")) return record();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "gpudoctor: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpudoctor: error: %s\n", e.what());
    return 1;
  }
  return 2;
}
