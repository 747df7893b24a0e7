#!/bin/bash
cd /work/main
export STADIUM_SCALE=1 STADIUM_FRAMES=4 STADIUM_SET_DIR=/tmp/lrp/set
bash bench/stadium-set.sh 1 12 2 > /tmp/lrp/set-base.txt 2>&1
STEREOD_LR_LEVEL=1 bash bench/stadium-set.sh 1 12 2 > /tmp/lrp/set-lr1.txt 2>&1
echo done >> /tmp/lrp/set-lr1.txt
