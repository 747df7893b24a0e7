#!/usr/bin/env bash
# h200-profile.sh: the GPU time of every pass of the engine at 1920x1080 (stereod-bench
# --profile) with the default schedule and its variants, in one device call.
#
#   bench/h200-profile.sh pack      (here, from the project root, after ninja -C build)
#   then the device tool: carry [".gpu"], command "bash .gpu/bin/h200-profile.sh run"
#
# run: profile.txt, every case's table and "# profile" lines; the variants are chosen by
# the environment the engine reads (STEREOD_PHASE_SPLIT, STEREOD_PHASE_TILE,
# STEREOD_SEARCH_TILED) and by the bench's --pattern.
set -uo pipefail
mode=${1:-}
if [ "$mode" = pack ]; then
  set -e
  root=$(git rev-parse --show-toplevel)
  b=${H200_BUILD_DIR:-$root/build}
  "$root/../shared/device/prepare.sh" $b/bench/stereod-bench "$root/bench/h200-profile.sh"
  du -sh .gpu | awk '{print "h200-profile.sh: .gpu is " $1}'
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
  env "${envs[@]}" bash "$here/run" stereod-bench --sizes $size --scales 5 --in-flight 2 "$@" \
    2>&1 | grep -v -- '-DEBUG' | tee -a "$log"
}
case_ default X=1 -- --batch 1,16 --frames 160 --warmup 32 --profile 12
case_ split STEREOD_PHASE_SPLIT=1 -- --batch 16 --frames 160 --warmup 32 --profile 12
case_ tile16x16 STEREOD_PHASE_TILE=16x16 -- --batch 16 --frames 160 --warmup 32 --profile 12
case_ tile32x16 STEREOD_PHASE_TILE=32x16 -- --batch 16 --frames 160 --warmup 32 --profile 12
case_ search-direct STEREOD_SEARCH_TILED=0 -- --batch 16 --frames 160 --warmup 32 --profile 12
case_ bars X=1 -- --batch 16 --frames 160 --warmup 32 --profile 12 --pattern bars
case_ refine X=1 -- --batch 16 --frames 160 --warmup 32 --profile 12 --refine
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw --format=csv 2>&1 |
  tee -a "$log"
