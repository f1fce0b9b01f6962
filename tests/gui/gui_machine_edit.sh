#!/usr/bin/env bash
# GUI scenario test (issue #32): the machine editor driven with clicks and typing. In the Memory
# view on `tiny`: "Edit a copy…" clicked; L1's ways typed as 3 — refused with the parser's
# message (16 lines do not divide into sets of 3 ways); in a second run L1's size typed as
# 2 KiB, "Save as… and use" clicked, a path typed into the browser and Save clicked: the machine is
# then the saved file, the Memory view simulates on it (L1 2 KiB), and the preset is unchanged.
# Last, a field the copy lacks (L1's sector) added with the "Add a field" row.
# usage: gui_machine_edit.sh TILESCOPE GUI_JSON_QUERY OUT_DIR   (exit 77 = skipped)
set -euo pipefail
with_xvfb="$(cd "$(dirname "$0")" && pwd)/with_xvfb.sh"  # a private display per run
app=$1 query=$2 out=$3
source "$(dirname "$0")/gui_player_lib.sh"  # fail, at, expect, run_fresh, gui_start
gui_start "$out"
preset="$(cd "$(dirname "$0")/../.." && pwd)/assets/machines/tiny.machine"
before=$(cksum <"$preset")

settled=$'wait-frames 2\nwait-jobs\nwait-frames 3'
start="machine tiny
view memory
$settled"
run_fresh probe "$start"
edit=$(at probe machine-edit.start)
run_fresh editing "$start
click $edit
wait-frames 3"
ways=$(at editing machine-edit.field.L1.ways)
size=$(at editing machine-edit.field.L1.size)
save=$(at editing machine-edit.save)
expect editing /machine_edit/valid true
expect editing /machine_edit/fields/L1.ways 2
run_fresh browser "$start
click $edit
wait-frames 3
files save-machine $out
wait-frames 3"
path=$(at browser files.path)
ok=$(at browser files.ok)

run_fresh refused "$start
click $edit
wait-frames 3
click $ways
key Ctrl+A
type 3
key Enter
wait-frames 3
screenshot OUT/machine-edit-refused.png
wait-frames 1"
expect refused /machine_edit/valid false
error=$("$query" "$out/refused.state.json" /machine_edit/error)
[[ $error == *"L1"* && $error == *"3 ways"* ]] || fail "the refusal says '$error'"
echo "refused: $error"

run_fresh saved "$start
click $edit
wait-frames 3
click $size
key Ctrl+A
type 2 KiB
key Enter
wait-frames 3
click $save
wait-frames 3
click $path
key Ctrl+A
type $out/tiny-2k.machine
wait-frames 2
click $ok
wait-frames 3
$settled
screenshot OUT/machine-edit-saved.png
wait-frames 1"
expect saved /machine "$out/tiny-2k.machine"
grep -q '^size = 2 KiB' "$out/tiny-2k.machine" || fail "the saved copy has no 'size = 2 KiB'"
"$query" "$out/saved.state.json" /machine_edit >/dev/null 2>&1 && fail "the editor stayed open"
expect saved /memory/machine tiny
[[ $(cksum <"$preset") == "$before" ]] || fail "the preset tiny.machine was written"
echo "saved $out/tiny-2k.machine and simulated on it; the preset is unchanged"

# A field the copy lacks, added by mouse: section L1 from the menu (its first missing key,
# sector, is offered), "32 B" typed, Add clicked.
add_section=$(at editing machine-edit.add.section)
add_value=$(at editing machine-edit.add.value)
add=$(at editing machine-edit.add.button)
run_fresh add-probe "$start
click $edit
wait-frames 3
click $add_section
wait-frames 3"
l1=$(at add-probe machine-edit.add.section.L1)
run_fresh added "$start
click $edit
wait-frames 3
click $add_section
wait-frames 3
click $l1
wait-frames 3
click $add_value
type 32 B
wait-frames 2
click $add
wait-frames 3
screenshot OUT/machine-edit-added.png
wait-frames 1"
expect added /machine_edit/fields/L1.sector "32 B"
expect added /machine_edit/valid true
echo "added L1 sector = 32 B by mouse; the copy parses"
echo "PASS"
