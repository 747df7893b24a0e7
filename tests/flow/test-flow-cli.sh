#!/bin/sh
# test-flow-cli.sh: stereod-flow end to end: exit status, one-line errors, the files.
#   test-flow-cli.sh STEREOD-FLOW STEREOD-SYNTH REF-FLOW
# The frames are a synthetic stereo pair (stereod-synth): the left view's pixels move to
# x - d in the right view, so the flow is (-d, 0) with d = 3.3 px.
set -u
flow=$1 synth=$2 ref=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stereod-flow-cli-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect STATUS CMD...: exit status, and for a failure one stderr line "stereod-flow: ...".
expect() {
  want=$1
  shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  if [ "$got" != "$want" ]; then
    fail "exit $got, want $want: $*"
    sed 's/^/  stderr: /' "$tmp/err"
    return
  fi
  if [ "$want" != 0 ]; then
    if [ "$(wc -l <"$tmp/err")" != 1 ] || ! grep -q "^stereod-flow: ." "$tmp/err"; then
      fail "want one line 'stereod-flow: ...' on stderr: $*"
      sed 's/^/  stderr: /' "$tmp/err"
      return
    fi
  fi
  echo "ok ($got) $*"
}

"$synth" --scene constant --d0 3.3 --size 96x64 --noise 1 -l "$tmp/a.png" -r "$tmp/b.png" \
  -q || { echo "stereod-synth failed"; exit 1; }

# Usage errors: exit 64 (EX_USAGE) before anything is read.
expect 64 "$flow"
expect 64 "$flow" "$tmp/a.png"
expect 64 "$flow" "$tmp/a.png" "$tmp/b.png"
expect 64 "$flow" "$tmp/a.png" "$tmp/b.png" -o "$tmp/o.flo" --scales 99
expect 64 "$flow" "$tmp/a.png" "$tmp/b.png" -o "$tmp/o.flo" --size 10x10
expect 64 "$flow" "$tmp/a.png" "$tmp/b.png" -o "$tmp/o.flo" --size 640
expect 64 "$flow" "$tmp/a.png" "$tmp/b.png" -o "$tmp/o.flo" --device nowhere
expect 64 "$flow" "$tmp/a.png" "$tmp/b.png" -o "$tmp/o.flo" --bogus
expect 64 "$flow" "$tmp/a.png" "$tmp/b.png" -o "$tmp/o.flo" --max-pixels 0
expect 64 "$flow" "$tmp/a.png" "$tmp/b.png" -o "$tmp/o.flo" --size 4000x4000 --max-pixels 1000000
# Run-time errors: exit 1, one line.
expect 1 "$flow" "$tmp/missing.png" "$tmp/b.png" -o "$tmp/o.flo"
printf 'not an image' >"$tmp/junk.png"
expect 1 "$flow" "$tmp/junk.png" "$tmp/b.png" -o "$tmp/o.flo"
"$synth" --scene constant --size 80x64 -l "$tmp/c.png" -r "$tmp/d.png" -q
expect 1 "$flow" "$tmp/a.png" "$tmp/c.png" -o "$tmp/o.flo"
expect 1 "$flow" "$tmp/a.png" "$tmp/b.png" -o "$tmp/no/such/dir/o.flo"
expect 1 "$flow" "$tmp/a.png" "$tmp/b.png" -o "$tmp/o.flo" --max-pixels 1000

# A real run (needs a GPU; llvmpipe is enough). Without EGL it fails with exit 1 and the
# GPU named in its line: that counts as a skip unless STEREOD_REQUIRE_GPU=1.
"$flow" "$tmp/a.png" "$tmp/b.png" -o "$tmp/o.flo" --png "$tmp/o.png" --color "$tmp/o.jpg" \
  >"$tmp/out" 2>"$tmp/err"
st=$?
if [ $st != 0 ] && grep -q "GPU" "$tmp/err" && [ "${STEREOD_REQUIRE_GPU:-0}" != 1 ]; then
  echo "no GPU: $(cat "$tmp/err"); skipping the runs"
  [ $failures = 0 ] && exit 77
  exit 1
fi
[ $st = 0 ] || { fail "stereod-flow run: exit $st"; sed 's/^/  stderr: /' "$tmp/err"; }
[ "$(wc -c <"$tmp/o.flo")" = $((12 + 8 * 96 * 64)) ] || fail "o.flo has the wrong size"
head -c 4 "$tmp/o.flo" | od -An -tf4 | grep -q 202021 || fail "o.flo: no .flo magic"
head -c 8 "$tmp/o.png" | od -An -c | grep -q "P   N   G" || fail "o.png is not a PNG"
head -c 2 "$tmp/o.jpg" | od -An -tx1 | grep -q "ff d8" || fail "o.jpg is not a JPEG"
# The flow is (-3.3, 0): score it against a ground truth written by ref-flow's own .flo
# writer from the reference run on the same frames (same file format, exact same
# algorithm), and check the value directly.
"$ref" "$tmp/a.png" "$tmp/b.png" -o "$tmp/ref.flo" >/dev/null 2>&1 || fail "ref-flow failed"
"$flow" "$tmp/a.png" "$tmp/b.png" --gt "$tmp/ref.flo" -q >"$tmp/out" 2>"$tmp/err" ||
  fail "stereod-flow --gt failed"
epe=$(sed -n 's/.*EPE \([0-9.]*\) px.*/\1/p' "$tmp/out")
echo "GPU against the reference: $(cat "$tmp/out")"
awk -v e="$epe" 'BEGIN { exit !(e != "" && e < 0.01) }' ||
  fail "stereod-flow differs from the reference by EPE $epe px"
python3 - "$tmp/o.flo" <<'PY' || fail "the flow is not (-3.3, 0)"
import struct, sys
d = open(sys.argv[1], 'rb').read()
w, h = struct.unpack('<ii', d[4:12])
uv = struct.unpack('<%df' % (2 * w * h), d[12:])
inner = [(uv[2 * (y * w + x)], uv[2 * (y * w + x) + 1])
         for y in range(8, h - 8) for x in range(12, w - 12)]
mu = sum(u for u, v in inner) / len(inner)
mv = sum(v for u, v in inner) / len(inner)
print("mean flow inside: (%.3f, %.3f)" % (mu, mv))
sys.exit(0 if abs(mu + 3.3) < 0.1 and abs(mv) < 0.1 else 1)
PY
expect 0 "$flow" "$tmp/a.png" "$tmp/b.png" --bench 3 --size 64x48 --fb-check
grep -q "ms per flow frame" "$tmp/out" || fail "--bench printed no timing"

[ $failures = 0 ] && echo "all passed" && exit 0
echo "$failures failed"
exit 1
