#!/usr/bin/env bash
# The players' velocities on the demo clip (config/demo/sim.conf: two pairs, 22 players)
# through the whole service path: stereod --offline plays the clip's first FRAMES frames
# through config/demo/stereod.conf.in (the real GStreamer sources, TurboJPEG, the stereo
# filter with the demo's settings, and flow=true: the optical flow in the rings),
# stereod-heightmap --json fuses the rings with config/demo/heightmap.conf (its velocities
# from the flow and the disparity), and bench/velocity-score.py scores the lines' "vx",
# "vy" and the tracks' Kalman velocities against players.csv.
#   bench/demo-velocity.sh [FRAMES]        (default 24; the clip has 250)
# Environment: DEMO_BUILD (build folder, default ./build), DEMO_REFINE (the demo's refine=,
# default false: what the demo picks on llvmpipe), DEMO_KEEP (a folder to keep the
# configurations, logs and lines in), DEMO_TIMEOUT (seconds for stereod, default 7200).
# The clip is rendered into [output] dir= of config/demo/sim.conf when it is not there,
# as tools/stereod-demo.sh does. Prints the scorer's table and its summary line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/offline-service.sh"
frames=${1:-24}
build=$(cd "${DEMO_BUILD:-$root/build}" && pwd)
refine=${DEMO_REFINE:-false}
timeout_s=${DEMO_TIMEOUT:-7200}
. "$root/tools/demo-clip.sh"
demo_clip demo-velocity "$build" "$root/config/demo/sim.conf"
[ "$frames" -ge 3 ] && [ "$frames" -le "$clip_frames" ] ||
  { echo "demo-velocity: FRAMES must be 3..$clip_frames" >&2; exit 64; }

if [ -n "${DEMO_KEEP:-}" ]; then work=$DEMO_KEEP; mkdir -p "$work"; else work=$(mktemp -d /tmp/demo-velocity.XXXXXX); fi
prefix="dv$$-"
hm_pid=
cleanup() {
  [ -n "$hm_pid" ] && kill -TERM "$hm_pid" 2>/dev/null && wait "$hm_pid" 2>/dev/null
  rm -f /dev/shm/stereod."$prefix"*
  [ -n "${DEMO_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

# the demo's configuration, offline: every frame of the first FRAMES, flow on, ring names
# of this run (the demo itself may run beside it)
sed -e "s|@CLIP@|$clip|g" -e "s|@RATE@|25/1|g" -e "s|@FPS@|25|g" -e "s|@REFINE@|$refine|g" \
  -e "s|%06d.jpg framerate=|%06d.jpg stop-index=$((frames - 1)) framerate=|" \
  -e "s|^\[pair \(.*\)\]|[pair $prefix\1]\nflow=true|" \
  "$root/config/demo/stereod.conf.in" > "$work/stereod.conf"
# offline on a slow GPU the pairs' frames of one instant are published seconds apart:
# the builder waits for every pair (wait_ms, stale_ms far beyond that) so that each line
# fuses both
sed -e "s|^\[pair \(.*\)\]|[pair $prefix\1]|" -e "s|^wait_ms=.*|wait_ms=10000|" \
  -e "s|^stale_ms=.*|stale_ms=600000|" "$root/config/demo/heightmap.conf" \
  > "$work/heightmap.conf"
"$build/daemon/stereod" --check-config --config "$work/stereod.conf" > /dev/null

status=0
offline_service demo-velocity "$build" "$work/stereod.conf" "$work/heightmap.conf" "$work" \
  "$timeout_s" || status=$?
[ "$status" -eq 0 ] || exit "$status"
echo "# demo clip: 2 pairs, $frames frames, refine=$refine, flow=true; stereod: ${published:-?}"
/usr/bin/python3 "$root/bench/velocity-score.py" --clip "$clip" --lines "$work/lines.jsonl" \
  --played "$frames" --label "demo clip, frames 0-$((frames - 1))"
