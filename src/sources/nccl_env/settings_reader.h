// NCCL settings as users carry them around: the process environment, shell files of export
// lines, Kubernetes env lists, Slurm --export lists, and the "set by environment" lines of an
// NCCL_DEBUG=INFO log. Every setting keeps where it came from (file:line) for messages.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "model/nccl.h"

namespace gpudoctor {

// Reads NCCL_* settings from text; the format is recognised per line (export/assignment lines,
// `- name:`/`value:` pairs, --export=A=1,B=2 lists, NCCL INFO "set by environment" lines). Lines
// without NCCL_ names are skipped. A malformed line that mentions NCCL_ is an Error naming it.
// A later setting of the same name replaces an earlier one, as in a shell.
Result<std::vector<NcclSetting>> readNcclSettings(std::string_view text, const std::string& name);

// Reads from a file ('-' for standard input).
Result<std::vector<NcclSetting>> readNcclSettingsFile(const std::string& path);

// The NCCL_* variables of this process's environment.
std::vector<NcclSetting> ncclSettingsFromEnvironment();

}  // namespace gpudoctor
