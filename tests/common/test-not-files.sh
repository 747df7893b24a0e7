#!/bin/sh
# test-not-files.sh: the daemons given a FIFO, /dev/zero or an over-size file as their
# configuration, a drop-in or a calibration exit 78 at once with one line naming the
# file (issue 12: a FIFO hung them, /dev/zero ran them out of memory). `timeout` turns a
# hang into exit 124.
#   test-not-files.sh STEREOD [STEREOD-HEIGHTMAP]
set -u
stereod=$1
heightmap=${2:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stereod-not-files-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect78 MESSAGE CMD...: exit 78 within 60 s and stderr is the one line MESSAGE.
expect78() {
  want=$1
  shift
  timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  if [ "$got" != 78 ]; then
    fail "exit $got, want 78: $*"
    sed 's/^/  stderr: /' "$tmp/err"
    return
  fi
  if [ "$(cat "$tmp/err")" != "$want" ]; then
    fail "stderr is not '$want': $*"
    sed 's/^/  stderr: /' "$tmp/err"
    return
  fi
  echo "ok (78) $*"
}

mkfifo "$tmp/fifo"
head -c 1048577 /dev/zero | tr '\0' '#' >"$tmp/big"
pair='[pair west]
left=videotestsrc
right=videotestsrc
width=64
height=48
fps=10'

expect78 "stereod: $tmp/fifo: not a regular file (a FIFO)" \
  "$stereod" --check-config --config "$tmp/fifo"
expect78 "stereod: /dev/zero: not a regular file (a character device)" \
  "$stereod" --check-config --config /dev/zero
expect78 "stereod: $tmp/big: larger than 1048576 bytes" \
  "$stereod" --check-config --config "$tmp/big"
printf '%s\ncalibration=fifo\n' "$pair" >"$tmp/stereod.conf"
expect78 "stereod: $tmp/stereod.conf: [pair west] calibration: $tmp/fifo: not a regular file (a FIFO)" \
  "$stereod" --check-config --config "$tmp/stereod.conf"
printf '%s\ncalibration=/dev/zero\n' "$pair" >"$tmp/stereod.conf"
expect78 "stereod: $tmp/stereod.conf: [pair west] calibration: /dev/zero: not a regular file (a character device)" \
  "$stereod" --check-config --config "$tmp/stereod.conf"
printf '%s\n' "$pair" >"$tmp/stereod.conf"
mkdir "$tmp/conf.d"
mkfifo "$tmp/conf.d/50-site.conf"
expect78 "stereod: $tmp/conf.d/50-site.conf: not a regular file (a FIFO)" \
  "$stereod" --check-config --config "$tmp/stereod.conf"
rm "$tmp/conf.d/50-site.conf"
# Not checking the configuration only: the daemon itself, which would then start.
expect78 "stereod: $tmp/fifo: not a regular file (a FIFO)" "$stereod" --config "$tmp/fifo"

if [ -n "$heightmap" ]; then
  expect78 "stereod-heightmap: $tmp/fifo: not a regular file (a FIFO)" \
    "$heightmap" --check-config --config "$tmp/fifo"
  expect78 "stereod-heightmap: /dev/zero: not a regular file (a character device)" \
    "$heightmap" --check-config --config /dev/zero
  printf '[pair west]\ncalibration=fifo\n' >"$tmp/heightmap.conf"
  expect78 "stereod-heightmap: $tmp/heightmap.conf: [pair west] calibration: $tmp/fifo: not a regular file (a FIFO)" \
    "$heightmap" --check-config --config "$tmp/heightmap.conf"
  printf '[pair west]\ncalibration=big\n' >"$tmp/heightmap.conf"
  expect78 "stereod-heightmap: $tmp/heightmap.conf: [pair west] calibration: $tmp/big: larger than 1048576 bytes" \
    "$heightmap" --check-config --config "$tmp/heightmap.conf"
  printf '[pair west]\n[pair east]\n[pair west]\n' >"$tmp/heightmap.conf"
  expect78 "stereod-heightmap: $tmp/heightmap.conf: [pair west]: appears twice in this file (lines 1 and 3)" \
    "$heightmap" --check-config --config "$tmp/heightmap.conf"
  expect78 "stereod-heightmap: $tmp/fifo: not a regular file (a FIFO)" \
    "$heightmap" --config "$tmp/fifo"
fi

if [ "$failures" != 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all passed"
