// Fix `loader_workers_x4`: 4x the DataLoader's workers, loader_workers' alternative where a worker pool sets
// the step (where the 2x pool would still set it, this says how far more workers go before the GPU or the
// host takes over).
#include <string>

#include "diagnosis/fixes/loader_workers.h"
#include "diagnosis/fixes/registry.h"

namespace gpudoctor {
namespace {

inline constexpr double kLoaderWorkerAltFactor = 4;

class LoaderWorkersX4Fix : public Fix {
 public:
  std::string_view id() const override { return "loader_workers_x4"; }
  std::vector<std::string_view> answers() const override { return {}; }
  std::string_view category() const override { return "input"; }
  bool edit(const FixInputs& in, ReplayEdits& ed, std::string& basis) const override {
    return morePoolWorkers(in.run, kLoaderWorkerAltFactor, ed, basis);
  }
};

}  // namespace

const Fix& loaderWorkersX4Fix() {
  static const LoaderWorkersX4Fix fix;
  return fix;
}

}  // namespace gpudoctor
