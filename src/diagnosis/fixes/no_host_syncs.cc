// Fix `no_host_syncs`: no blocking waits inside the step (values logged every N steps, torch.where for masks).
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "diagnosis/fixes/registry.h"

namespace gpudoctor {
namespace {

class NoHostSyncsFix : public Fix {
 public:
  std::string_view id() const override { return "no_host_syncs"; }
  std::vector<std::string_view> answers() const override { return {"sync.blocking"}; }
  std::string_view category() const override { return "sync"; }
  bool edit(const FixInputs&, ReplayEdits& ed, std::string& basis) const override {
    ed.drop_sync_waits = true;
    basis =
        "synchronizing calls and synchronous copies inside the step stop waiting for the GPU (the step's "
        "closing synchronize stays)";
    return true;
  }
};

}  // namespace

const Fix& noHostSyncsFix() {
  static const NoHostSyncsFix fix;
  return fix;
}

}  // namespace gpudoctor
