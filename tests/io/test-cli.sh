#!/bin/sh
# test-cli.sh: the command-line tools end to end: exit status, one-line errors, files.
#   test-cli.sh synth STEREOD-SYNTH
#   test-cli.sh disparity STEREOD-DISPARITY STEREOD-SYNTH
set -u

mode=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stereod-cli-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
failures=0
no_gpu=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect STATUS PREFIX CMD...: runs CMD, checks its exit status and, for a failure, that
# stderr is exactly one line starting with "PREFIX: ".
expect() {
  want=$1 prefix=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  if [ "$got" != "$want" ]; then
    fail "exit $got, want $want: $*"
    sed 's/^/  stderr: /' "$tmp/err"
    return
  fi
  if [ "$want" != 0 ]; then
    lines=$(wc -l <"$tmp/err")
    if [ "$lines" != 1 ] || ! grep -q "^$prefix: ." "$tmp/err"; then
      fail "want one line '$prefix: ...' on stderr: $*"
      sed 's/^/  stderr: /' "$tmp/err"
      return
    fi
  fi
  echo "ok ($got) $*"
}

# has_magic FILE TEXT: the file starts with TEXT.
has_magic() {
  printf '%s' "$2" >"$tmp/magic"
  n=$(wc -c <"$tmp/magic")
  head -c "$n" "$1" | cmp -s - "$tmp/magic" || fail "$1 does not start with the right bytes"
}

# pfm_size FILE W H: a one-channel little-endian PFM of W x H.
pfm_size() {
  header="Pf
$2 $3
-1.0
"
  has_magic "$1" "$header"
  want=$(( $(printf '%s' "$header" | wc -c) + 4 * $2 * $3 ))
  got=$(wc -c <"$1")
  [ "$got" = "$want" ] || fail "$1 has $got bytes, want $want"
}

synth_tests() {
  synth=$1
  expect 0 stereod-synth "$synth" --scene slanted --size 160x120 --seed 7 -l "$tmp/l.png" \
    -r "$tmp/r.pgm" --gt "$tmp/gt.pfm" --gt-right "$tmp/gt1.pfm" --mask "$tmp/mask.png"
  grep -q '^slanted 160x120 seed 7: ' "$tmp/out" || fail "no summary line"
  has_magic "$tmp/l.png" "$(printf '\211PNG')"
  has_magic "$tmp/r.pgm" "P5
160 120
255
"
  pfm_size "$tmp/gt.pfm" 160 120
  pfm_size "$tmp/gt1.pfm" 160 120
  has_magic "$tmp/mask.png" "$(printf '\211PNG')"
  # Deterministic.
  expect 0 stereod-synth "$synth" --scene slanted --size 160x120 --seed 7 -l "$tmp/l2.png" \
    -r "$tmp/r2.pgm" -q
  cmp -s "$tmp/l.png" "$tmp/l2.png" || fail "same seed, different left image"
  cmp -s "$tmp/r.pgm" "$tmp/r2.pgm" || fail "same seed, different right image"
  [ -s "$tmp/out" ] && fail "--quiet printed something"

  expect 64 stereod-synth "$synth"
  expect 64 stereod-synth "$synth" -l "$tmp/a.png"
  expect 64 stereod-synth "$synth" --scene cube -l "$tmp/a.png" -r "$tmp/b.png"
  expect 64 stereod-synth "$synth" --size 12 -l "$tmp/a.png" -r "$tmp/b.png"
  expect 64 stereod-synth "$synth" --bogus -l "$tmp/a.png" -r "$tmp/b.png"
  expect 64 stereod-synth "$synth" -l "$tmp/a.png" -r "$tmp/b.png" extra
  expect 1 stereod-synth "$synth" --scene constant --size 160x120 --d0 500 \
    -l "$tmp/a.png" -r "$tmp/b.png"
  expect 1 stereod-synth "$synth" --scene box --size 160x120 --box 150,0,40,40 \
    -l "$tmp/a.png" -r "$tmp/b.png"
  expect 1 stereod-synth "$synth" --size 160x120 -l "$tmp/missing/a.png" -r "$tmp/b.png"
}

