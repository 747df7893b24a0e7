#!/usr/bin/env bash
# h200-engine.sh: the engine's variants side by side in one device call (issue 11).
#
#   bench/h200-engine.sh pack   (here, from the project root, after ninja -C build;
#                                H200_BASE_BENCH=FILE adds the stereod-bench of an earlier
#                                build as stereod-bench-base, the baseline of the same call)
#   then the device tool:  carry [".gpu"], command "bash .gpu/bin/h200-engine.sh run"
#   (bench/h200-pick.py $OUT/engine.txt then names the switches that beat the defaults)
#
# run: for the baseline (when packed) and the current build, then for each variant of
# H200_VARIANTS (";"-separated environment settings, default below), stereod-bench at
# 1920x1080, 5 scales, batch 16, 2 in flight, with every pass's GPU time (--profile);
# the current build also at batch 1 (2 and 1 in flight); then gl-overlap (do copies on
# a second GL context overlap compute on the first?). Everything goes to $OUT/engine.txt,
# the "# summary:" and "# profile total" lines also to $OUT/summary.txt.
set -uo pipefail
mode=${1:-}
if [ "$mode" = pack ]; then
  set -e
  . "$(dirname "$0")/h200-pack.sh"
  extra=()
  [ -n "${H200_BASE_BENCH:-}" ] && { mkdir -p /tmp/h200-base && cp -L "$H200_BASE_BENCH" /tmp/h200-base/stereod-bench-base && extra+=(/tmp/h200-base/stereod-bench-base); }
  h200_pack $b/bench/stereod-bench $b/bench/gl-overlap "${extra[@]}" "$root/bench/h200-engine.sh"
  h200_pack_size h200-engine.sh
  exit 0
fi
if [ "$mode" != run ]; then
  echo "usage: $0 pack|run" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")/.." && pwd)   # .gpu
out=${OUT:-/tmp/h200-out}
mkdir -p "$out"
log="$out/engine.txt"
frames=${H200_FRAMES:-320}
variants=${H200_VARIANTS:-STEREOD_LR_LEVEL=1;STEREOD_PHASE_COLS_H=8;STEREOD_PHASE_SPLIT=1}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv 2>&1 | tee -a "$log"
bench() {   # LABEL PROGRAM ARGS...
  local label=$1 prog=$2; shift 2
  echo "== $label" | tee -a "$log"
  bash "$here/run" "$prog" --sizes 1920x1080 --scales 5 --frames "$frames" --warmup 32 "$@" 2>&1 |
    grep -v DEBUG | sed "s/^# summary: /# summary: $label: /" | tee -a "$log"
}
[ -x "$here/bin/stereod-bench-base" ] &&
  bench base stereod-bench-base --batch 16 --in-flight 2 --profile 8
bench new stereod-bench --batch 16 --in-flight 2 --profile 8
IFS=';' read -ra vs <<< "$variants"
for v in "${vs[@]}"; do
  [ -n "$v" ] || continue
  env $v bash -c true 2>/dev/null || continue
  ( export $v; bench "new $v" stereod-bench --batch 16 --in-flight 2 --profile 8 )
done
# H200_BATCH1=0 skips the batch-1 runs, H200_OVERLAP=0 gl-overlap
if [ "${H200_BATCH1:-1}" != 0 ]; then
  bench "new batch 1" stereod-bench --batch 1 --in-flight 2
  bench "new batch 1, 1 in flight" stereod-bench --batch 1 --in-flight 1
  [ -x "$here/bin/stereod-bench-base" ] &&
    bench "base batch 1, 1 in flight" stereod-bench-base --batch 1 --in-flight 1
fi
if [ "${H200_OVERLAP:-1}" != 0 ]; then
  echo "== gl-overlap" | tee -a "$log"
  bash "$here/run" gl-overlap ${H200_OVERLAP_ARGS:-96 20 80} 2>&1 | tee -a "$log"
fi
grep -E "^# summary:|^# profile total|^readback|^upload|^== " "$log" > "$out/summary.txt"
