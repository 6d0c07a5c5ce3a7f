// The bundled example (examples/ddp_bf16_flash: a 2-rank DDP trace made on 2 x H200) that `analyze`
// reads when no trace is given. The binary carries the two traces, so a copy of it anywhere shows the
// example without the source tree.
#pragma once
#include <string>

#include "common/result.h"

namespace gpudoctor::cli {

// The folder of the example: $GPUDOCTOR_EXAMPLES/ddp_bf16_flash when set; an installed copy beside
// the binary (../share/gpudoctor/examples, ../examples, examples); else the copy the binary carries,
// written once to $XDG_CACHE_HOME (or ~/.cache, else the temporary folder)/gpudoctor/examples.
Result<std::string> bundledExampleDir();

}  // namespace gpudoctor::cli
