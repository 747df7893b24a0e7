#!/usr/bin/env bash
# h200-profile.sh: the GPU time of every pass of the engine at 1920x1080 (stereod-bench
# --profile) with the default schedule and its variants, in one device call.
#
#   bench/h200-profile.sh pack      (here, from the project root, after ninja -C build)
#   then the device tool: carry [".gpu"], command "bash .gpu/bin/h200-profile.sh run"
#
# run: profile.txt, every case's table and "# profile" lines; the variants are chosen by
# the environment the engine reads (STEREOD_PHASE_SPLIT, STEREOD_PHASE_TILE,
# STEREOD_PHASE_SEG, STEREOD_POST_THREADS, STEREOD_POST_STAGE_K) and by the bench's --pattern;
# H200_PROFILE_SET=default profiles the defaults only (batches of 1 and 16, the bars).
set -uo pipefail
mode=${1:-}
if [ "$mode" = pack ]; then
  set -e
  . "$(dirname "$0")/h200-pack.sh"
  h200_pack $b/bench/stereod-bench $b/tests/stereo/test-stages-phase \
    $b/tests/stereo/test-stages-post $b/tests/stereo/test-stages-search \
    $b/tests/stereo/test-engine "$root/bench/h200-profile.sh"
  h200_pack_size h200-profile.sh
  exit 0
fi
[ "$mode" = run ] || { echo "usage: $0 pack|run" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/h200-out}
mkdir -p "$out"
size=${H200_SIZE:-1920x1080}
log="$out/profile.txt"
: > "$log"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw --format=csv 2>&1 |
  tee -a "$log"
case_() { # NAME ENV... -- BENCH ARGS
  local name=$1; shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  echo "== $name ${envs[*]} $*" | tee -a "$log"
  env "${envs[@]}" bash "$here/run" stereod-bench --sizes $size --scales 5 "$@" \
    2>&1 | grep -v -- '-DEBUG' | tee -a "$log"
}
if [ "${H200_PROFILE_SET:-variants}" = variants ]; then
  # the schedule's choices, one at a time against the default
  f="--in-flight 2 --batch 16 --frames 96 --warmup 16 --profile 8"
  case_ default X=1 -- $f
  for g in 4x2 8x2 4x4; do case_ seg$g STEREOD_PHASE_SEG=$g -- $f; done
  case_ split-all STEREOD_PHASE_SPLIT=1 -- $f
  case_ post-threads1024 STEREOD_POST_THREADS=1024 -- $f
  case_ bars X=1 -- $f --pattern bars
else
  case_ default X=1 -- --in-flight 2 --batch 1,16 --frames 160 --warmup 32 --profile 12
  case_ bars X=1 -- --in-flight 2 --batch 16 --frames 160 --warmup 32 --profile 12 --pattern bars
  case_ one-in-flight X=1 -- --batch 1 --frames 240 --warmup 24 --in-flight 1
fi
# the stages and the engine against the double reference, on this GPU
for t in test-stages-phase test-stages-search test-stages-post test-engine; do
  echo "== $t" | tee -a "$log"
  bash "$here/run" $t 2>&1 | grep -E '^(ok|not ok)|Bail|ERROR|max' | tee -a "$log"
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw --format=csv 2>&1 |
  tee -a "$log"
