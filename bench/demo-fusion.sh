#!/usr/bin/env bash
# How much of the demo the height map fuses from both pairs, through the service, as
# tools/stereod-demo.sh runs it on llvmpipe (slow motion at 1 frame/s, refine off):
# stereod-sim renders a short clip of config/demo/sim.conf, stereod plays it from
# config/demo/stereod.conf.in, stereod-heightmap (config/demo/heightmap.conf) writes its
# JSON lines for SECONDS, and the lines are scored against the clip's ground truth.
#   bench/demo-fusion.sh BUILD_DIR [SECONDS] [FRAMES] [CLIP_DIR] [HEIGHTMAP_CONF]
# BUILD_DIR holds daemon/stereod, heightmap/stereod-heightmap and tools/stereod-sim (the
# configuration templates are this checkout's). CLIP_DIR keeps a rendered clip between
# runs (rendered when it has no players.csv). HEIGHTMAP_CONF replaces
# config/demo/heightmap.conf (its wait_ms and stale_ms assume that the GPU publishes both
# pairs about once a second; a loaded llvmpipe takes several seconds per pair). Prints
# one line:
#   lines N, from both pairs M (P %), players found R % (both-pair lines), R2 % (all)
# "Players found": for each line, the clip frame whose ground-truth players its players
# fit best (the line's capture time cannot say which frame it shows when the pairs'
# clocks disagree), then the share of that frame's players with a reported player
# within 1 m. STEREOD_BENCH_KEEP=1 keeps the folder (configs, logs, JSON lines).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
seconds=${2:-60}
frames=${3:-40}
clip=${4:-}
hm_conf=${5:-$root/config/demo/heightmap.conf}
work=$(mktemp -d /tmp/demo-fusion.XXXXXX)
pid=
cleanup() {
  [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  if [ -n "${STEREOD_BENCH_KEEP:-}" ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
[ -n "$clip" ] || clip=$work/clip
if [ ! -f "$clip/players.csv" ]; then
  "$build/tools/stereod-sim" --config "$root/config/demo/sim.conf" --out "$clip" \
    --frames "$frames" --quiet
fi
sed -e "s|@CLIP@|$clip|g" -e "s|@RATE@|1/1|g" -e "s|@FPS@|1|g" -e "s|@REFINE@|false|g" \
  "$root/config/demo/stereod.conf.in" > "$work/stereod.conf"
"$build/daemon/stereod" --config "$work/stereod.conf" > "$work/stereod.log" 2>&1 &
pid=$!
timeout -s INT "$seconds" "$build/heightmap/stereod-heightmap" \
  --config "$hm_conf" --json > "$work/lines.jsonl" \
  2> "$work/heightmap.log" || true
kill -TERM "$pid"
wait "$pid" || true
pid=
/usr/bin/python3 - "$work/lines.jsonl" "$clip/players.csv" <<'PY'
import csv, json, math, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
truth = {}
for r in csv.DictReader(open(sys.argv[2])):
    truth.setdefault(int(r["frame"]), []).append((float(r["x"]), float(r["y"])))
def found(line, frame):
    return sum(any(math.hypot(p["x"] - x, p["y"] - y) < 1.0 for p in line["players"])
               for x, y in truth[frame])
def recall(ls):
    got = total = 0
    for l in ls:
        best = max(truth, key=lambda k: found(l, k))
        got += found(l, best)
        total += len(truth[best])
    return 100.0 * got / max(total, 1)
both = [l for l in lines if len(l["pairs"]) == 2]
print("lines %d, from both pairs %d (%.0f %%), players found %.1f %% (both-pair lines), "
      "%.1f %% (all)" % (len(lines), len(both), 100.0 * len(both) / max(len(lines), 1),
                         recall(both), recall(lines)))
PY
