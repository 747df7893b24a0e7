#!/usr/bin/env bash
# h200-web-flow.sh: on the H200, in one device call, (1) what the live view and the
# metrics cost the rings' publish rate when the GPU is the limit, and (2) the optical flow
# in the service beside the stereo filter.
#
#   H200_PACK_ROOT=/path/to/the/checkout bench/h200-web-flow.sh pack   (after ninja -C build)
#   device tool: carry [".gpu"], command "bash .gpu/bin/h200-web-flow.sh run"
#
# 1. 16 live 1920x1080 GRAY8 pairs at 60 fps (imagefreeze of a textured pair: more than the
#    GPU takes, so the publish rate is the service's throughput), runs alternating
#    off (no metrics, nobody reading the rings) and on ([daemon] metrics= scraped every
#    second by stereod-web, which reads all 16 rings and serves the page's event stream
#    at 2 pictures a second to a client reading it as fast as it comes, as a browser does,
#    plus a /metrics scrape of stereod every second); the published rate summed from
#    stereod's stats lines after the first 10 s.
# 2. 4 live 1920x1080 pairs at 30 fps with flow=true against the same without: published
#    rate, the stats' GPU ms per frame, latency.
set -uo pipefail
mode=${1:-}
if [ "$mode" = pack ]; then
  set -e
  . "$(dirname "$0")/h200-pack.sh"
  GST_PLUGINS="pnm imagefreeze ${GST_PLUGINS:-}" h200_pack --gst \
    $b/daemon/stereod $b/web/stereod-web $b/bench/stereod-bench "$root/bench/h200-web-flow.sh"
  h200_pack_size h200-web-flow.sh
  exit 0
fi
[ "$mode" = run ] || { echo "usage: $0 pack|run" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/h200-out}
mkdir -p "$out"
export STEREOD_RING_DIR=/tmp/stereod-rings
mkdir -p "$STEREOD_RING_DIR" /tmp/live
R="bash $here/run"
secs=${H200_SECS:-20}
# the bench's textured pair as PGM files
$R stereod-bench --sizes 1920x1080 --batch 1 --in-flight 1 --frames 1 --warmup 0 \
  --save-pairs /tmp/pairs > /dev/null 2>&1
conf() { # FILE PAIRS FPS METRICS(yes|no) FLOW(yes|no)
  printf '[daemon]\nstats_interval=5\n' > "$1"
  [ "$4" = yes ] && printf 'metrics=127.0.0.1:9101\n' >> "$1"
  for ((k = 0; k < $2; k++)); do
    printf '[pair p%d]\nleft=filesrc location=/tmp/pairs/1920x1080-left.pgm ! pnmdec ! videoconvert ! video/x-raw,format=GRAY8 ! imagefreeze is-live=true ! video/x-raw,framerate=%d/1\nright=filesrc location=/tmp/pairs/1920x1080-right.pgm ! pnmdec ! videoconvert ! video/x-raw,format=GRAY8 ! imagefreeze is-live=true ! video/x-raw,framerate=%d/1\nwidth=1920\nheight=1080\nfps=%d\n' \
      $k $3 $3 $3 >> "$1"
    [ "$5" = yes ] && printf 'flow=true\n' >> "$1"
  done
}
summarise() { # NAME PAIRS LOG
  python3 - "$@" <<'PY'
import re, sys
name, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = [l for l in open(path, errors="replace") if re.search(r"pair p\d+: .*out [0-9.]+ fps", l)]
lines = lines[2 * n:]
k = len(lines) // n
if k == 0:
    print("%s: no stats lines after the start-up" % name); sys.exit()
out = sum(float(re.search(r"out ([0-9.]+) fps", l).group(1)) for l in lines[:k * n]) / k
gpu = [float(re.search(r"gpu ([0-9.]+) ms", l).group(1)) for l in lines[:k * n]]
p99 = max(float(re.search(r"p99 ([0-9.]+) ms", l).group(1)) for l in lines[:k * n])
print("%-12s %2d pairs: %.1f pairs/s published, gpu %.2f ms per frame (mean of the stats), "
      "p99 %.1f ms, %d intervals" % (name, n, out, sum(gpu) / len(gpu), p99, k))
PY
}
run_case() { # NAME PAIRS FPS METRICS FLOW
  local name=$1 conf=/tmp/live/$1.conf
  conf "$conf" "$2" "$3" "$4" "$5"
  $R stereod --config "$conf" > "/tmp/live/$name.log" 2>&1 &
  local st=$! web= reader=
  if [ "$4" = yes ]; then
    for _ in $(seq 100); do grep -q 'metrics on' "/tmp/live/$name.log" && break; sleep 0.2; done
    { printf '[web]\nlisten=127.0.0.1:8088\nstereod=127.0.0.1:9101\nmax_rate=10\n'
      for ((k = 0; k < $2; k++)); do printf '[pair p%d]\n' $k; done; } > /tmp/live/web.conf
    $R stereod-web --config /tmp/live/web.conf > "/tmp/live/$name-web.log" 2>&1 &
    web=$!
    sleep 2
    python3 - <<'PY' > /dev/null 2>&1 &
import threading, time, urllib.request
def page():
    while True:
        try:
            with urllib.request.urlopen("http://127.0.0.1:8088/events?fps=2", timeout=60) as r:
                while r.read(65536):
                    pass
        except Exception:
            time.sleep(0.5)
threading.Thread(target=page, daemon=True).start()
while True:
    try:
        urllib.request.urlopen("http://127.0.0.1:9101/metrics", timeout=5).read()
    except Exception:
        pass
    time.sleep(1)
PY
    reader=$!
  fi
  sleep $((secs + 10))
  kill -INT $st 2>/dev/null; [ -n "$reader" ] && kill $reader 2>/dev/null
  [ -n "$web" ] && kill -TERM $web 2>/dev/null
  wait 2>/dev/null
  summarise "$name" "$2" "/tmp/live/$name.log" | tee -a "$out/web-flow.txt"
  [ -n "$web" ] && grep -c 'picture\|serving' "/tmp/live/$name-web.log" > /dev/null
  return 0
}
echo "== 1. the live view's and the metrics' cost, 16 pairs at 60 fps" | tee "$out/web-flow.txt"
for i in 1 2; do
  run_case off-$i 16 60 no no
  run_case on-$i 16 60 yes no
done
grep -h 'serving\|error\|critical' /tmp/live/on-1-web.log | head -5 | tee -a "$out/web-flow.txt"
echo "== 2. 8 pairs at 50 fps (rounds of one instant in capped batches)" | tee -a "$out/web-flow.txt"
run_case eight50 8 50 no no
echo "== 3. flow beside stereo, 4 pairs at 30 fps" | tee -a "$out/web-flow.txt"
run_case stereo4 4 30 no no
run_case flow4 4 30 no yes
grep -h 'flow' /tmp/live/flow4.log | head -5 | tee -a "$out/web-flow.txt"
cp /tmp/live/*.log "$out/" 2>/dev/null
cat "$out/web-flow.txt"
