#include "cli/bundled_example.h"

#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "common/atomic_file.h"

// The two traces, as the assembler includes them (GPUDOCTOR_EXAMPLE_RANK0/1: their paths, from CMake).
#define GPUDOCTOR_INCBIN(name, path)                                                                      \
  asm(".section .rodata\n.balign 16\n.global " #name "\n" #name ":\n.incbin \"" path "\"\n.global " #name \
      "_end\n" #name "_end:\n.previous\n")
GPUDOCTOR_INCBIN(gpudoctor_example_rank0, GPUDOCTOR_EXAMPLE_RANK0);
GPUDOCTOR_INCBIN(gpudoctor_example_rank1, GPUDOCTOR_EXAMPLE_RANK1);
extern "C" const char gpudoctor_example_rank0[], gpudoctor_example_rank0_end[];
extern "C" const char gpudoctor_example_rank1[], gpudoctor_example_rank1_end[];

namespace gpudoctor::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char* kName = "ddp_bf16_flash";

// Where the carried copy goes: the user's cache, else the temporary folder.
fs::path cacheDir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "gpudoctor/examples" / kName;
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache/gpudoctor/examples" / kName;
  return fs::temp_directory_path() / "gpudoctor-examples" / kName;
}

}  // namespace

Result<std::string> bundledExampleDir() {
  if (const char* env = std::getenv("GPUDOCTOR_EXAMPLES")) return std::string(env) + "/" + kName;
  std::error_code ec;
  auto exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (auto rel : {"../share/gpudoctor/examples", "../examples", "examples"}) {
      auto p = exe.parent_path() / rel / kName;
      if (fs::is_directory(p, ec)) return p.lexically_normal().string();
    }
  }
  // The carried copy, written where it is missing or differs in size (each file atomically).
  fs::path dir = cacheDir();
  fs::create_directories(dir, ec);
  if (ec) return Error{dir.string() + ": cannot create the folder for the bundled example: " + ec.message()};
  const std::pair<const char*, std::string_view> files[] = {
      {"bf16_flash_rank0.pt.trace.json.gz",
       {gpudoctor_example_rank0, static_cast<size_t>(gpudoctor_example_rank0_end - gpudoctor_example_rank0)}},
      {"bf16_flash_rank1.pt.trace.json.gz",
       {gpudoctor_example_rank1, static_cast<size_t>(gpudoctor_example_rank1_end - gpudoctor_example_rank1)}}};
  for (const auto& [name, bytes] : files) {
    fs::path p = dir / name;
    if (fs::file_size(p, ec) == bytes.size() && !ec) continue;
    if (Status s = writeFileAtomic(p.string(), std::string(bytes)); !s.ok()) return s.error();
  }
  return dir.string();
}

}  // namespace gpudoctor::cli
