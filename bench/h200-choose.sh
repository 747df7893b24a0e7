#!/usr/bin/env bash
# h200-choose.sh: the engine's variants, then the service with the fastest, in one device
# call (issue 11).
#
#   H200_BASE_BENCH=<an earlier build's stereod-bench> bench/h200-choose.sh pack
#                   (here, from the project root, after ninja -C build)
#   then the device tool:  kind nvidia-h200, carry [".gpu"], timeout_s 600,
#                          command "bash .gpu/bin/h200-choose.sh run"
#
# run: bench/h200-engine.sh (the baseline when packed, this build, each variant of
# H200_VARIANTS: 960 pairs a case, no batch-1 runs, no gl-overlap) into $OUT/engine.txt;
# bench/h200-pick.py names the switches that beat the defaults by more than 1 %; then
# bench/h200-service.sh with them exported (engine batches 1/4/16, OpenCV,
# stereod-bench --service, the real stereod: H200_CASES, default "still16
# still16-120fps still1", H200_SECS default 15; the tests of H200_TESTS, default the
# stage, engine and accuracy tests). Everything lands in $OUT (8 files at most).
set -uo pipefail
mode=${1:-}
if [ "$mode" = pack ]; then
  set -e
  root=$(git rev-parse --show-toplevel)
  bash "$root/bench/h200-service.sh" pack
  cp "$root/bench/h200-engine.sh" "$root/bench/h200-pick.py" "$root/bench/h200-choose.sh" \
    "$root/.gpu/bin/"
  if [ -n "${H200_BASE_BENCH:-}" ]; then
    cp -L "$H200_BASE_BENCH" "$root/.gpu/bin/stereod-bench-base"
  fi
  du -sh "$root/.gpu" | awk '{print "h200-choose.sh: .gpu is " $1 " (the device tool carries 64 MiB)"}'
  exit 0
fi
if [ "$mode" != run ]; then
  echo "usage: $0 pack|run" >&2
  exit 2
fi
bin=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/h200-out}
mkdir -p "$out"
H200_FRAMES=960 H200_BATCH1=0 H200_OVERLAP=0 OUT=/tmp/h200-choose-engine \
  bash "$bin/h200-engine.sh" run > /dev/null 2>&1
cp /tmp/h200-choose-engine/engine.txt "$out/engine.txt"
grep -E "^# summary|^# profile total|^== " "$out/engine.txt"
picked=$(python3 "$bin/h200-pick.py" "$out/engine.txt")
echo "picked: ${picked:-(the defaults)}"
# shellcheck disable=SC2086
[ -n "$picked" ] && export $picked
H200_SECS=${H200_SECS:-15} H200_CASES=${H200_CASES:-still16 still16-120fps still1} \
  H200_TESTS=${H200_TESTS-test-stages test-stages-phase test-stages-post test-engine test-accuracy} \
  H200_BARS=0 H200_FLOW=0 bash "$bin/h200-service.sh" run > /tmp/h200-choose-console.txt 2>&1
cat "$out/summary.txt"
grep -E "^(ok|not ok)|Bail" "$out/tests.txt"
