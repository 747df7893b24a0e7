#!/bin/sh
# test-sortnet.sh PYTHON SRCDIR: the medians' sorting networks sort (the generator's 0-1
# proof over every input of 0 and 1) and kernels/shaders/sortnet.glsl is what the
# generator writes (regenerate with: kernels/shaders/gen-sortnet.py > kernels/shaders/sortnet.glsl).
set -eu
py=$1 src=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$py" "$src/kernels/shaders/gen-sortnet.py" --check > "$out"
if ! cmp -s "$out" "$src/kernels/shaders/sortnet.glsl"; then
  echo "kernels/shaders/sortnet.glsl differs from the output of gen-sortnet.py" >&2
  exit 1
fi
echo "sortnet.glsl matches its generator"
