// The NCCL unique id (opaque bytes) from rank 0 to the other ranks over TCP, for jobs that torchrun,
// mpirun or srun started (no launcher of our own), and its hex form for the environment of the ranks
// this process starts itself. Plain sockets: tested over localhost without a GPU.
#pragma once
#include <chrono>
#include <span>
#include <string>

#include "common/launch_env.h"
#include "common/result.h"

namespace gpudoctor {

// Rank 0 serves `id` on l.id_port to the other l.world_size - 1 ranks; any other rank connects to
// l.master_addr:l.id_port (retrying) and reads it into `id`. Gives up after `timeout`, saying so.
Status exchangeId(const LaunchEnv& l, std::span<char> id,
                  std::chrono::milliseconds timeout = std::chrono::seconds(120));

// The bytes as lowercase hex, two digits each.
std::string hexBytes(std::span<const char> bytes);
// hexBytes' inverse into `bytes`; false unless `s` is exactly 2 * bytes.size() hex digits.
bool unhexBytes(const std::string& s, std::span<char> bytes);

}  // namespace gpudoctor
