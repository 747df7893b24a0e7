#!/bin/bash
# two held-out seeds at once (a loaded machine), wait_ms raised, stale_ms left at 1 s:
# the builder's staleness from the pairs' own intervals keeps every set whole
cd /work/main
seed=$1
STADIUM_BUILD=/tmp/tb27 STADIUM_SCALE=1 STADIUM_FRAMES=4 STADIUM_SPEED=0.25 \
STADIUM_BUILDER=wait_ms=300000 STADIUM_DIR=/tmp/h8/$seed \
bash bench/stadium-bench.sh $seed 8 > /tmp/h8v/$seed.txt 2>&1
echo "$(date +%T) seed $seed status $?: $(grep '^# summary' /tmp/h8v/$seed.txt | tr '\n' ' ')" >> /tmp/h8v/log.txt
python3 -c "
import json
print('$seed', [len(json.loads(l)['pairs']) for l in open('/tmp/h8/$seed/lines.jsonl') if l.strip()])" >> /tmp/h8v/log.txt
