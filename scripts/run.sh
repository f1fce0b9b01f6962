#!/usr/bin/env bash
# Quick start 1: install what is missing, build, and launch the app on the default example.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset default
cmake --build --preset default
exec build/default/app/gui/tilescope "$@"
