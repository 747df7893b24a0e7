#!/usr/bin/env bash
# The stereod demo on the embedded default: a synthetic stadium (config/demo/sim.conf: two
# camera pairs, 22 players) rendered by stereod-sim, played in real time through the real
# service path (GStreamer, TurboJPEG, rectification and the stereo filter on whatever GPU
# EGL finds, llvmpipe where there is none, shared-memory rings), read back by stereod-dump
# and fused by stereod-heightmap (config/demo/heightmap.conf) into a height map of the
# pitch, whose players are shown live as a table and, with the pictures of both pairs and
# the height map, as a page in a browser (stereod-web: the URL is printed; set
# STEREOD_DEMO_WEB=ADDRESS:PORT for another address than 127.0.0.1:8088).
#   tools/stereod-demo.sh [BUILD_DIR] [SECONDS]
# It renders the clip once (about a minute on 2 cores) into the folder named by
# [output] dir= of config/demo/sim.conf, writes colour depth images of what the rings
# publish into that folder's view/, and scores the first frame against the ground truth.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
seconds=${2:-30}
. "$root/tools/demo-clip.sh"
# (again when config/demo/sim.conf changed since: a copy is kept beside the clip)
demo_clip stereod-demo "$build" "$root/config/demo/sim.conf"

# The replay rate: the clip (25 frames/s) is played in real time when the GPU keeps up
# with both pairs at 25 frames/s, else in slow motion at a whole number of frames/s that
# it keeps up with (measured here on frame 0, with a third in hand; imagesequencesrc takes
# 1 frame/s at the least), so that both pairs process the same frames and the height map
# fuses them (on llvmpipe: 1 frame/s). The files are a replay to stereod (clock=auto:
# replay): frame k of west and of east carry the same capture time, one start shared by
# both pairs + k frame periods of the replay rate, and the GPU thread takes both pairs'
# newest frames at the same moment; when the clip starts again the times go on growing.
# The filter's settings are config/stereod.conf's (the stadium setting; refine off).
probe() { # extra stereod-disparity options -> mean ms per pair on frame 0
  "$build/tools/stereod-disparity" "$clip/west/left/000000.jpg" \
    "$clip/west/right/000000.jpg" --calib "$clip/west/calib.conf" -o /dev/null -n 3 \
    --window 2 --smoothing 1 --noise-floor 2 --coarse-fallback 0.01 --ground-margin 1 "$@" 2>&1 |
    sed -n 's/.* mean \([0-9.]*\) ms over.*/\1/p'
}
rate() { # ms per pair -> whole frames/s for two pairs, 0 when below 1
  awk -v t="${1:-100000}" 'BEGIN { f = int(1000 / (2 * t * 1.3)); print (f > 25 ? 25 : f) }'
}
ms=$(probe)
fps=$(rate "$ms")
[ "$fps" -ge 1 ] || fps=1
echo "stereod-demo: the filter takes ${ms} ms per pair here"
if [ "$fps" -lt 25 ]; then
  echo "stereod-demo: playing the clip in slow motion at $fps frames/s (speeds in the table" \
    "are $((25 / fps)) times too low)"
fi