disparity_tests() {
  disp=$1 synth=$2
  p=stereod-disparity
  "$synth" --scene constant --size 160x120 --d0 10 --seed 3 -q \
    -l "$tmp/l.png" -r "$tmp/r.png" || fail "stereod-synth"
  "$synth" --scene constant --size 96x64 -q -l "$tmp/small.png" -r "$tmp/small-r.png" ||
    fail "stereod-synth"
  printf 'not an image\n' >"$tmp/garbage.png"
  head -c 200 "$tmp/r.png" >"$tmp/cut.png"

  # Usage: exit 64 (EX_USAGE).
  expect 64 $p "$disp"
  expect 64 $p "$disp" "$tmp/l.png"
  expect 64 $p "$disp" "$tmp/l.png" "$tmp/r.png"
  expect 64 $p "$disp" "$tmp/l.png" "$tmp/r.png" "$tmp/x.png" -o "$tmp/o.pfm"
  expect 64 $p "$disp" --bogus "$tmp/l.png" "$tmp/r.png" -o "$tmp/o.pfm"
  expect 64 $p "$disp" "$tmp/l.png" "$tmp/r.png" -o "$tmp/o.pfm" --scales 9
  expect 64 $p "$disp" "$tmp/l.png" "$tmp/r.png" -o "$tmp/o.pfm" --max-disparity -4
  expect 64 $p "$disp" "$tmp/l.png" "$tmp/r.png" -o "$tmp/o.pfm" --max-disparity abc
  expect 64 $p "$disp" "$tmp/l.png" "$tmp/r.png" -o "$tmp/o.pfm" --device gpu0
  expect 64 $p "$disp" "$tmp/l.png" "$tmp/r.png" -o "$tmp/o.pfm" --noise-floor 65
  expect 64 $p "$disp" "$tmp/l.png" "$tmp/r.png" -o "$tmp/o.pfm" --noise-floor -1
  # --noise-floor is applied: a floor above the texture's responses changes the map
  expect 0 $p "$disp" "$tmp/l.png" "$tmp/r.png" -o "$tmp/nf0.pfm" -q
  expect 0 $p "$disp" "$tmp/l.png" "$tmp/r.png" -o "$tmp/nf0b.pfm" -q --noise-floor 0
  expect 0 $p "$disp" "$tmp/l.png" "$tmp/r.png" -o "$tmp/nf64.pfm" -q --noise-floor 64
  cmp -s "$tmp/nf0.pfm" "$tmp/nf0b.pfm" || fail "--noise-floor 0 is not the default"
  cmp -s "$tmp/nf0.pfm" "$tmp/nf64.pfm" && fail "--noise-floor 64 changed nothing"
  # Run time: exit 1.
  expect 1 $p "$disp" "$tmp/none.png" "$tmp/r.png" -o "$tmp/o.pfm"
  grep -q "none.png" "$tmp/err" || fail "the error does not name the missing file"
  expect 1 $p "$disp" "$tmp/l.png" "$tmp/small-r.png" -o "$tmp/o.pfm"
  expect 1 $p "$disp" "$tmp/garbage.png" "$tmp/r.png" -o "$tmp/o.pfm"
  expect 1 $p "$disp" "$tmp/l.png" "$tmp/cut.png" -o "$tmp/o.pfm"
  grep -q "cut.png" "$tmp/err" || fail "the error does not name the truncated file"
  expect 1 $p "$disp" "$tmp/l.png" "$tmp/r.png" -o "$tmp/o.pfm" --max-disparity 400
  expect 1 $p "$disp" "$tmp/l.png" "$tmp/r.png" -o "$tmp/o.pfm" --device 99
  expect 1 $p "$disp" "$tmp/l.png" "$tmp/r.png" -o "$tmp/missing/o.pfm"
  [ -e "$tmp/o.pfm" ] && fail "a failed run left an output file"

  # Files that are not files fail at once (timeout: a hang would be exit 124, not 1).
  mkfifo "$tmp/fifo.png"
  expect 1 $p timeout 60 "$disp" "$tmp/fifo.png" "$tmp/r.png" -o "$tmp/o.pfm"
  grep -q "fifo.png: not a regular file (a FIFO)" "$tmp/err" || fail "FIFO: wrong message"
  expect 1 $p timeout 60 "$disp" /dev/zero "$tmp/r.png" -o "$tmp/o.pfm"
  grep -q "/dev/zero: not a regular file (a character device)" "$tmp/err" ||
    fail "/dev/zero: wrong message"
  expect 1 $p timeout 60 "$disp" "$tmp/l.png" "$tmp/r.png" -o "$tmp/o.pfm" \
    --calib "$tmp/fifo.png"
  grep -q "fifo.png: not a regular file (a FIFO)" "$tmp/err" || fail "FIFO calib: wrong message"
  expect 1 $p timeout 60 "$disp" "$tmp/l.png" "$tmp/r.png" --gt "$tmp/fifo.png"
  grep -q "fifo.png: not a regular file (a FIFO)" "$tmp/err" || fail "FIFO gt: wrong message"

  # The pixel limit: small PNGs (complete: all black, zlib level 9) declaring 4096 x 4096
  # (16 KB) and 8192 x 8192 (66 KB). The default (64 Mpixel) refuses 8192 x 8192 and
  # reads 4096 x 4096 (the run then stops at the size check against the 160 x 120 right
  # image, before the GPU); --max-pixels 16000000 refuses 4096 x 4096, --max-pixels
  # 67108864 reads 8192 x 8192.
  for s in 4096 8192; do
    python3 -c 'import struct, sys, zlib
def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
s = int(sys.argv[1])
z = zlib.compress(bytes(s * (s + 1)), 9)
sys.stdout.buffer.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", s, s, 8, 0, 0, 0, 0)) +
                        chunk(b"IDAT", z) + chunk(b"IEND", b""))' $s >"$tmp/huge$s.png" ||
      fail "cannot write the ${s}x$s PNG"
    [ "$(wc -c <"$tmp/huge$s.png")" -lt 80000 ] || fail "huge$s.png is not a small file"
  done
  expect 1 $p "$disp" "$tmp/huge8192.png" "$tmp/r.png" -o "$tmp/o.pfm"
  grep -q "huge8192.png: image size 8192x8192 is 67108864 pixels, more than the limit of 64000000" \
    "$tmp/err" || fail "8192x8192: wrong message"
  expect 1 $p "$disp" "$tmp/huge8192.png" "$tmp/r.png" -o "$tmp/o.pfm" --max-pixels 67108864
  grep -q "huge8192.png is 8192x8192 but .*r.png is 160x120" "$tmp/err" ||
    fail "--max-pixels 67108864 did not read the 8192x8192 image"
  expect 1 $p "$disp" "$tmp/huge4096.png" "$tmp/r.png" -o "$tmp/o.pfm"
  grep -q "huge4096.png is 4096x4096 but .*r.png is 160x120" "$tmp/err" ||
    fail "the default limit did not read the 4096x4096 image"
  expect 1 $p "$disp" "$tmp/huge4096.png" "$tmp/r.png" -o "$tmp/o.pfm" --max-pixels 16000000
  grep -q "huge4096.png: image size 4096x4096 is 16777216 pixels, more than the limit of 16000000" \
    "$tmp/err" || fail "--max-pixels 16000000: wrong message"
  expect 1 $p "$disp" "$tmp/l.png" "$tmp/r.png" -o "$tmp/o.pfm" --max-pixels 19199
  grep -q "l.png: image size 160x120 is 19200 pixels, more than the limit of 19199" \
    "$tmp/err" || fail "--max-pixels 19199: wrong message"
  expect 64 $p "$disp" "$tmp/l.png" "$tmp/r.png" -o "$tmp/o.pfm" --max-pixels 0
  [ -e "$tmp/o.pfm" ] && fail "a failed run left an output file"

  # Success needs a GPU (llvmpipe will do). Without one the run fails with a "GPU:" line:
  # a skip (77) unless STEREOD_REQUIRE_GPU=1 says a GPU must be there.
  "$disp" "$tmp/small.png" "$tmp/small-r.png" -o "$tmp/probe.pfm" -q 2>"$tmp/err"
  if [ $? != 0 ] && grep -q "^$p: GPU: " "$tmp/err"; then
    if [ "${STEREOD_REQUIRE_GPU:-0}" = 1 ]; then
      fail "no GPU although STEREOD_REQUIRE_GPU=1: $(cat "$tmp/err")"
    else
      echo "no GPU ($(cat "$tmp/err")): success paths not run"
      no_gpu=1
    fi
    return
  fi

  # Success: every output, a summary line, and a plausible disparity.
  expect 0 $p "$disp" "$tmp/l.png" "$tmp/r.png" -o "$tmp/o.pfm" --png16 "$tmp/o.png" \
    --color "$tmp/o.jpg" --max-disparity 32
  grep -q '^.*l.png: 160x120, .* valid$' "$tmp/out" || fail "no summary line"
  pfm_size "$tmp/o.pfm" 160 120
  has_magic "$tmp/o.png" "$(printf '\211PNG')"
  has_magic "$tmp/o.jpg" "$(printf '\377\330\377')"
  # The scene is a constant 10 px: most pixels must say so (within 1 px).
  header_len=$(printf 'Pf\n160 120\n-1.0\n' | wc -c)
  near=$(od -A n -v -t f4 -j "$header_len" "$tmp/o.pfm" | tr -s ' ' '\n' |
         awk '$1 != "" && $1 != "inf" && $1 > 9 && $1 < 11 { n++ } END { print n + 0 }')
  echo "near: $near"
  [ "$near" -gt $((160 * 120 / 2)) ] || fail "only $near of 19200 pixels near 10 px"
  expect 0 $p "$disp" "$tmp/small.png" "$tmp/small-r.png" -o "$tmp/s.pfm" -q --no-lr-check \
    --scales 1
  [ -s "$tmp/out" ] && fail "--quiet printed something"
  pfm_size "$tmp/s.pfm" 96 64
}

case $mode in
  synth) synth_tests "$2" ;;
  disparity) disparity_tests "$2" "$3" ;;
  *) echo "usage: $0 synth|disparity PROGRAMS..."; exit 2 ;;
esac
if [ "$failures" != 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
[ "$no_gpu" = 1 ] && exit 77
echo "all passed"
