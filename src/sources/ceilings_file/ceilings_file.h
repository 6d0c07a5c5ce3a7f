// The ceilings file: the JSON `bench gpu --ceilings-out` writes and `analyze --ceilings` reads.
// {"format": "gpudoctor-ceilings", "version": 1, "device": ..., "source": ...,
//  "tflops": {"fp32": ..., "tf32": ..., "fp16": ..., "bf16": ..., "fp8": ...},
//  "bandwidth_gbps": {"hbm_copy", "hbm_read", "hbm_write", "h2d_pinned", "h2d_pageable", "d2h_pinned", "d2h_pageable",
//  "p2p"}}
#pragma once
#include <string>

#include "common/result.h"
#include "model/ceilings.h"

namespace gpudoctor {

// The JSON text of a ceilings file (figures that are 0 are left out).
std::string ceilingsToJson(const Ceilings& c);
// Parses a ceilings file's text; `origin` names it in errors. An unknown key, a wrong type or a
// negative figure is an error naming the key; so is a file with no TFLOP/s figure at all.
Result<Ceilings> parseCeilingsJson(const std::string& text, const std::string& origin);
// Reads and parses a ceilings file.
Result<Ceilings> loadCeilingsFile(const std::string& path);

}  // namespace gpudoctor