work=$(mktemp -d /tmp/stereod-demo.XXXXXX)
pid= web_pid=
cleanup() {
  [ -n "$web_pid" ] && kill -TERM "$web_pid" 2>/dev/null && wait "$web_pid" 2>/dev/null
  [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
sed -e "s|@CLIP@|$clip|g" -e "s|@RATE@|$fps/1|g" -e "s|@FPS@|$fps|g" \
  -e "/^\[daemon\]/a metrics=127.0.0.1:9101" \
  "$root/config/demo/stereod.conf.in" > "$work/stereod.conf"
"$build/daemon/stereod" --check-config --config "$work/stereod.conf"
"$build/daemon/stereod" --config "$work/stereod.conf" &
pid=$!

# the ring directory, by the rule of include/stereod/ring.h
rings=${STEREOD_RING_DIR:-}
[ -n "$rings" ] || { [ -d /run/stereod ] && rings=/run/stereod || rings=/dev/shm; }
view=$clip/view
mkdir -p "$view"
echo "stereod-demo: stereod runs (pid $pid); reading both rings for $seconds s"
for pair in west east; do   # the rings appear once the GPU and the pipelines are up
  for _ in $(seq 300); do [ -e "$rings/stereod.$pair" ] && break; sleep 0.1; done
  "$build/tools/stereod-dump" "$pair" --timeout 30 --count 1 --quiet >/dev/null
done
dumps=()
for pair in west east; do
  "$build/tools/stereod-dump" "$pair" --count 0 --timeout 30 --color "$view/$pair" 2>&1 |
    sed -u "s/^/  $pair: /" > "$work/dump-$pair.log" &
  dumps+=($!)
done
# the live page: the pictures of both pairs (the left cameras from stereod), their
# statistics, the height map and the players, from the rings, the height map's socket
# and both programs' metrics (127.0.0.1:9101 and :9102; stereod-web(1))
sed -e "/^\[heightmap\]/a socket=$work/players.sock" -e "/^\[heightmap\]/a metrics=127.0.0.1:9102" \
  "$root/config/demo/heightmap.conf" > "$work/heightmap.conf"
cat > "$work/web.conf" <<CONF
[web]
listen=${STEREOD_DEMO_WEB:-127.0.0.1:8088}
stereod=127.0.0.1:9101
heightmap=127.0.0.1:9102
heightmap_socket=$work/players.sock
[pair west]
[pair east]
color=depth
CONF
"$build/web/stereod-web" --config "$work/web.conf" 2> "$work/web.log" &
web_pid=$!
for _ in $(seq 50); do grep -q "serving http" "$work/web.log" && break; sleep 0.1; done
url=$(sed -n 's/.*serving \(http[^ ]*\) .*/\1/p' "$work/web.log")
if [ -n "$url" ]; then
  echo "stereod-demo: the live view is at $url (open it in a browser; stereod-web)"
else
  echo "stereod-demo: stereod-web did not start: $(tail -n 1 "$work/web.log")"
fi
# the players, live: ids and pitch positions (also as JSON lines: --json), the page's URL
# on top of every table (the table is redrawn here: the builder's stdout is a pipe)
show_table() {
  local line
  while IFS= read -r line; do
    if [[ $line == "fused frame "* ]]; then
      [ -t 1 ] && printf '\033[H\033[J'
      [ -n "$url" ] && echo "live view: $url"
    fi
    printf '%s\n' "$line"
  done
}
timeout -s INT "$seconds" "$build/heightmap/stereod-heightmap" \
  --config "$work/heightmap.conf" --table --png "$view/heightmap" | show_table || true
kill -INT "${dumps[@]}" 2>/dev/null || true
tail -n 3 "$work"/dump-*.log
kill -TERM "$web_pid" "$pid" 2>/dev/null || true
wait "$web_pid" || true
wait "$pid" || true
pid= web_pid=

echo "stereod-demo: accuracy of the engine on frame 0 against the sim's exact ground truth" \
  "(config/stereod.conf's filter settings: window 2, smoothing 1, noise floor 2, coarse" \
  "fallback 0.01, ground margin 1 px)"
extra=(--window 2 --smoothing 1 --noise-floor 2 --coarse-fallback 0.01 --ground-margin 1)
for pair in west east; do
  "$build/tools/stereod-disparity" "$clip/$pair/left/000000.jpg" "$clip/$pair/right/000000.jpg" \
    --calib "$clip/$pair/calib.conf" --gt "$clip/$pair/gt/000000.pfm" "${extra[@]}" \
    --color "$view/$pair-frame0-disparity.jpg" --quiet
done
echo "stereod-demo: images in $view (colour: near = warm, invalid = black; height maps in" \
  "$view/heightmap: high = warm, no data = black, players = white crosses)"
