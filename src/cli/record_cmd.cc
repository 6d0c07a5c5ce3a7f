// `gpudoctor record [options] -- CMD ARGS...`: runs CMD with libgpudoctor-record.so injected into
// every CUDA process it starts (CUDA_INJECTION64_PATH is inherited by torchrun's and mpirun's
// children), then checks and summarizes the recordings. The recorder is gpu/recorder/, the
// reader sources/record/, the job is run by launch/processes.h; this file checks the options and
// reports.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/usage.h"
#include "common/atomic_file.h"
#include "launch/processes.h"
#include "launch/recorder_env.h"
#include "probes/cuda/cuda_runtime_probe.h"
#include "report/record_report.h"
#include "sources/record/recording_dir.h"

namespace gpudoctor::cli {

namespace {

namespace fs = std::filesystem;

struct RecordArgs {
  std::string out, signal, nvtx_step, lib, json, sample, steps;
  double delay_s = 0, duration_s = -1;
  bool detached = false, all_api = false, quiet = false, sync_events = false;
  std::vector<std::string> command;
};

std::string defaultOut() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "gpudoctor-record-%Y%m%d-%H%M%S", &tm);
  return buf;
}

// What the options come to once checked, and where the recorder is.
struct RecordPlan {
  int sig = 0;
  long long sample_on_ms = 0, sample_every_ms = 0, steps_first = 0, steps_last = 0;
  std::string lib, cupti, out_abs;
  int devices = 0;
};

// --sample ON/EVERY into milliseconds; 0 when fine, else the usage failure's exit code.
int parseSample(const RecordArgs& a, RecordPlan* p) {
  double on = 0, every = 0;
  char slash = 0, extra = 0;
  if (std::sscanf(a.sample.c_str(), "%lf %c %lf %c", &on, &slash, &every, &extra) != 3 || slash != '/')
    return fail("--sample " + a.sample + ": expected ON/EVERY in seconds, e.g. 2/20 (attached 2 s of every 20 s)",
                kUsage);
  if (!(on >= 0.1 && every > on && every <= 24 * 3600.0))
    return fail("--sample " + a.sample + ": expected ON of at least 0.1 s, shorter than EVERY, EVERY at most 86400 s",
                kUsage);
  if (p->sig != 0 || a.detached)
    return fail("--sample attaches and detaches the recorder on its own clock: not with --signal or --detached",
                kUsage);
  p->sample_on_ms = std::llround(on * 1000);
  p->sample_every_ms = std::llround(every * 1000);
  return 0;
}

// --steps N-M (or N); 0 when fine, else the usage failure's exit code.
int parseSteps(const RecordArgs& a, RecordPlan* p) {
  char dash = 0, extra = 0;
  int n = std::sscanf(a.steps.c_str(), "%lld %c %lld %c", &p->steps_first, &dash, &p->steps_last, &extra);
  if (n == 1 && a.steps.find_first_not_of("0123456789") == std::string::npos)
    p->steps_last = p->steps_first;
  else if (n != 3 || dash != '-' || a.steps.find_first_not_of("0123456789-") != std::string::npos)
    return fail("--steps " + a.steps + ": expected N-M (steps N to M, counted from 1), e.g. 20-29", kUsage);
  if (p->steps_first < 1 || p->steps_last < p->steps_first || p->steps_last > 100000000)
    return fail("--steps " + a.steps + ": expected 1 <= N <= M <= 100000000", kUsage);
  if (a.delay_s > 0 || a.duration_s > 0 || !a.sample.empty() || a.detached || p->sig != 0)
    return fail(
        "--steps attaches at step N's NVTX range and detaches after step M: not with --delay, --duration, "
        "--sample, --detached or --signal",
        kUsage);
  return 0;
}

