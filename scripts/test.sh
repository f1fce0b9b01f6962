#!/usr/bin/env bash
# Quick start 2: install what is missing, build, and run the whole test suite (ends with CTest's summary).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset default
cmake --build --preset default
ctest --preset default "$@"
