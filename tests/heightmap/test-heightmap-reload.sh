#!/usr/bin/env bash
# stereod-heightmap's SIGHUP reload, on the real program: it starts with pairs whose rings
# do not exist (it waits for them), then the same file is changed and re-read:
#   1. min_height and confirm changed: one line "reloaded FILE: min_height 0.5 -> 0.7,
#      confirm 2 -> 3";
#   2. min_height=abc: one warning naming the file, [heightmap] and min_height, no
#      "reloaded" line, and the program keeps running;
#   3. min_height back to 0.7 (the running value: the bad file changed nothing), cell and
#      gate changed: "[heightmap] cell changed: needs a restart, keeping 0.1" and
#      "reloaded FILE: gate 1 -> 2" (the changeable key is still applied);
#   4. the same file again: cell is refused again, nothing else changed;
# then SIGTERM must end it with status 0. Every wait has a deadline.
# Needs EGL: skipped (77) when no EGL device opens, unless STEREOD_REQUIRE_GPU=1.
#   test-heightmap-reload.sh STEREOD_HEIGHTMAP
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
name=hm-reload-$$
conf=$tmp/heightmap.conf
err=$tmp/stderr
pid=
cleanup() {
  if [ -n "$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
  rm -f "/dev/shm/stereod.$name"
}
trap cleanup EXIT

write_conf() { # MIN_HEIGHT CONFIRM CELL GATE
  cat > "$conf.new" <<CONF
[heightmap]
x0=-5
x1=5
y0=-5
y1=5
cell=$3
min_height=$1
confirm=$2
gate=$4
socket=$tmp/players.sock
ring=$name
[pair west]
ring=$name-west
[pair east]
ring=$name-east
CONF
  mv "$conf.new" "$conf"
}

# Running, and not a zombie (kill -0 succeeds on one).
alive() {
  local state
  [ -r "/proc/$pid/stat" ] && read -r _ _ state _ < "/proc/$pid/stat" && [ "$state" != Z ]
}
fail() {
  echo "FAIL: $*"
  echo "--- stderr of stereod-heightmap:"
  cat "$err"
  exit 1
}
count() { grep -cF -- "$1" "$err" || true; }
# Waits up to $2 s for a stderr line containing the fixed string $1.
wait_for() {
  local end=$((SECONDS + $2))
  until grep -qF -- "$1" "$err"; do
    alive || fail "stereod-heightmap ended while waiting for \"$1\""
    [ "$SECONDS" -lt "$end" ] || fail "no \"$1\" within $2 s"
    sleep 0.05
  done
}
hup() {
  kill -HUP "$pid"
}

write_conf 0.5 2 0.1 1
"$bin" --config "$conf" 2> "$err" &
pid=$!

# Started: the output ring is made, the socket bound, and the pairs wait for their rings.
end=$((SECONDS + 30))
until grep -qF "ring /dev/shm/stereod.$name" "$err" && [ -S "$tmp/players.sock" ]; do
  if ! alive; then
    if grep -qE "no EGL device|no display \(|eglInitialize failed|no platform displays" "$err" &&
       [ "${STEREOD_REQUIRE_GPU:-0}" = 0 ]; then
      echo "SKIP: no EGL device; set STEREOD_REQUIRE_GPU=1 to fail instead"
      cat "$err"
      exit 77
    fi
    fail "stereod-heightmap did not start"
  fi
  [ "$SECONDS" -lt "$end" ] || fail "not started within 30 s"
  sleep 0.05
done
wait_for "[pair west] waiting for ring $name-west" 5
wait_for "[pair east] waiting for ring $name-east" 5

# 1. changeable keys
write_conf 0.7 3 0.1 1
hup
wait_for "reloaded $conf: min_height 0.5 -> 0.7, confirm 2 -> 3" 5

# 2. a value that does not load
sed -i 's/^min_height=.*/min_height=abc/' "$conf"
hup
wait_for "$conf: [heightmap] min_height: 'abc' is not a number" 5
sleep 0.3   # anything else this reload would log
alive || fail "stereod-heightmap ended after a bad reload"
n=$(grep -F "$conf: [heightmap] min_height" "$err" | grep -c WARNING || true)
[ "$n" = 1 ] || fail "$n warnings for the bad value, expected 1"
[ "$(count "reloaded ")" = 1 ] || fail "a file that does not load was reported as reloaded"

# 3. a key fixed at start, with a changeable one
write_conf 0.7 3 0.2 2
hup
wait_for "reloaded $conf: gate 1 -> 2" 5
[ "$(count "[heightmap] cell changed: needs a restart, keeping 0.1")" = 1 ] ||
  fail "no single \"cell changed: needs a restart\" warning"
grep -F "reloaded $conf: gate" "$err" | grep -qF min_height &&
  fail "min_height reported as changed: the bad reload changed the running value"

# 4. the same file again: the running configuration has cell 0.1, so cell is refused
# again, and nothing else changed
hup
wait_for "reloaded $conf: nothing that applies without a restart changed" 5
[ "$(count "[heightmap] cell changed")" = 2 ] || fail "cell not refused on the second reload"

# The end: SIGTERM, status 0.
kill -TERM "$pid"
end=$((SECONDS + 10))
while alive; do
  [ "$SECONDS" -lt "$end" ] || fail "still running 10 s after SIGTERM"
  sleep 0.05
done
status=0
wait "$pid" || status=$?
pid=
[ "$status" = 0 ] || fail "exit status $status after SIGTERM, expected 0"
[ ! -e "/dev/shm/stereod.$name" ] || fail "the output ring was left behind"
echo "OK: reload applied, bad file kept the running configuration, restart-only key" \
  "refused, clean stop ($SECONDS s)"
