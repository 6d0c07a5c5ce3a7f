// What gpudoctor knows about NCCL's environment variables: one data table (data/nccl_env.toml,
// compiled into the binary), so a new NCCL release is one table edit, not a code change.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "model/nccl.h"

namespace gpudoctor {

struct NcclVarInfo {
  std::string name;
  std::string type;      // bool int size enum string path iface_list hca_list algo proto level debug subsys
  std::string category;  // system tuning debug feature
  std::string desc;
  std::string default_value;
  NcclVersion since = 0, deprecated = 0, removed = 0;  // 0: not known / not applicable
  bool since_is_upper_bound = false;
  bool case_sensitive = false;  // NCCL compares the enum values with strcmp  // `since` is the oldest release seen
                                // reading it, not the first
  std::string replacement;
  std::optional<double> min, max, multiple_of;
  std::vector<std::string> values;  // enum values
};

class NcclVarTable {
 public:
  // The table compiled into the binary.
  static const NcclVarTable& builtin();
  // Parses a table in data/nccl_env.toml's format; errors name the variable and key.
  static Result<NcclVarTable> parse(std::string_view toml_text, const std::string& name);
  // The entry for a name, or nullptr.
  const NcclVarInfo* find(std::string_view name) const;
  // The closest known name (edit distance), or "" when nothing is close.
  std::string closest(std::string_view name) const;
  const std::vector<NcclVarInfo>& all() const { return vars_; }

 private:
  std::vector<NcclVarInfo> vars_;  // sorted by name
};

}  // namespace gpudoctor
