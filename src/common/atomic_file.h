// Whole-file I/O for small inputs and outputs. Writing so that no reader ever sees half of a file: a
// temporary name beside the target (unique per process), then a rename into place. Used for every
// report, topology and tuner file.
#pragma once
#include <string>

#include "common/result.h"

namespace gpudoctor {

// Writes text to path atomically; an error names the path and why, and leaves no temporary behind.
// A path that is a device or a pipe (/dev/null, /dev/stdout) is written in place, never replaced; a
// symlink's target is replaced, the link kept.
Status writeFileAtomic(const std::string& path, const std::string& text);

// Reads a whole (small) file; an error names the path and why ("PATH: cannot open: ...").
Result<std::string> readWholeFile(const std::string& path);

}  // namespace gpudoctor
