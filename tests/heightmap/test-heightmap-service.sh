#!/usr/bin/env bash
# stereod and stereod-heightmap as an operator runs them, on a stereod-sim clip: one
# stereod process captures two camera pairs through GStreamer (JPEG files played in real
# time) and publishes their rings; stereod-heightmap reads both rings, fuses them and
# publishes the players as JSON lines (stdout and the Unix socket) and the height map as
# a ring. Then the east camera "dies" (its image folder disappears): stereod keeps trying
# to reconnect it while west runs on, and the height map goes on from west alone, the
# JSON lines saying so.
#   test-heightmap-service.sh STEREOD STEREOD_HEIGHTMAP STEREOD_SIM STEREOD_DUMP
# Checked: lines fused from both pairs with players in both halves of the pitch; the same
# ids from line to line (tracks); the socket serves the same lines; the height-map ring
# carries the grid; after east stops, lines fused from west alone that still find west's
# players, stereod alive; both processes stop with status 0 on SIGTERM.
set -euo pipefail
stereod=$1 heightmap=$2 sim=$3 dump=$4
tmp=$(mktemp -d)
tag=t$$
west=${tag}w east=${tag}e hmring=${tag}hm
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -f "/dev/shm/stereod.$west" "/dev/shm/stereod.$east" "/dev/shm/stereod.$hmring"
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for f in stereod.log heightmap.log; do echo "--- $f"; tail -n 30 "$tmp/$f" || true; done
  exit 1
}

# The demo's stand geometry at 480 x 270 (so that llvmpipe keeps up with both pairs at
# 1 frame/s), 22 players. The clip is rendered at 25 frames/s and played at 1 frame/s, a
# slow-motion replay: the players move as far between two frames as at 25 frames/s, which
# is what the tracker's gate is made for.
cat > "$tmp/sim.conf" <<CONF
[output]
frames=60
fps=25
format=jpg
seed=3
[scene]
players=22
[pair $west]
position=-26,-52,16
look_at=-26,-8,0
baseline=3
focal=525
width=480
height=270
noise=1.5
[pair $east]
position=26,-52,16
look_at=26,-8,0
baseline=3
focal=525
width=480
height=270
noise=1.5
CONF
"$sim" --config "$tmp/sim.conf" --out "$tmp/clip" --quiet

pair_conf() { # NAME
  cat <<CONF
[pair $1]
left=imagesequencesrc location=$tmp/clip/$1/left/%06d.jpg framerate=1/1 ! identity sync=true
right=imagesequencesrc location=$tmp/clip/$1/right/%06d.jpg framerate=1/1 ! identity sync=true
width=480
height=270
fps=1
calibration=$tmp/clip/$1/calib.conf
outputs=disparity;confidence
noise_floor=2
reconnect_min_ms=200
reconnect_max_ms=1000
CONF
}
{ printf '[daemon]\nstats_interval=2\n'; pair_conf "$west"; pair_conf "$east"; } \
  > "$tmp/stereod.conf"
cat > "$tmp/heightmap.conf" <<CONF
[heightmap]
tolerance_ms=300
wait_ms=500
stale_ms=2500
socket=$tmp/players.sock
ring=$hmring
[pair $west]
[pair $east]
CONF

"$stereod" --config "$tmp/stereod.conf" > "$tmp/stereod.log" 2>&1 &
pids+=($!)
stereod_pid=$!
"$heightmap" --config "$tmp/heightmap.conf" --json > "$tmp/players.jsonl" 2> "$tmp/heightmap.log" &
pids+=($!)
hm_pid=$!

# STEREOD_TEST_KEEP=1 keeps the folder (clip, configs, logs, JSON lines) to look at
[ -n "${STEREOD_TEST_KEEP:-}" ] &&
  trap 'for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; echo "kept $tmp"' EXIT
# the socket: a reader that keeps the first 3 lines it is served
for _ in $(seq 300); do [ -S "$tmp/players.sock" ] && break; sleep 0.1; done
[ -S "$tmp/players.sock" ] || fail "no socket $tmp/players.sock"
timeout 60 /usr/bin/python3 - "$tmp/players.sock" > "$tmp/socket.jsonl" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
f = s.makefile("r")
for _ in range(3):
    sys.stdout.write(f.readline())
PY
sock_pid=$!

count() { # PATTERN: JSON lines matching it
  grep -c -- "$1" "$tmp/players.jsonl" || true
}
both="\"pairs\":\[\"$west\",\"$east\"\]"
for _ in $(seq 600); do   # 60 s at most
  [ "$(count "$both")" -ge 7 ] && break
  kill -0 "$stereod_pid" 2>/dev/null || fail "stereod died"
  kill -0 "$hm_pid" 2>/dev/null || fail "stereod-heightmap died"
  sleep 0.1
