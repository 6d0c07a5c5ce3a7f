// `bench io`'s arithmetic before the advice: the rate a traced job's GPUs consume, and the ways of
// reading the dataset (today's and each fix) with their measured rates, for diagnosis/io_advice.
// Pure: the storage figures and the analysis come in, numbers go out.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/run_analysis.h"
#include "model/io_bench.h"

namespace gpudoctor {

// Samples per second the traced job consumes: per rank, batch samples per step over the step time
// without the GPU idling on the loader; summed over ranks (each rank's loader reads its share).
// 0 when no rank has a step time.
double consumedSamplesPerSecond(const RunAnalysis& run, int64_t batch);

// One way of reading, as measured (the fields of diagnosis' IoPath).
struct IoReadPath {
  std::string name;                     // "small files, cold cache (today)"
  std::string fix;                      // what moving to it takes; empty for today's
  double per_worker_samples_per_s = 0;  // at the fewest threads measured, per thread
  double best_samples_per_s = 0;
  int best_threads = 1;
  int max_threads_measured = 1;
};

// Today's way (current: "small-files" or "shards"; cache: "cold" or "warm") first, then every fix
// that is a step forward (packing into shards, a warm cache), each only where it was measured.
std::vector<IoReadPath> ioReadPaths(const StorageBenchResult& r, const std::string& current, const std::string& cache);

}  // namespace gpudoctor
