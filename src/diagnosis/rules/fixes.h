// The code changes more than one rule advises (the headline's category and the rule that judges
// that category in detail), written once.
#pragma once
#include <string>
#include <vector>

namespace gpudoctor::fixes {

// Overlap and fewer gradient all-reduces (DDP).
inline std::vector<std::string> communication() {
  return {"# overlap gradient allreduce with backward (DDP does by default; keep buckets moderate):",
          "model = DDP(model, bucket_cap_mb=25, gradient_as_bucket_view=True)",
          "# fewer allreduces per optimizer step with gradient accumulation:",
          "with model.no_sync(): loss.backward()   # on all but the last micro-batch"};
}
// Loader workers with pinned memory and prefetching.
inline std::vector<std::string> input() {
  return {"DataLoader(ds, batch_size=B, num_workers=8, pin_memory=True,",
          "           persistent_workers=True, prefetch_factor=4)"};
}
// Values kept on the GPU instead of read back each step.
inline std::vector<std::string> sync() {
  return {"# keep values on the GPU; log every N steps instead of calling .item() each step:",
          "if step % 100 == 0: print(loss.item())"};
}

}  // namespace gpudoctor::fixes
