#!/usr/bin/env bash
# Installs the Debian 12 packages tilescope needs (only those missing); uses sudo when not root.
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config git
          libimgui-dev libglfw3-dev libgl-dev libstb-dev libeigen3-dev doctest-dev
          nlohmann-json3-dev libcli11-dev libmd4c-dev libonnx-dev libprotobuf-dev fonts-inter fonts-jetbrains-mono fonts-dejavu-core
          xvfb xauth xdotool wmctrl openbox libgl1-mesa-dri clang libclang-rt-14-dev valgrind)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "tilescope: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
