#!/usr/bin/env bash
# h200-service.sh: every H200 measurement of issue 11 in one device call.
#
#   bench/h200-service.sh pack      (here, from the project root, after ninja -C build)
#   then the device tool:  kind nvidia-h200, carry [".gpu"] (and ".whl" for OpenCV),
#                          timeout_s 600, command "bash .gpu/bin/h200-service.sh run"
#
# pack: ../shared/device/prepare.sh --gst with the programs (stereod, stereod-bench, the
# gpu/stage/engine/accuracy tests), GStreamer's pnm and imagefreeze plugins on top of its
# list, this script, bench/opencv_peer.py and the Middlebury scenes (.gpu/mb).
#
# run (on the GPU machine; everything it prints also goes to $OUT, at most 8 files):
#  1. bench.txt: stereod-bench at 1920x1080, 5 scales, batches of 1, 4 and 16, 2 in
#     flight (with every pass's GPU time, --profile) (and 1 in flight for the lone pair's latency), the dispatch counts (--count),
#     the pairs saved for OpenCV;
#  2. opencv.txt: bench/opencv_peer.py on the same pairs in the same call (needs cv2:
#     there, or wheels carried in .whl, see /work/.library/device/README.md);
#     and the SMPTE bars (the hole fill's worst case) in batches of 1 and 16;
#  3. service.txt: stereod-bench --service (the service's frame loop and capture) with 16
#     live 1920x1080 pairs at 60 fps;
#  4. stereod.txt: the real stereod with GStreamer sources (imagefreeze of textured
#     pairs, GRAY8 1920x1080, and the issue's videotestsrc), 16 pairs at 60 fps (and at
#     120 fps: the capacity, 1920 pairs/s offered), 8 at 50,
#     1 pair alone at 60 and at 240 fps, for 35 s each (the first 10 s not counted), its
#     stats lines summed by this script;
#  5. flow.txt: stereod-flow --bench on a Middlebury pair resampled to 1920x1080, one
#     camera and 8 cameras in one engine (--pairs 8);
#  6. tests.txt: the gpu, stage, engine and accuracy tests on that GPU;
#  7. summary.txt: every "# summary:" line, in the form bench/RESULTS.md records.
set -uo pipefail
mode=${1:-}
if [ "$mode" = pack ]; then
  set -e
  . "$(dirname "$0")/h200-pack.sh"
  GST_PLUGINS="pnm imagefreeze ${GST_PLUGINS:-}" h200_pack --gst \
    $b/daemon/stereod $b/bench/stereod-bench $b/tools/stereod-flow $b/tests/gpu/test-gpu \
    $b/tests/stereo/test-stages $b/tests/stereo/test-stages-search \
    $b/tests/stereo/test-stages-phase $b/tests/stereo/test-stages-post \
    $b/tests/stereo/test-engine $b/tests/stereo/test-accuracy \
    "$root/bench/h200-service.sh" "$root/bench/opencv_peer.py"
  rm -rf .gpu/mb .gpu/mbflow && cp -rL "$root/../shared/data/middlebury" .gpu/mb
  mkdir -p .gpu/mbflow
  cp -L "$root/../shared/data/middlebury-flow/rubberwhale/"frame1[01].png .gpu/mbflow/
  h200_pack_size h200-service.sh
  exit 0
fi
if [ "$mode" != run ]; then
  echo "usage: $0 pack|run" >&2
  exit 2
fi

