#!/usr/bin/env bash
# The demo of the stereo engine: renders the demo stadium (config/demo/sim.conf: two
# camera pairs, 22 players) with stereod-sim, computes every pair's disparity on the GPU
# that EGL finds (llvmpipe where there is none) and scores it against the exact ground
# truth. Writes colour images to look at.
#   tools/stereod-demo.sh [BUILD_DIR] [OUT_DIR] [FRAMES]
# Your own pair instead: BUILD_DIR/tools/stereod-disparity LEFT RIGHT -o d.pfm --color d.jpg
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
out=${2:-/var/tmp/stereod-demo-disparity}
frames=${3:-1}
clip=$(mktemp -d /var/tmp/stereod-sim.XXXXXX)
trap 'rm -rf "$clip"' EXIT
"$build/tools/stereod-sim" --config "$root/config/demo/sim.conf" --out "$clip" --frames "$frames"
mkdir -p "$out"
for dir in "$clip"/*/; do
  pair=$(basename "$dir")
  [ -f "$dir/calib.conf" ] || continue
  for left in "$dir"/left/*.jpg; do
    f=$(basename "$left" .jpg)
    cp "$left" "$out/$pair-$f-left.jpg"
    "$build/tools/stereod-disparity" "$left" "$dir/right/$f.jpg" \
      -o "$out/$pair-$f.pfm" --color "$out/$pair-$f-disparity.jpg" --gt "$dir/gt/$f.pfm"
  done
done
echo "stereod-demo: images in $out (*-left.jpg: the camera, *-disparity.jpg: the depth, near = warm)"
