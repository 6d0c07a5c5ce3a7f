#!/usr/bin/env bash
# Gathers what a GPU machine without our Debian packages needs to run this build into DIR (default
# .carry, git-ignored): the binary, the tuner plugin, the benchmark helpers and the shared libraries the
# binary links from Debian (found with ldd; the RPATH is $ORIGIN, so they are used from beside it).
#   scripts/device/pack_carry.sh [BUILD_DIR (build)] [DIR (.carry)]
set -euo pipefail
build=${1:-build}; dir=${2:-.carry}
mkdir -p "$dir"
for f in gpudoctor gpudoctor_gpu_tests libnccl-tuner-gpudoctor.so libgpudoctor-record.so libgpudoctor-mpi.so scrape_load nvml_cost; do
  [ -e "$build/$f" ] && cp "$build/$f" "$dir/"
done
strip --strip-debug "$dir/gpudoctor" "$dir/gpudoctor_gpu_tests" 2>/dev/null || true  # the carry limit is 64 MiB in all
# Debian libraries the GPU machine (Ubuntu 24.04) may lack; glibc, libstdc++, zlib and OpenSSL 3 it has.
ldd "$build/gpudoctor" | awk '/=>/ {print $3}' | grep -E 'simdjson|tomlplusplus|httplib|brotli' | xargs -r cp -L -t "$dir/"
ls -la "$dir"
