#!/usr/bin/env bash
# Rewrites the generated parts of lessons/README.md: the check and mutant counts from
# `tilescope-cli lesson check --mutate`, and the concept table from `tilescope-cli lesson concepts`
# (lessons/concepts.txt and each step marker's teaches=). The lesson suite fails while either
# differs (tests/lesson/test_mutate.cpp, tests/lesson/test_concepts.cpp).
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
# The concept table: the lines from its header row to the end of the table are replaced.
table=$(mktemp)
trap 'rm -f "$table"' EXIT
"$cli" lesson concepts --dir lessons >"$table"
awk -v table="$table" '
  /^\| concept \| source \|/ { while ((getline line < table) > 0) print line; skip = 1; next }
  skip && /^\|/ { next }
  { skip = 0; print }
' lessons/README.md >"$table.readme"
mv "$table.readme" lessons/README.md
echo "lessons/README.md: $mutants mutants of $checks checks, $checkpoints checkpoints, $predictions predictions; $(($(wc -l <"$table") - 2)) concepts"
