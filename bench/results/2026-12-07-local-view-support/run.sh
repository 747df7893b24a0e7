#!/bin/bash
# tuning seeds, 8 pairs, view_support variants (local, llvmpipe)
cd /work/main
for seed in "$@"; do
  STADIUM_BUILD=/tmp/tb24 STADIUM_SCALE=1 STADIUM_FRAMES=4 STADIUM_SPEED=0.25 \
  STADIUM_BUILDER=wait_ms=300000 STADIUM_DIR=/tmp/l8s/$seed STADIUM_JSON=/tmp/vs/json/$seed.json \
  STADIUM_VARIANTS="vs10:view_support=10 vs20:view_support=20 vs40:view_support=40" \
  bash bench/stadium-bench.sh $seed 8 > /tmp/vs/$seed.txt 2>&1
  echo "$(date +%T) seed $seed status $?: $(grep '^# summary' /tmp/vs/$seed.txt | tr '\n' ' ')" >> /tmp/vs/log.txt
done
