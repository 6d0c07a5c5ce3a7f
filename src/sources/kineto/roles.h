// Kineto's names for what events do, turned into the model's roles (EventRole): the step, loader
// and optimizer ranges PyTorch records, the blocking CUDA calls, event records and stream waits, NCCL
// kernels and graph launches.
// Each interned name is classified once; each event then costs one table lookup.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/trace.h"

namespace gpudoctor {

// Sets roles on the events of one trace whose events are complete and in start order, with the
// step numbers (RankTrace::step_marks) and each collective's sequence number in its process group.
// Apply it to every event in order, once: the reader does it in its last pass over the events.
class KinetoRoleAssigner {
 public:
  // Classifies every string of t's pool (the pool must be complete) and clears t.step_marks.
  explicit KinetoRoleAssigner(RankTrace& t);
  // Sets the roles of event i (called for i = 0, 1, ... in order).
  void apply(uint32_t i) {
    Event& e = t_.events[i];
    uint16_t f = flags_[e.name];
    uint16_t r = 0;
    if (e.kind == EventKind::kRuntimeCall || e.kind == EventKind::kDriverCall) {
      r = f & (kRoleSyncCall | kRoleGraphLaunch | kRoleEventRecord | kRoleStreamWait);
    } else if (e.kind == EventKind::kKernel) {
      if (e.collective != 0 || (f & kRoleCollective)) r = kRoleCollective;
    } else if (f & kHostRangeRoles) {
      if (!t_.tracks[e.track].gpu) r = f & kHostRangeRoles;  // not ranges projected on a GPU stream
    }
    e.roles = r;
    if (r & kRoleStep) t_.step_marks.push_back({i, stepNumberOf(e.name)});
    if (e.collective != 0 && e.collective <= t_.collectives.size()) {
      Collective& c = t_.collectives[e.collective - 1];
      c.seq = next_seq_[c.process_group]++;
    }
  }

 private:
  static constexpr uint16_t kHostRangeRoles = kRoleStep | kRoleDataLoading | kRoleLoaderInProcess | kRoleOptimizerStep;
  int64_t stepNumberOf(uint32_t name) const;

  RankTrace& t_;
  std::vector<uint16_t> flags_;                     // per string id: the roles its name can give
  std::unordered_map<uint32_t, int64_t> next_seq_;  // process group -> next sequence number
};

// Sets the roles of every event of t (events complete and in start order): for traces built in
// memory (tests); the reader applies KinetoRoleAssigner in its own last pass.
void assignKinetoRoles(RankTrace& t);

// The roles a Kineto event name can give, whatever its kind and track (apply() narrows them).
uint16_t kinetoNameRoles(std::string_view name);

// The process group of a collective, for joining ranks: the group's name where the trace has
// one (the same on every member rank), else its rank list.
inline uint32_t processGroupOf(const Collective& c) { return c.pg_name != 0 ? c.pg_name : c.pg_ranks; }

}  // namespace gpudoctor
