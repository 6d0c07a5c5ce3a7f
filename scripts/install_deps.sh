#!/usr/bin/env bash
# Installs the Debian packages gpudoctor builds with (skips what is already there).
# --test also installs what the tests use beyond the build: Chromium (the HTML report), python3-jsonschema
# (every verb's JSON against docs/schemas/), clang-format and clang-tidy (the guardrails) and tmux (the
# terminal report in a real terminal).
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config zlib1g-dev libsimdjson-dev libfmt-dev libcli11-dev libcpp-httplib-dev
      nlohmann-json3-dev libtomlplusplus-dev libgtest-dev python3 libopenmpi-dev openmpi-bin)
[ "${1:-}" = "--test" ] && pkgs+=(chromium python3-jsonschema clang-format-14 clang-tidy-14 tmux)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
