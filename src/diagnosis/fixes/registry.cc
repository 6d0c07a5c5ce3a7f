#include "diagnosis/fixes/registry.h"

namespace gpudoctor {

const std::vector<const Fix*>& fixRegistry() {
#define GPUDOCTOR_LIST_FIX(name) &name##Fix(),
  static const std::vector<const Fix*> fixes = {GPUDOCTOR_FIXES(GPUDOCTOR_LIST_FIX)};
#undef GPUDOCTOR_LIST_FIX
  return fixes;
}

const Fix* findFix(std::string_view id) {
  for (const Fix* f : fixRegistry())
    if (f->id() == id) return f;
  return nullptr;
}

const Fix* fixAnswering(std::string_view finding_id) {
  for (const Fix* f : fixRegistry())
    for (std::string_view a : f->answers())
      if (a == finding_id) return f;
  return nullptr;
}

}  // namespace gpudoctor
