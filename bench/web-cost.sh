#!/usr/bin/env bash
# What the live view and the metrics cost the rings: stereod publishing two pairs as fast
# as its GPU goes (the clip is offered at 25 frames/s, more than llvmpipe takes: the pairs
# the GPU cannot take are dropped as gpu_behind, so the publish rate is the engine's
# throughput), measured over identical runs with and without the view:
#   off  stereod without metrics, nobody reading the rings;
#   on   stereod with [daemon] metrics= scraped every second by stereod-web, which reads
#        both rings and serves the page's event stream (every picture, the left cameras
#        too, at FPS pictures a second: $WEB_COST_FPS, default 2, the page's default) to
#        a client that reads it as fast as it comes, as a browser does.
# Per run: frames published per second (from the rings' counters over the window), CPU
# seconds stereod used per frame published, and, for "on", stereod-web's CPU seconds per
# second. The runs alternate (off, on, off, on, ...) so that a change of the machine's
# load falls on both.
#   bench/web-cost.sh BUILD_DIR [SECONDS [RUNS]]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
seconds=${2:-60}
runs=${3:-3}
work=$(mktemp -d /tmp/stereod-web-cost.XXXXXX)
export STEREOD_RING_DIR=$work/rings
mkdir -p "$STEREOD_RING_DIR"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

cat > "$work/sim.conf" <<CONF
[output]
frames=50
fps=25
format=jpg
seed=3
[scene]
players=22
[pair west]
position=-26,-52,16
look_at=-26,-8,0
baseline=3
focal=525
width=480
height=270
noise=1.5
[pair east]
position=26,-52,16
look_at=26,-8,0
baseline=3
focal=525
width=480
height=270
noise=1.5
CONF
echo "web-cost: rendering a 480x270 clip of two pairs"
"$build/tools/stereod-sim" --config "$work/sim.conf" --out "$work/clip" --quiet

conf() { # METRICS(yes|no) -> stereod.conf
  { printf '[daemon]\nstats_interval=5\n'
    [ "$1" = yes ] && printf 'metrics=127.0.0.1:0\n'
    for p in west east; do
      cat <<CONF
[pair $p]
left=imagesequencesrc location=$work/clip/$p/left/%06d.jpg framerate=25/1 ! identity sync=true
right=imagesequencesrc location=$work/clip/$p/right/%06d.jpg framerate=25/1 ! identity sync=true
width=480
height=270
fps=25
calibration=$work/clip/$p/calib.conf
outputs=disparity;confidence
noise_floor=2
reconnect_min_ms=100
reconnect_max_ms=100
CONF
    done; } > "$work/stereod.conf"
}
ticks() { # PID -> CPU seconds
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"
}
counter() { # PAIR -> publish counter of its ring
  "$build/tools/stereod-dump" "$1" --count 1 --timeout 10 2>/dev/null |
    sed -n 's/.*counter=\([0-9]*\).*/\1/p' | head -n 1
}

run() { # off|on
  local mode=$1 web_pid= reader_pid=
  conf "$([ "$mode" = on ] && echo yes || echo no)"
  "$build/daemon/stereod" --config "$work/stereod.conf" 2> "$work/stereod.log" &
  local st=$!
  pids+=($st)
  for _ in $(seq 600); do
    [ -e "$STEREOD_RING_DIR/stereod.west" ] && [ -e "$STEREOD_RING_DIR/stereod.east" ] && break
    sleep 0.1
  done
  if [ "$mode" = on ]; then
    local m
    for _ in $(seq 100); do
      m=$(sed -n 's/.*metrics on http:\/\/\([^/]*\)\/metrics.*/\1/p' "$work/stereod.log")
      [ -n "$m" ] && break; sleep 0.1
    done
    printf '[web]\nlisten=127.0.0.1:0\nstereod=%s\nmax_rate=10\n[pair west]\n[pair east]\n' \
      "$m" > "$work/web.conf"
    "$build/web/stereod-web" --config "$work/web.conf" 2> "$work/web.log" &
    web_pid=$!
    pids+=($web_pid)
    local url=
    for _ in $(seq 100); do
      url=$(sed -n 's/.*serving \(http[^ ]*\) .*/\1/p' "$work/web.log"); [ -n "$url" ] && break
      sleep 0.1
    done
    # the page: every picture at max_rate, read as fast as it comes
    curl -sN --noproxy '*' "${url}events?fps=${WEB_COST_FPS:-2}" > /dev/null &
    reader_pid=$!
    pids+=($reader_pid)
  fi
  sleep 10   # warm: shaders compiled, pipelines running
  local c0w c0e t0 s0 w0=0
  c0w=$(counter west); c0e=$(counter east); t0=$(date +%s.%N); s0=$(ticks "$st")
  [ -n "$web_pid" ] && w0=$(ticks "$web_pid")
  sleep "$seconds"
  local c1w c1e t1 s1 w1=0
  c1w=$(counter west); c1e=$(counter east); t1=$(date +%s.%N); s1=$(ticks "$st")
  [ -n "$web_pid" ] && w1=$(ticks "$web_pid")
  kill -TERM $reader_pid $web_pid "$st" 2>/dev/null || true
  wait $reader_pid $web_pid "$st" 2>/dev/null || true
  awk -v m="$mode" -v fw=$((c1w - c0w)) -v fe=$((c1e - c0e)) -v t="$(echo "$t1 - $t0" | bc)" \
      -v s="$(echo "$s1 - $s0" | bc)" -v w="$(echo "$w1 - $w0" | bc)" 'BEGIN {
    f = fw + fe
    printf "%-4s %6.2f frames/s published (west %d, east %d in %.1f s), stereod %.3f CPU s per frame",
           m, f / t, fw, fe, t, s / f
    if (m == "on") printf ", stereod-web %.3f CPU s/s", w / t
    printf "\n" }' | tee -a "$work/results"
}

for i in $(seq "$runs"); do
  run off
  run on
done
awk '{ r[$1] += $2; n[$1]++; c[$1] += $(NF - 4 + ($1 == "on" ? -3 : 0)) }
     END { printf "mean: off %.3f frames/s, on %.3f frames/s: %+.2f %%\n", r["off"] / n["off"],
           r["on"] / n["on"], 100 * (r["on"] / n["on"] - r["off"] / n["off"]) / (r["off"] / n["off"]) }' \
  "$work/results"
