#!/usr/bin/env bash
# with_xvfb.sh [-s "SERVER ARGS"] COMMAND...: runs COMMAND on a private Xvfb display and returns
# its exit status. Xvfb picks a free display itself (-displayfd) and needs no auth file, so GUI
# tests started together never race for a display number or trip over xvfb-run's temporary
# directory (xvfb-run exits 5 when its clean-up fails, which a loaded machine made happen).
set -uo pipefail
server_args="-screen 0 1280x1024x24"
if [ "${1:-}" = "-s" ]; then
  server_args="$2"
  shift 2
fi
dir="$(mktemp -d)" || exit 1
xvfb_pid=""
cleanup() {
  if [ -n "$xvfb_pid" ]; then
    kill "$xvfb_pid" 2>/dev/null
    wait "$xvfb_pid" 2>/dev/null
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
# shellcheck disable=SC2086  # the server arguments are words
# The file exists before Xvfb starts: the redirection below happens in the background child, and
# the loop must not read a file that is not there yet (that race failed GUI tests now and then).
: > "$dir/display"
Xvfb -displayfd 3 -nolisten tcp $server_args 3>"$dir/display" 2>"$dir/xvfb.log" &
xvfb_pid=$!
# Xvfb writes "N\n" once it accepts connections.
for _ in $(seq 1 600); do
  [ "$(wc -l < "$dir/display")" -ge 1 ] && break
  if ! kill -0 "$xvfb_pid" 2>/dev/null; then
    echo "with_xvfb.sh: Xvfb did not start:" >&2
    cat "$dir/xvfb.log" >&2
    exit 1
  fi
  sleep 0.05
done
if [ "$(wc -l < "$dir/display")" -lt 1 ]; then
  echo "with_xvfb.sh: Xvfb reported no display within 30 s" >&2
  exit 1
fi
DISPLAY=":$(head -n 1 "$dir/display")" "$@"
