#!/usr/bin/env bash
# Copies the header-only libraries the headless build needs into .deps/include, for machines with no
# package registry (the GPU machine). .deps/ is git-ignored; pass it along with the source.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deps/include
cp -r /usr/include/nlohmann .deps/include/
cp -r /usr/include/CLI .deps/include/
cp -r /usr/include/doctest .deps/include/
cp -r /usr/include/eigen3/Eigen .deps/include/  # the CPU kernels' reference (versions 0 and 7)
echo "packed into .deps/include: $(ls .deps/include | tr '\n' ' ')"
