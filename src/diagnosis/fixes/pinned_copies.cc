// Fix `pinned_copies`: host-to-device copies from pinned memory, non-blocking: only the copies' waits go.
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "diagnosis/fixes/registry.h"

namespace gpudoctor {
namespace {

class PinnedCopiesFix : public Fix {
 public:
  std::string_view id() const override { return "pinned_copies"; }
  std::vector<std::string_view> answers() const override { return {"input.pageable_copies"}; }
  std::string_view category() const override { return "copies"; }
  bool edit(const FixInputs& in, ReplayEdits& ed, std::string& basis) const override {
    const Ceilings* c = in.ceilings;
    if (!c || c->h2d_pinned_gbps <= 0) return false;
    // A pageable copy's rate is the host's staging memcpy, not the link (traced at 5.5 GB/s where the
    // H200's ceiling says 7.4); pinned, the copy runs at the link's pinned rate: its bytes at that
    // rate (the ceilings' ratio only where a copy's bytes are unknown). A datasheet knows the link,
    // not the host's pageable rate (it gives one figure for both): a copy of unknown bytes keeps its
    // time there.
    const bool pageable_known = c->h2d_pageable_gbps > 0 && c->h2d_pageable_gbps < c->h2d_pinned_gbps;
    ed.pageable_htod_scale = pageable_known ? c->h2d_pageable_gbps / c->h2d_pinned_gbps : 1.0;
    ed.pageable_htod_gbps = c->h2d_pinned_gbps;
    ed.drop_copy_waits = true;  // the copies stop blocking the host; other syncs stay
    basis = fmt::format(
        "pageable host-to-device copies at the pinned rate of {} ({:.1f} GB/s: each copy's bytes at "
        "that rate) and non-blocking",
        c->device, c->h2d_pinned_gbps);
    return true;
  }
};

}  // namespace

const Fix& pinnedCopiesFix() {
  static const PinnedCopiesFix fix;
  return fix;
}

}  // namespace gpudoctor