here=$(cd "$(dirname "$0")/.." && pwd)   # .gpu
out=${OUT:-/tmp/h200-out}
mkdir -p "$out"
# H200_BUILD=DIR runs the programs of a build folder instead of .gpu's (a rehearsal on
# the development machine: with H200_SIZE=160x96 H200_FPS=5 H200_SECS=6 H200_FRAMES=8
# and H200_MB=../shared/data/middlebury it is short)
size=${H200_SIZE:-1920x1080} fps=${H200_FPS:-60} secs=${H200_SECS:-20}
frames=${H200_FRAMES:-480}
w=${size%x*} h=${size#*x}
run() {
  if [ -n "${H200_BUILD:-}" ]; then
    local p=$1; shift
    "$(find "$H200_BUILD" -name "$p" -type f -perm -u+x | head -n 1)" "$@"
  else
    bash "$here/run" "$@"
  fi
}
# the command line of a program, for `timeout`
cmd_of() {
  if [ -n "${H200_BUILD:-}" ]; then
    find "$H200_BUILD" -name "$1" -type f -perm -u+x | head -n 1
  else
    printf '%s\n' bash "$here/run" "$1"
  fi
}
export STEREOD_RING_DIR=/tmp/stereod-rings
mkdir -p "$STEREOD_RING_DIR"
summary="$out/summary.txt"
: > "$summary"

echo "== 1. engine bench" | tee "$out/bench.txt"
run stereod-bench --count --sizes $size --batch 1,16 2>&1 | tee -a "$out/bench.txt"
run stereod-bench --sizes $size --scales 5 --batch 1,4,16 --in-flight 2 --frames $frames \
  --warmup $((frames / 10)) --save-pairs /tmp/pairs --profile 12 2>&1 | tee -a "$out/bench.txt"
run stereod-bench --sizes $size --scales 5 --batch 1 --in-flight 1 --frames $frames \
  --warmup $((frames / 10)) 2>&1 | tee -a "$out/bench.txt"
# the content that makes the hole fill work hardest (videotestsrc's SMPTE bars; H200_BARS=0
# skips it)
[ "${H200_BARS:-1}" = 0 ] || run stereod-bench --sizes $size --scales 5 --batch 1,16 --in-flight 2 --frames $((frames / 3)) \
  --warmup $((frames / 30)) --pattern bars 2>&1 | sed 's/^# summary: /# summary: bars: /' |
  tee -a "$out/bench.txt"
grep '^# summary' "$out/bench.txt" >> "$summary"

echo "== 2. OpenCV on the same pairs" | tee "$out/opencv.txt"
if ! python3 -c 'import cv2' 2>/dev/null && ls "$here"/../.whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site "$here"/../.whl/*.whl && export PYTHONPATH=/tmp/site
fi
if python3 -c 'import cv2' 2>/dev/null; then
  peer="$here/bin/opencv_peer.py"
  [ -f "$peer" ] || peer=bench/opencv_peer.py
  python3 "$peer" /tmp/pairs --runs 3 2>&1 | tee -a "$out/opencv.txt"
  sed -n "s/^ *$size *\(SGBM-3way\|BM\) *\([0-9.]*\) ms\/pair *\([0-9.]*\) pairs\/s.*/# summary: OpenCV \1 $size (same call): \3 pairs\/s, \2 ms per pair/p" \
    "$out/opencv.txt" >> "$summary"
else
  echo "no cv2 here and no .whl carried: OpenCV not measured" | tee -a "$out/opencv.txt" "$summary"
fi

echo "== 3. the service's frame loop (stereod-bench --service)" | tee "$out/service.txt"
for n in 16; do
  run stereod-bench --service --pairs $n --size $size --fps $fps --seconds $secs \
    --warmup-seconds 5 2>&1 | grep -v -- '-Message\|-DEBUG' | tee -a "$out/service.txt"
done
grep '^# summary' "$out/service.txt" >> "$summary"

echo "== 4. the real stereod with GStreamer sources" | tee "$out/stereod.txt"
# a textured pair with known disparity (the bench's), as PGM files for pnmdec ! imagefreeze
mkdir -p /tmp/live
cp "/tmp/pairs/$size-left.pgm" /tmp/live/left.pgm
cp "/tmp/pairs/$size-right.pgm" /tmp/live/right.pgm
stereod_case() { # NAME PAIRS SOURCE(still|videotestsrc) SECONDS [FPS]
  local name=$1 n=$2 kind=$3 secs=$4 conf=/tmp/live/$1.conf fps=${5:-$fps}
  printf '[daemon]\nstats_interval=5\nin_flight=2\nring_slots=4\n' > "$conf"
  for ((k = 0; k < n; k++)); do
    if [ "$kind" = videotestsrc ]; then
      l="videotestsrc is-live=true pattern=smpte ! video/x-raw,format=GRAY8,width=$w,height=$h,framerate=$fps/1"
      r=$l
    else
      l="filesrc location=/tmp/live/left.pgm ! pnmdec ! videoconvert ! video/x-raw,format=GRAY8 ! imagefreeze is-live=true ! video/x-raw,framerate=$fps/1"
      r="filesrc location=/tmp/live/right.pgm ! pnmdec ! videoconvert ! video/x-raw,format=GRAY8 ! imagefreeze is-live=true ! video/x-raw,framerate=$fps/1"
    fi
    printf '[pair p%d]\nleft=%s\nright=%s\nwidth=%d\nheight=%d\nfps=%d\n' "$k" "$l" "$r" "$w" \
      "$h" "$fps" >> "$conf"
  done
  echo "-- $name: $n pairs, $kind, $secs s" | tee -a "$out/stereod.txt"
  mapfile -t cmd < <(cmd_of stereod)
  timeout -s INT "$secs" "${cmd[@]}" --config "$conf" > "/tmp/live/$name.log" 2>&1
  grep -E 'GPU:|engine groups|pair p0:' "/tmp/live/$name.log" | head -8 | tee -a "$out/stereod.txt"
  # sum the published rates of every stats line after the first 10 s, per interval; the
  # p99 is the largest of the pairs' interval p99s (each over its interval's frames)
  python3 - "$name" "$n" "/tmp/live/$name.log" "$size" "$fps" <<'PY' | tee -a "$out/stereod.txt"
import math, re, sys
name, n, path, size, fps = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
text = open(path, errors="replace").read()
gpu = re.search(r"GPU: .*", text)
line = gpu.group(0) if gpu else ""
device = "H200" if "H200" in line else "H100" if "H100" in line else "llvmpipe" if "llvmpipe" in line else "GPU"
w, h = (int(v) for v in size.split("x"))
levels = max(1, min(5, 1 + int(math.floor(math.log2(min(w, h) / 24.0)))))   # stereod's automatic levels
lines = [l for l in text.splitlines() if re.search(r"pair p\d+: .*out [0-9.]+ fps", l)]
lines = lines[2 * n:]     # the first two intervals (10 s): start-up
rates, p99 = {}, 0.0
for i, l in enumerate(lines):
    m = re.search(r"out ([0-9.]+) fps", l)
    q = re.search(r"p99 ([0-9.]+) ms", l)
    rates.setdefault(i // n, 0.0)
    rates[i // n] += float(m.group(1))
    if q:
        p99 = max(p99, float(q.group(1)))
full = [v for k, v in rates.items() if k < len(lines) // n]
if full:
    print("# summary: %s service %s %d scales, %d pairs: %.1f pairs/s published, "
          "p99 latency %.1f ms (real stereod, %s fps cameras, %s, %d intervals of 5 s)"
          % (device, size, levels, n, sum(full) / len(full), p99, fps, name, len(full)))
else:
    print("%s: no stats lines after the start-up" % name)
PY
}
long=$((secs + 15))
# H200_CASES: the cases to run (default all), names as below
want() { [ -z "${H200_CASES:-}" ] || [[ " $H200_CASES " == *" $1 "* ]]; }
want still16 && stereod_case still16 16 still $long
# the capacity: 16 pairs at 60 fps offer 960 pairs/s, at most what can be published; at
# 120 fps (1920 offered) the published rate is what the GPU carries (newest wins)
want still16-120fps && stereod_case still16-120fps 16 still $long 120
want still8-50fps && stereod_case still8-50fps 8 still $long 50
want still1 && stereod_case still1 1 still $long
# the lone pair's GPU time when the GPU is kept busy (its clocks) against the 60 fps case
want still1-240fps && stereod_case still1-240fps 1 still $long 240
want testsrc16 && stereod_case testsrc16 16 videotestsrc $long
grep '^# summary' "$out/stereod.txt" >> "$summary"

echo "== 5. optical flow (stereod-flow --bench) on a Middlebury pair resampled" | tee "$out/flow.txt"
if [ -d "$here/mbflow" ] && [ "${H200_FLOW:-1}" != 0 ]; then   # H200_FLOW=0 skips it
  for flow_pairs in 1 8; do   # one camera, and 8 in one engine (as the service batches them)
    run stereod-flow "$here/mbflow/frame10.png" "$here/mbflow/frame11.png" --size $size \
      --bench $((frames / 2)) --pairs $flow_pairs 2>&1 | grep -v -- '-DEBUG' |
      tee -a "$out/flow.txt"
  done
fi
grep -i 'ms per flow\|summary' "$out/flow.txt" | sed 's/^# summary: //; s/^/# summary: flow: /' >> "$summary"

echo "== 6. tests on this GPU" | tee "$out/tests.txt"
export STEREOD_REQUIRE_GPU=1 STEREOD_REQUIRE_DATA=1 STEREOD_MIDDLEBURY_DIR="${H200_MB:-$here/mb}"
for t in ${H200_TESTS-test-gpu test-stages test-stages-search test-stages-phase test-stages-post \
         test-engine test-accuracy}; do
  run "$t" 2>&1 | grep -E '^(ok|not ok|# (tsukuba|teddy|cones|mean|scene|1920x1080|plain|calibrated|search|phase round \(prior))|Bail)' \
    | tee -a "$out/tests.txt"
done
grep -E '^# mean noc' "$out/tests.txt" | awk '!seen[$0]++' |
  sed 's/^# /# summary: Middlebury on this GPU, same call: /' >> "$summary"

echo "== summary" 
cat "$summary"