// Usage first: every problem here is one line and exit 2, before anything runs. 0 when fine.
int checkOptions(const RecordArgs& a, RecordPlan* p) {
  if (a.command.empty())
    return fail("record needs a command after --, e.g. gpudoctor record -- python train.py", kUsage);
  if (!(a.delay_s >= 0 && a.delay_s <= 30 * 24 * 3600.0))
    return fail("--delay " + std::to_string(a.delay_s) + ": expected seconds from 0 to 2592000", kUsage);
  if (a.duration_s != -1 && !(a.duration_s > 0 && a.duration_s <= 30 * 24 * 3600.0))
    return fail("--duration " + std::to_string(a.duration_s) + ": expected seconds above 0 (up to 2592000)", kUsage);
  if (!a.signal.empty()) {
    if (a.signal == "USR1" || a.signal == "SIGUSR1")
      p->sig = SIGUSR1;
    else if (a.signal == "USR2" || a.signal == "SIGUSR2")
      p->sig = SIGUSR2;
    else
      return fail("--signal " + a.signal + ": expected USR1 or USR2", kUsage);
  }
  if (!a.sample.empty())
    if (int rc = parseSample(a, p); rc != 0) return rc;
  if (!a.steps.empty())
    if (int rc = parseSteps(a, p); rc != 0) return rc;
  if (a.detached && p->sig == 0 && a.delay_s == 0)
    return fail("--detached records nothing unless --signal or --delay attaches the recorder", kUsage);
  if (!a.nvtx_step.empty()) {
    try {
      std::regex re(a.nvtx_step, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return fail("--nvtx-step \"" + a.nvtx_step + "\": not a regular expression (" + e.what() + ")", kUsage);
    }
  }
  for (const char* v : {"CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH"}) {
    const char* x = std::getenv(v);
    if (x != nullptr && *x != '\0')
      return fail(std::string(v) + " is already set (" + x +
                      "): another tool (nsys, ncu) injects into this job, and CUPTI takes one subscriber; run record "
                      "without it",
                  kUsage);
  }
  return 0;
}

// The recorder library, the CUDA driver and CUPTI, and an empty --out (created, default
// gpudoctor-record-DATE-TIME). 0 when all are there, else the failure's exit code.
int prepareRecorder(RecordArgs& a, RecordPlan* p) {
  p->lib = a.lib;
  if (p->lib.empty()) {
    auto lib = findRecorderLibrary();
    if (!lib.ok()) return fail(lib.message(), kNoDevice);
    p->lib = lib.value();
  } else if (!fs::exists(p->lib)) {
    return fail("--lib " + p->lib + ": no such file", kBadInput);
  } else {
    p->lib = fs::canonical(p->lib).string();
  }
  auto driver = probeCudaDriver();
  if (!driver.ok()) return fail(driver.message(), kNoDevice);
  p->devices = driver.value().devices;
  auto cupti = findCupti(fs::path(p->lib).parent_path().string());
  if (!cupti.ok()) return fail(cupti.message(), kNoDevice);
  p->cupti = cupti.value();
  if (a.out.empty()) a.out = defaultOut();
  std::error_code ec;
  fs::create_directories(a.out, ec);
  if (ec) return fail("--out " + a.out + ": cannot create the directory: " + ec.message(), kBadInput);
  if (std::string n = recordingLeftover(a.out); !n.empty())
    return fail(a.out + " already holds recordings (" + n + "): give another --out or empty it", kBadInput);
  p->out_abs = fs::absolute(a.out).string();
  return 0;
}

// The job's environment: the caller's, plus the recorder's settings (launch/recorder_env.h).
std::vector<std::string> jobEnvironment(const RecordArgs& a, const RecordPlan& p) {
  RecorderSettings s;
  s.lib = p.lib;
  s.cupti = p.cupti;
  s.out_abs = p.out_abs;
  s.command = shellJoin(a.command);
  s.nvtx_step = a.nvtx_step;
  s.delay_s = a.delay_s;
  s.duration_s = a.duration_s;
  s.signal = p.sig;
  s.sample_on_ms = p.sample_on_ms;
  s.sample_every_ms = p.sample_every_ms;
  s.steps_first = p.steps_first;
  s.steps_last = p.steps_last;
  s.detached = a.detached;
  s.all_api = a.all_api;
  s.sync_events = a.sync_events;
  return recordedJobEnvironment(s);
}
// The report after the job: its leftovers checked and summarized, the JSON written. Returns the exit
// code: the job's own first (like time or nohup); else a broken recording is bad output (3).
int reportRecordings(const RecordArgs& a, const RecordPlan& p, int job_code, double secs) {
  RecordingDir l = listRecordingDir(p.out_abs);
  for (const auto& f : l.idle)
    std::fprintf(stderr, "gpudoctor record: %s: no recording: %s\n", fs::path(f).stem().c_str(),
                 recorderNote(f).c_str());
  int code = job_code;
  for (const auto& f : l.errors)
    code = fail(fs::path(f).filename().string() + ": " + recorderNote(f), code == 0 ? kBadInput : code);
  for (const auto& f : l.partial)
    code = fail(fs::path(f).filename().string() +
                    ": the process ended before its recorder finished (killed, or _exit): "
                    "left unfinished",
                code == 0 ? kBadInput : code);
  if (!a.quiet)
    std::fprintf(stderr, "gpudoctor record: job exited %d after %.1f s; %zu recording%s in %s/\n", job_code, secs,
                 l.done.size(), l.done.size() == 1 ? "" : "s", a.out.c_str());
  RecordRun run{shellJoin(a.command), p.out_abs, job_code, secs, {}, l.partial, l.errors, l.idle};
  for (const auto& f : l.done) {
    auto read = summarizeRecording(f);
    if (!read.ok()) {
      std::fprintf(stderr, "gpudoctor: error: %s\n", read.message().c_str());
      if (code == 0) code = kBadInput;
      continue;
    }
    if (!a.quiet) std::fputs(renderRecordingLine(read.value()).c_str(), stdout);
    run.recordings.push_back(std::move(read.value()));
  }
  if (l.done.empty() && l.errors.empty() && l.partial.empty()) {
    std::fprintf(stderr, l.idle.empty() ? "gpudoctor: error: no process of the job used CUDA: nothing recorded\n"
                         : p.steps_first > 0
                             ? "gpudoctor: error: nothing recorded in the --steps window (the line above says why)\n"
                             : "gpudoctor: error: no GPU work ran while the recorder was attached: nothing recorded\n");
    if (code == 0) code = kBadInput;
  } else if (!l.done.empty() && !a.quiet) {
    std::printf("next: gpudoctor analyze %s\n", a.out.c_str());
  }
  if (!a.json.empty())
    if (std::string e = writeDocument(a.json, renderRecordJson(run)); !e.empty()) return fail(e);
  return code;
}

int runRecord(RecordArgs a) {
  RecordPlan p;
  if (int rc = checkOptions(a, &p); rc != 0) return rc;
  if (int rc = prepareRecorder(a, &p); rc != 0) return rc;
  std::vector<std::string> env = jobEnvironment(a, p);
  if (!a.quiet)
    std::fprintf(stderr, "gpudoctor record: %s -> %s/ (%d GPU%s)\n", shellJoin(a.command).c_str(), a.out.c_str(),
                 p.devices, p.devices == 1 ? "" : "s");
  auto t0 = std::chrono::steady_clock::now();
  auto job = runForegroundJob(a.command, env);
  if (!job.ok()) return fail(job.message(), kBadInput);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return reportRecordings(a, p, job.value(), secs);
}

}  // namespace

