#!/usr/bin/env bash
# Installs the Debian packages gpudoctor builds with (skips what is already there).
# --test also installs what the tests use beyond the build: Chromium, for the HTML report test, and
# python3-jsonschema, for validating every verb's JSON against docs/schemas/.
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config zlib1g-dev libsimdjson-dev libfmt-dev libcli11-dev libcpp-httplib-dev
      nlohmann-json3-dev libtomlplusplus-dev libgtest-dev python3 libopenmpi-dev openmpi-bin)
[ "${1:-}" = "--test" ] && pkgs+=(chromium python3-jsonschema clang-format-14 clang-tidy-14)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
