#!/usr/bin/env bash
# Installs the Debian 12 packages dcukern builds with (only those missing). Needs root or sudo.
set -euo pipefail
pkgs=(cmake make g++ hipcc libamdhip64-dev librocprim-dev rocm-device-libs doctest-dev libbenchmark-dev)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
echo "installing: ${missing[*]}"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
