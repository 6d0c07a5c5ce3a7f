// gpudoctor: one binary, verbs users know the shape of. This file only dispatches.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <sstream>
#include <string_view>

#include "cli/commands.h"
#include "cli/help_format.h"
#include "cli/usage.h"
#include "report/text.h"

namespace gpudoctor::cli {
namespace {
std::vector<std::string> g_argv;
std::vector<std::string> g_job;
}  // namespace
const std::vector<std::string>& commandLine() { return g_argv; }
const std::vector<std::string>& jobCommand() { return g_job; }

// "a, b, c": the verbs under `app`.
std::string verbsOf(const CLI::App* app) {
  std::string verbs;
  for (const CLI::App* s : app->get_subcommands([](const CLI::App*) { return true; }))
    verbs += (verbs.empty() ? "" : ", ") + s->get_name();
  return verbs;
}
}  // namespace gpudoctor::cli

int main(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) gpudoctor::cli::g_argv.emplace_back(argv[i]);
  CLI::App app{"gpudoctor " GPUDOCTOR_VERSION
               ": find what limits a GPU training job and say, with numbers, what to change first.\n"
               "Run `gpudoctor analyze` with no argument to see a report on the bundled example trace."};
  gpudoctor::cli::useWrappedHelp(app);
  gpudoctor::setTextWidth(gpudoctor::cli::reportColumns());  // clamped to 80..160
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
  // So is an unknown verb of a verb that has verbs and no arguments of its own (nccl, bench, monitor).
  using gpudoctor::cli::verbsOf;
  const std::vector<CLI::App*> all = app.get_subcommands([](const CLI::App*) { return true; });
  auto named = [](const std::vector<CLI::App*>& subs, const char* word) {
    auto it = std::find_if(subs.begin(), subs.end(), [&](const CLI::App* s) { return s->check_name(word); });
    return it == subs.end() ? nullptr : *it;
  };
  if (argc > 1 && argv[1][0] != '-' && !named(all, argv[1]))
    return gpudoctor::cli::fail(
        "unknown verb \"" + std::string(argv[1]) + "\" (verbs: " + verbsOf(&app) + "; see gpudoctor --help)",
        gpudoctor::cli::kUsage);
  if (CLI::App* verb = argc > 2 && argv[1][0] != '-' && argv[2][0] != '-' ? named(all, argv[1]) : nullptr;
      verb && !verb->get_subcommands([](const CLI::App*) { return true; }).empty() &&
      verb->get_options([](const CLI::Option* o) { return o->get_positional(); }).empty() &&
      !named(verb->get_subcommands([](const CLI::App*) { return true; }), argv[2]))
    return gpudoctor::cli::fail("unknown " + verb->get_name() + " verb \"" + argv[2] + "\" (" + verb->get_name() +
                                    " verbs: " + verbsOf(verb) + "; see gpudoctor " + verb->get_name() + " --help)",
                                gpudoctor::cli::kUsage);
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
  // Help and the version go to stdout too: a write that failed there is an error, not exit 0.
  auto printed = [&app](const CLI::Error& e) {
    const int rc = app.exit(e);
    if (std::string err = gpudoctor::cli::stdoutError(); !err.empty())
      return gpudoctor::cli::fail(err, gpudoctor::cli::kBadInput);
    return rc;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return printed(e);
  } catch (const CLI::CallForAllHelp& e) {
    return printed(e);
  } catch (const CLI::CallForVersion& e) {
    return printed(e);
  } catch (const CLI::ParseError& e) {
    // Point to the help of the verb that was being parsed (its chain: "nccl env").
    std::string verb, what = e.what();
    const CLI::App* sub = &app;
    while (!sub->get_subcommands().empty()) {
      sub = sub->get_subcommands().front();
      verb += " " + sub->get_name();
    }
    // "A subcommand is required": say which verbs there are. An unknown option: the nearest one.
    if (sub->get_require_subcommand_min() > 0 && what.find("subcommand") != std::string::npos)
      what = (verb.empty() ? "gpudoctor" : verb.substr(1)) + " needs a verb: " + verbsOf(sub);
    // CLI11 lists the words left over last first ("not expected: 3 -r"): name the first option.
    if (size_t at = what.find("not expected: "); at != std::string::npos) {
      std::istringstream words(what.substr(at + 14));
      std::string w, option;
      while (words >> w)
        if (w[0] == '-') option = w;
      if (!option.empty()) what = gpudoctor::cli::unknownOption(*sub, option);
    }
    return gpudoctor::cli::fail(what + " (see gpudoctor" + verb + " --help)", gpudoctor::cli::kUsage);
  }
  // The help's examples are checked by parsing them (src/cli/help_cli_test.cc): stop before running.
  if (std::getenv("GPUDOCTOR_PARSE_ONLY")) return 0;
  int rc = gpudoctor::cli::kUsage;
  try {
    if (app.got_subcommand("analyze"))
      rc = analyze();
    else if (app.got_subcommand("checklist"))
      rc = checklist();
    else if (app.got_subcommand("compare"))
      rc = compare();
    else if (app.got_subcommand("nccl"))
      rc = nccl();
    else if (app.got_subcommand("plan"))
      rc = plan();
    else if (app.got_subcommand("topo"))
      rc = topo();
    else if (app.got_subcommand("place"))
      rc = place();
    else if (app.got_subcommand("pack"))
      rc = pack();
    else if (app.got_subcommand("bench"))
      rc = bench();
    else if (app.got_subcommand("monitor"))
      rc = monitor();
    else if (app.got_subcommand("record"))
      rc = record();
  } catch (const std::bad_alloc&) {
    return gpudoctor::cli::fail("out of memory", gpudoctor::cli::kBadInput);
  } catch (const std::exception& e) {
    return gpudoctor::cli::fail(e.what(), gpudoctor::cli::kBadInput);
  }
  // Every verb's stdout, checked once it is done: a full disk is an error, not exit 0.
  if (rc != gpudoctor::cli::kBadInput)  // (a verb that failed with 3 has said why already)
    if (std::string e = gpudoctor::cli::stdoutError(); !e.empty())
      return gpudoctor::cli::fail(e, gpudoctor::cli::kBadInput);
  return rc;
}
