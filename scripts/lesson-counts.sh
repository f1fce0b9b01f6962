#!/usr/bin/env bash
# Rewrites the check and mutant counts in lessons/README.md from `tilescope-cli lesson check
# --mutate` (the lesson suite fails while they differ: tests/lesson/test_mutate.cpp).
# usage: scripts/lesson-counts.sh [path/to/tilescope-cli]   (default: build/default/app/cli/tilescope-cli)
set -euo pipefail
cd "$(dirname "$0")/.."
cli="${1:-build/default/app/cli/tilescope-cli}"
summary=$("$cli" lesson check --mutate | tail -1)
read -r mutants checks checkpoints predictions < <(sed -E \
  's/^([0-9]+) mutants of ([0-9]+) checks \(([0-9]+) checkpoints\) and ([0-9]+) predict blocks.*/\1 \2 \3 \4/' \
  <<<"$summary")
[[ "$predictions" =~ ^[0-9]+$ ]] || { echo "lesson-counts: cannot read '$summary'" >&2; exit 1; }
# The sentence spans two lines: "(0 of N" ends one, "mutants — of C checks, K checkpoints among
# them, and P predictions — survive today)" starts the next.
sed -i -E "s/\(0 of [0-9]+\$/(0 of $mutants/;
  s/^mutants — of [0-9]+ checks, [0-9]+ checkpoints among them, and [0-9]+ predictions — survive today\)/mutants — of $checks checks, $checkpoints checkpoints among them, and $predictions predictions — survive today)/" \
  lessons/README.md
echo "lessons/README.md: $mutants mutants of $checks checks, $checkpoints checkpoints, $predictions predictions"
