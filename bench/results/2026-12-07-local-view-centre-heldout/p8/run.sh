#!/bin/bash
cd /work/main
for seed in $(seq 100 119); do
  STADIUM_BUILD=/tmp/tb22 STADIUM_SCALE=1 STADIUM_FRAMES=4 STADIUM_SPEED=0.25 \
  STADIUM_BUILDER=wait_ms=300000 STADIUM_DIR=/tmp/h8/$seed STADIUM_JSON=/tmp/h8/json/$seed.json \
  STADIUM_VARIANTS="vc:view_centre=0.05,view_centre_px=1" \
  bash bench/stadium-bench.sh $seed 8 > /tmp/h8/$seed.txt 2>&1
  echo "$(date +%T) seed $seed status $?: $(grep '^# summary' /tmp/h8/$seed.txt | tr '\n' ' ')"
done
