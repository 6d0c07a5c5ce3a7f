// Turns measured input-pipeline figures and the rate the GPUs consume into advice: how many reader
// threads / DataLoader workers each way of reading needs, whether the storage can sustain the rate at
// all, and which fix buys most. Pure arithmetic on the figures, so it is tested with hand-made numbers.
#pragma once
#include <string>
#include <vector>

namespace gpudoctor {

// One way of reading the dataset, as measured: the rate of one worker and the best rate seen.
struct IoPath {
  std::string name;                     // e.g. "small files, cold cache"
  std::string fix;                      // what moving to this path takes (empty for the current one)
  double per_worker_samples_per_s = 0;  // measured with one thread
  double best_samples_per_s = 0;        // best aggregate measured
  int best_threads = 1;                 // threads at the best aggregate
  int max_threads_measured = 1;
};

// The rate the GPUs need and the work per sample.
struct IoTarget {
  double samples_per_s = 0;
  double sample_bytes = 0;
  double decompress_bytes_per_s = 0;  // > 0 when samples must be inflated (per core), else 0
  double compression_ratio = 1;       // inflated / stored bytes
  int cpus = 1;                       // cores the loader may use
};

// The verdict for one path.
struct IoPathAdvice {
  IoPath path;
  double per_worker_samples_per_s = 0;  // with decompression added where it applies
  int workers = 0;                      // workers needed for the target (ceil)
  bool sustainable = false;             // measured aggregate reaches the target with that many workers
  bool beyond_measured = false;         // needs more threads than measured; scaling looked linear, so maybe
  double headroom = 0;                  // best measured rate / target
  std::string verdict;                  // one line with the numbers
};

// All paths judged, the current one first, and the fixes ranked.
struct IoAdvice {
  IoTarget target;
  std::vector<IoPathAdvice> paths;
  std::vector<std::string> fixes;  // best first, each with its numbers
  std::string summary;             // one line: can the current setup feed the GPUs, and the best fix
};

// Judges `paths` (the first is how the data is read today) against `target`.
IoAdvice adviseIo(const std::vector<IoPath>& paths, const IoTarget& target);

}  // namespace gpudoctor
