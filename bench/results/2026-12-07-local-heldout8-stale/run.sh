#!/bin/bash
# held-out seeds whose sets left out a pair (stale_ms 1 s on llvmpipe), again with stale_ms raised
cd /work/main
for seed in "$@"; do
  STADIUM_BUILD=/tmp/tb26 STADIUM_SCALE=1 STADIUM_FRAMES=4 STADIUM_SPEED=0.25 \
  STADIUM_BUILDER=wait_ms=300000,stale_ms=300000 STADIUM_DIR=/tmp/h8/$seed STADIUM_JSON=/tmp/h8s/json/$seed.json \
  STADIUM_VARIANTS="before:view_centre=0,view_centre_px=0" \
  bash bench/stadium-bench.sh $seed 8 > /tmp/h8s/$seed.txt 2>&1
  echo "$(date +%T) seed $seed status $?: $(grep '^# summary' /tmp/h8s/$seed.txt | tr '\n' ' ')" >> /tmp/h8s/log.txt
done