done
[ "$(count "$both")" -ge 7 ] || fail "fewer than 7 lines fused from both pairs"
wait "$sock_pid" || fail "the socket did not serve 3 lines"
[ "$(wc -l < "$tmp/socket.jsonl")" -eq 3 ] || fail "socket: $(wc -l < "$tmp/socket.jsonl") lines"
"$dump" "$hmring" --count 1 --timeout 10 > "$tmp/dump.txt" 2>&1 ||
  fail "height-map ring: $(cat "$tmp/dump.txt")"
grep -q "1110x740" "$tmp/dump.txt" || fail "height-map ring: $(cat "$tmp/dump.txt")"

# east dies
mv "$tmp/clip/$east" "$tmp/clip/$east.gone"
alone="\"pairs\":\[\"$west\"\]"
for _ in $(seq 300); do   # 30 s at most
  [ "$(count "$alone")" -ge 5 ] && break
  kill -0 "$stereod_pid" 2>/dev/null || fail "stereod died when east's camera went away"
  sleep 0.1
done
[ "$(count "$alone")" -ge 5 ] || fail "no lines fused from west alone after east stopped"
sleep 2   # a reconnection attempt or two
kill -0 "$stereod_pid" 2>/dev/null || fail "stereod died"
grep -q "$east" "$tmp/stereod.log" || fail "stereod said nothing about $east"

kill -TERM "$hm_pid"
hm_status=0
wait "$hm_pid" || hm_status=$?
kill -TERM "$stereod_pid"
st_status=0
wait "$stereod_pid" || st_status=$?
pids=()
[ "$hm_status" -eq 0 ] || fail "stereod-heightmap exit status $hm_status"
[ "$st_status" -eq 0 ] || fail "stereod exit status $st_status"

# the lines: players in both halves while both pairs were fused, ids kept from line to
# line, west's players found when west was alone
/usr/bin/python3 - "$tmp/players.jsonl" "$tmp/socket.jsonl" "$west" "$east" \
  "$tmp/clip/players.csv" <<'PY' || fail "JSON lines"
import csv, json, math, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
served = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
west, east = sys.argv[3], sys.argv[4]
truth = {}
for r in csv.DictReader(open(sys.argv[5])):
    truth.setdefault(int(r["frame"]), []).append((float(r["x"]), float(r["y"])))
both = [l for l in lines if l["pairs"] == [west, east]]
alone = [l for l in lines if l["pairs"] == [west]]
for l in served:
    assert l in lines, "a socket line that stdout did not carry: %s" % l
frames = [l["frame"] for l in lines]
assert frames == sorted(frames) and len(set(frames)) == len(frames), frames
times = [l["time_ns"] for l in lines]
assert times == sorted(times), "capture times go back"
def halves(l):
    return (sum(p["x"] < -3 for p in l["players"]), sum(p["x"] > 3 for p in l["players"]))
# tracks are reported after 2 frames: skip the first lines of each phase
for l in both[2:]:
    w, e = halves(l)
    assert w >= 3 and e >= 3, "both pairs fused but players west %d east %d" % (w, e)
    for p in l["players"]:
        assert -56 < p["x"] < 56 and -38 < p["y"] < 38, p
        assert 0.5 <= p["height"] < 3.2 and p["area"] > 0, p
for l in alone[3:]:   # the first ones may still hold east's tracks
    w, e = halves(l)
    assert w >= 3, "west alone: %d players in west's half" % w
# positions: the clip frame a line shows is not known here (capture times are the replay's
# wall clock, and consecutive frames at 25 frames/s differ by 0.36 m at most), so every
# player must be within 1 m of where a real player was in the frames played so far (up to
# 60): most of each line's players are, a false detection is rarely near a player's path
shares = []
paths = [xy for k in truth for xy in truth[k]]
for l in both[2:] + alone[3:]:
    near = sum(any(math.hypot(p["x"] - x, p["y"] - y) < 1.0 for x, y in paths)
               for p in l["players"])
    share = near / max(len(l["players"]), 1)
    shares.append("%.0f%%" % (100 * share))
    assert share >= 0.7, "line %d: %.0f %% of the players within 1 m of a player's path" % (
        l["frame"], 100 * share)
print("players within 1 m of a player's path, per line:", " ".join(shares))
kept = []
for a, b in zip(both[2:], both[3:]):
    ids = {p["id"] for p in a["players"]}
    kept.append(len(ids & {p["id"] for p in b["players"]}) / max(len(ids), 1))
assert kept and min(kept) >= 0.5, "ids kept from line to line: %s" % kept
print("%d lines from both pairs (players %s), %d from west alone (players %s); ids kept "
      "%.0f-%.0f %%" % (len(both), [len(l["players"]) for l in both], len(alone),
      [len(l["players"]) for l in alone], 100 * min(kept), 100 * max(kept)))
PY
echo "ok: $(grep -c . "$tmp/players.jsonl") JSON lines"