std::function<int()> addRecord(CLI::App& app) {
  auto a = std::make_shared<RecordArgs>();
  CLI::App* r = app.add_subcommand(
      "record",
      "Record the GPU timeline of any CUDA job (PyTorch, JAX, C++) with CUPTI, no profiler code needed.\n"
      "Every CUDA process the command starts (torchrun's and mpirun's children too) writes one\n"
      "RANK-HOST-PID.gdrec file; `gpudoctor analyze DIR` then reads them like profiler traces.\n"
      "Steps come from NVTX ranges (--nvtx-step; default ProfilerStep#N) or, without any, from the\n"
      "repeating sequence of the main thread's kernel launches.\n\n"
      "Examples:\n"
      "  gpudoctor record -o rec -- python train.py --epochs 1\n"
      "  gpudoctor record -o rec --delay 60 --duration 20 -- torchrun --nproc-per-node 8 train.py\n"
      "  gpudoctor record -o rec --detached --signal USR2 -- python train.py   # pkill -USR2 toggles\n"
      "  gpudoctor record -o rec --sample 2/30 -- python train.py   # 2 s of every 30 s\n"
      "  gpudoctor record -o rec --steps 50-59 --nvtx-step '^train_step$' -- python train.py\n"
      "  gpudoctor analyze rec");
  r->add_option("-o,--out", a->out, "directory for the recordings (default gpudoctor-record-DATE-TIME)");
  r->add_option(
      "--steps", a->steps,
      "N-M: attached from the start of step N to the start of step M+1 (counted from 1), steps being the "
      "job's NVTX ranges that match --nvtx-step (torch.cuda.nvtx.range_push(\"train_step\") around each step, "
      "with --nvtx-step '^train_step$'); without such ranges use --delay/--duration");
  r->add_option("--delay", a->delay_s, "attach after this many seconds (default 0)");
  r->add_option("--duration", a->duration_s, "detach after this many seconds of recording");
  r->add_option("--signal", a->signal, "USR1 or USR2: each such signal to a recorded process toggles recording");
  r->add_option("--sample", a->sample,
                "ON/EVERY seconds: attached the first ON s of every EVERY s (after --delay), e.g. 2/30 records "
                "1/15 of the run and costs launch-bound jobs about 1/15 of full recording's overhead");
  r->add_flag("--detached", a->detached, "start detached (attach with --signal or --delay)");
  r->add_option("--nvtx-step", a->nvtx_step, "regular expression for the NVTX ranges that are training steps");
  r->add_flag("--sync-events", a->sync_events,
              "also record CUPTI's synchronization records (the event ids that pair cudaEventRecord with "
              "cudaStreamWaitEvent); measured +28 % step time on a PyTorch job where the default costs +1 %");
  r->add_flag("--all-api", a->all_api, "record every CUDA runtime and driver call (default: the timeline's calls)");
  r->add_option("--lib", a->lib, "path of libgpudoctor-record.so (default: beside the gpudoctor binary)");
  addJsonOption(r, &a->json, "the recordings' summary");
  addQuiet(r, &a->quiet);
  // Everything from the command on is the job's own (its flags are not record's).
  r->prefix_command();
  return [a, r] {
    // Words before `--` that are not record's: a mistyped option is refused, not handed to the job.
    const std::vector<std::string> rest = r->remaining();
    if (!rest.empty() && (rest[0][0] == '-' || !jobCommand().empty()))
      return fail(rest[0][0] == '-' ? unknownOption(*r, rest[0])
                                    : "\"" + rest[0] + "\" before --: the job's command goes after --",
                  kUsage);
    a->command = jobCommand().empty() ? rest : jobCommand();
    return runRecord(*a);
  };
}

}  // namespace gpudoctor::cli
