#include "diagnosis/rules/registry.h"

namespace gpudoctor {

const std::vector<const Rule*>& ruleRegistry() {
#define GPUDOCTOR_LIST_RULE(name) &name##Rule(),
  static const std::vector<const Rule*> rules = {GPUDOCTOR_RULES(GPUDOCTOR_LIST_RULE)};
#undef GPUDOCTOR_LIST_RULE
  return rules;
}

std::vector<const ThresholdDecl*> ruleCoreThresholds() { return {&kMinGainShare, &kCriticalGainShare}; }

}  // namespace gpudoctor
