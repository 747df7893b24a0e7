#!/usr/bin/env bash
# h200-groups.sh: the real stereod on a stadium of 8 calibrated 1920x1080 pairs with the
# stadium setting (max_disparity=auto: every pair its own range; the pitch-plane prior),
# live GStreamer sources, in one device call: published pairs/s and capture-to-publish
# latency, for this build's stereod and another build's (stereod-before), case by case
# on the same machine. Made to decide whether pairs of other auto ranges should share one
# engine (bench/RESULTS.md, "The pitch-plane prior"): they do not.
#
#   H200_BEFORE=DIR/stereod bench/h200-groups.sh pack   (here, after ninja -C build; the
#                                     other build's stereod, packed as stereod-before)
#   then the device tool: carry [".gpu"], command "bash .gpu/bin/h200-groups.sh run"
#
# run: stereod-sim renders one frame of 8 pairs (8 stands around the pitch, 12-28 m up,
# 12-40 m behind the lines, f 1900 px, baselines 2-3 m: auto ranges of 84-279 px) as PNG;
# each camera is filesrc ! pngdec ! imagefreeze is-live=true at the case's rate (the GPU's
# work per frame is a stadium frame's: its players, pitch, stands). Cases, H200_SECS
# (default 40) each, the first 10 s not counted, for each build: 8 pairs at 25 fps (the
# stadium's rate: latency) and at 120 fps (960 pairs/s offered: the capacity, newest
# wins); H200_PAIRS=16 plays each camera pair twice (16 pairs), H200_FPS_LIST the rates.
# Prints each case's engine groups and a summary line per case (the sum of the pairs'
# published rates per 5 s interval, averaged; the p50 and p99 latency, the largest of the
# pairs' interval values). H200_BUILD=DIR runs a build folder's programs (a rehearsal
# here: H200_SECS=27 H200_SIZE=320x180 H200_FPS_LIST=4).
mode=${1:-}
if [ "$mode" = pack ]; then
  set -e
  . "$(dirname "$0")/h200-pack.sh"
  before=${H200_BEFORE:?H200_BEFORE=path of the other build\'s stereod}
  mkdir -p /tmp/h200-groups-pack
  cp "$before" /tmp/h200-groups-pack/stereod-before
  GST_PLUGINS="png imagefreeze ${GST_PLUGINS:-}" h200_pack --gst \
    $b/daemon/stereod /tmp/h200-groups-pack/stereod-before $b/tools/stereod-sim \
    "$root/bench/h200-groups.sh"
  h200_pack_size h200-groups.sh
  exit 0
fi
if [ "$mode" != run ]; then
  echo "usage: $0 pack|run" >&2
  exit 2
fi
set -u
here=$(cd "$(dirname "$0")/.." && pwd)   # .gpu
out=${OUT:-/tmp/h200-groups-out}
mkdir -p "$out"
secs=${H200_SECS:-40}
size=${H200_SIZE:-1920x1080}
w=${size%x*} h=${size#*x}
fps_list=${H200_FPS_LIST:-25 120}
n_pairs=${H200_PAIRS:-8}   # 16: each of the 8 cameras' pairs twice
cmd_of() {
  if [ -n "${H200_BUILD:-}" ]; then
    if [ "$1" = stereod-before ]; then echo "${H200_BEFORE:?}"; return; fi
    find "$H200_BUILD" -name "$1" -type f -perm -u+x | head -n 1
  else
    printf '%s\n' bash "$here/run" "$1"
  fi
}
export STEREOD_RING_DIR=/tmp/stereod-rings
mkdir -p "$STEREOD_RING_DIR"
work=/tmp/h200-groups
rm -rf "$work"
mkdir -p "$work"

# the stadium: 8 pairs, 4 stands a side, one frame
f=$(python3 -c "print(round(1900 * $w / 1920))")
{
  printf '[output]\ndir=%s/clip\nframes=1\nfps=25\nstart_time_ns=0\nformat=png\nseed=7\nsupersample=1\n' "$work"
  printf '[scene]\nplayers=22\nball=true\nstands=true\nmax_speed=9\n'
  k=0
  for spec in "-40 -49 12" "-12 -60 20" "14 -77 28" "42 -55 16" \
              "-42 52 18" "-14 70 24" "12 49 14" "40 64 22"; do
    read -r x y z <<< "$spec"
    k=$((k + 1))
    ly=$([ "${y#-}" != "$y" ] && echo -8 || echo 8)
    printf '[pair p%d]\nposition=%s,%s,%s\nlook_at=%s,%s,0\nbaseline=%s\nfocal=%s\nwidth=%d\nheight=%d\nnoise=1.5\n' \
      "$k" "$x" "$y" "$z" "$x" "$ly" "$(python3 -c "print(2 + ($k % 3) * 0.5)")" "$f" "$w" "$h"
  done
} > "$work/sim.conf"
mapfile -t sim < <(cmd_of stereod-sim)
"${sim[@]}" --config "$work/sim.conf" --quiet || { echo "stereod-sim failed" >&2; exit 1; }

stereod_case() { # BUILD FPS
  local prog=$1 fps=$2 name=$1-$2fps conf=$work/$1-$2fps.conf
  printf '[daemon]\nstats_interval=5\nin_flight=2\nring_slots=4\n' > "$conf"
  for ((k = 1; k <= n_pairs; k++)); do
    local c=$(( (k - 1) % 8 + 1 ))
    local src="pngdec ! videoconvert ! video/x-raw,format=GRAY8 ! imagefreeze is-live=true ! video/x-raw,framerate=$fps/1"
    printf '[pair p%d]\nleft=filesrc location=%s/clip/p%d/left/000000.png ! %s\nright=filesrc location=%s/clip/p%d/right/000000.png ! %s\n' \
      "$k" "$work" "$c" "$src" "$work" "$c" "$src" >> "$conf"
    printf 'width=%d\nheight=%d\nfps=%d\ncalibration=%s/clip/p%d/calib.conf\n' "$w" "$h" "$fps" "$work" "$c" >> "$conf"
    printf 'outputs=disparity;depth;confidence\nmax_disparity=auto\nwindow=2\nsmoothing=1\nnoise_floor=2\ncoarse_fallback=0.01\nground_margin=1\n' >> "$conf"
  done
  echo "-- $name: $n_pairs pairs at $fps fps, $secs s" | tee -a "$out/groups.txt"
  mapfile -t cmd < <(cmd_of "$prog")
  timeout -s INT "$secs" "${cmd[@]}" --config "$conf" > "$work/$name.log" 2>&1
  grep -E 'GPU:|engine groups|max_disparity auto' "$work/$name.log" | sed 's/^[^ ]* [0-9:.]*: //' |
    tee -a "$out/groups.txt"
  python3 - "$name" "$work/$name.log" "$size" "$fps" "$n_pairs" <<'PY' | tee -a "$out/groups.txt"
import re, sys
name, path, size, fps = sys.argv[1:5]
n = int(sys.argv[5])
text = open(path, errors="replace").read()
gpu = re.search(r"GPU: .*", text)
line = gpu.group(0) if gpu else ""
device = "H200" if "H200" in line else "H100" if "H100" in line else "llvmpipe" if "llvmpipe" in line else "GPU"
lines = [l for l in text.splitlines() if re.search(r"pair p\d+: .*out [0-9.]+ fps", l)]
lines = lines[2 * n:]     # the first two intervals (10 s): start-up
rates, p50, p99 = {}, 0.0, 0.0
for i, l in enumerate(lines):
    rates.setdefault(i // n, 0.0)
    rates[i // n] += float(re.search(r"out ([0-9.]+) fps", l).group(1))
    q = re.search(r"latency p50 ([0-9.]+) ms p99 ([0-9.]+) ms", l)
    if q:
        p50, p99 = max(p50, float(q.group(1))), max(p99, float(q.group(2)))
full = [v for k, v in rates.items() if k < len(lines) // n]
groups = re.search(r"(\d+) pairs in (\d+) engine groups", text)
if full:
    print("# summary: %s stadium %s, %d calibrated pairs (auto ranges, ground_margin 1), %s: "
          "%.1f pairs/s published at %s fps offered, latency p50 %.1f ms, p99 %.1f ms "
          "(largest of the pairs' 5 s intervals), %s engine groups, %d intervals"
          % (device, size, n, name.rsplit("-", 1)[0], sum(full) / len(full), fps, p50, p99,
             groups.group(2) if groups else "?", len(full)))
else:
    print("%s: no stats lines after the start-up" % name)
PY
}
: > "$out/groups.txt"
for fps in $fps_list; do
  stereod_case stereod "$fps"
  stereod_case stereod-before "$fps"
done
echo "== summary"
grep '^# summary' "$out/groups.txt" | tee "$out/summary.txt"
