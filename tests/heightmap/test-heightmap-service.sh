#!/usr/bin/env bash
# stereod and stereod-heightmap as an operator runs them, on a stereod-sim clip of two
# camera pairs (JPEG files played through GStreamer), in two parts:
#  1. offline (stereod --offline, a recorded match re-processed): stereod publishes every
#     frame pair of both pairs, as fast as the GPU goes, and exits 0 at the end of the
#     clip; its capture times are the replay clock's (one start + the files' timestamps),
#     so frame k of west and of east carry the same time, and stereod-heightmap fuses them
#     (tolerance 20 ms: only the same instant). Checked: lines fused from both pairs for
#     most frames, players in both halves of the pitch, every player near a real one's
#     path, the same ids from line to line (tracks), the socket serves the same lines, the
#     height-map ring carries the grid, both processes exit 0.
#  2. live (stereod in real time, the operator's setup): the clip plays at 1 frame/s;
#     lines are fused from both pairs; then the east camera "dies" (its image folder
#     disappears): stereod keeps trying to reconnect it while west runs on, and the height
#     map goes on from west alone, the JSON lines saying so, still finding west's players
#     (each fused frame's own detections: see the height map's configuration below);
#     SIGTERM ends both with status 0.
# The fusion and accuracy checks are in the offline part because the live part drops
# frames when the GPU is slower than the cameras (newest wins: on llvmpipe under load the
# two pairs' GPU work often lands on different frames); offline nothing is dropped, so
# those checks do not depend on the machine's speed. Every wait has a deadline many times
# the expected time.
#   test-heightmap-service.sh STEREOD STEREOD_HEIGHTMAP STEREOD_SIM STEREOD_DUMP
set -euo pipefail
stereod=$1 heightmap=$2 sim=$3 dump=$4
tmp=$(mktemp -d)
tag=t$$
pids=()
rings=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for r in "${rings[@]}"; do rm -f "/dev/shm/stereod.$r"; done
  rm -rf "$tmp"
}
trap cleanup EXIT
# STEREOD_TEST_KEEP=1 keeps the folder (clip, configs, logs, JSON lines) to look at
[ -n "${STEREOD_TEST_KEEP:-}" ] &&
  trap 'for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; echo "kept $tmp"' EXIT
fail() {
  echo "FAIL: $*"
  for f in "$tmp"/*.log; do echo "--- $f"; tail -n 30 "$f" || true; done
  exit 1
}

# The demo's stand geometry at 480 x 270, 22 players, 40 frames rendered at 25 frames/s.
cat > "$tmp/sim.conf" <<CONF
[output]
frames=40
fps=25
format=jpg
seed=3
[scene]
players=22
[pair west]
position=-26,-52,16
look_at=-26,-8,0
baseline=3
focal=525
width=480
height=270
noise=1.5
[pair east]
position=26,-52,16
look_at=26,-8,0
baseline=3
focal=525
width=480
height=270
noise=1.5
CONF
"$sim" --config "$tmp/sim.conf" --out "$tmp/clip" --quiet

pair_conf() { # RING CLIP_NAME FRAMERATE EXTRA_SOURCE_PROPERTIES
  cat <<CONF
[pair $1]
left=imagesequencesrc location=$tmp/clip/$2/left/%06d.jpg framerate=$3 $4 ! identity sync=true
right=imagesequencesrc location=$tmp/clip/$2/right/%06d.jpg framerate=$3 $4 ! identity sync=true
width=480
height=270
fps=${3%/1}
calibration=$tmp/clip/$2/calib.conf
outputs=disparity;confidence
noise_floor=2
reconnect_min_ms=200
reconnect_max_ms=1000
CONF
}
heightmap_conf() { # WEST EAST HMRING TOLERANCE_MS WAIT_MS STALE_MS SOCKET EXTRA_KEYS
  cat <<CONF
[heightmap]
tolerance_ms=$4
wait_ms=$5
stale_ms=$6
ring=$3
${7:+socket=$7}
$8
[pair $1]
[pair $2]
CONF
}
count() { # FILE PATTERN: JSON lines matching it
  grep -c -- "$2" "$1" || true
}
stop() { # PID NAME: SIGTERM, exit status 0 within 30 s
  kill -TERM "$1" 2>/dev/null || true
  for _ in $(seq 300); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  local status=0
  wait "$1" || status=$?
  [ "$status" -eq 0 ] || fail "$2 exit status $status"
}

# ---------------------------------------------------------------- 1. offline
west=${tag}ow east=${tag}oe hmring=${tag}ohm
rings+=("$west" "$east" "$hmring")
frames=30   # the first 30 frames of the clip (1.2 s of play)
extra="stop-index=$((frames - 1))"
{ printf '[daemon]\nmode=offline\nstats_interval=5\n'
  pair_conf "$west" west 25/1 "$extra"; pair_conf "$east" east 25/1 "$extra"; } \
  > "$tmp/offline.conf"
# every frame of a pair reaches the builder (stereod publishes them in order, both pairs
# in step): it waits as long as the GPU may take for the other pair's frame of the
# same instant
heightmap_conf "$west" "$east" "$hmring" 20 10000 60000 "$tmp/players.sock" "" \
  > "$tmp/offline-heightmap.conf"
"$heightmap" --config "$tmp/offline-heightmap.conf" --json > "$tmp/offline.jsonl" \
  2> "$tmp/offline-heightmap.log" &
pids+=($!)
hm_pid=$!
for _ in $(seq 300); do [ -S "$tmp/players.sock" ] && break; sleep 0.1; done
[ -S "$tmp/players.sock" ] || fail "no socket $tmp/players.sock"
# the socket: a reader that keeps the first 3 lines it is served
timeout 600 /usr/bin/python3 - "$tmp/players.sock" > "$tmp/socket.jsonl" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
f = s.makefile("r")
for _ in range(3):
    sys.stdout.write(f.readline())
PY
sock_pid=$!
"$stereod" --config "$tmp/offline.conf" > "$tmp/offline-stereod.log" 2>&1 &
st_pid=$!
pids+=($st_pid)
for _ in $(seq 6000); do kill -0 "$st_pid" 2>/dev/null || break; sleep 0.1; done   # 600 s
kill -0 "$st_pid" 2>/dev/null && fail "stereod --offline did not end in 600 s"
st_status=0
wait "$st_pid" || st_status=$?
[ "$st_status" -eq 0 ] || fail "stereod --offline exit status $st_status"
grep -q "offline: every stream ended" "$tmp/offline-stereod.log" || fail "stereod: no end line"
grep -q "$west $frames pairs, $east $frames pairs published" "$tmp/offline-stereod.log" ||
  fail "stereod did not publish $frames pairs of each pair"
# the builder fuses what is still in the rings (the last frames), then is stopped
both="\"pairs\":\[\"$west\",\"$east\"\]"
for _ in $(seq 100); do
  last=$(tail -n 1 "$tmp/offline.jsonl" 2>/dev/null || true)
  sleep 0.3
  [ "$last" = "$(tail -n 1 "$tmp/offline.jsonl" 2>/dev/null || true)" ] && break
done
wait "$sock_pid" || fail "the socket did not serve 3 lines"
[ "$(wc -l < "$tmp/socket.jsonl")" -eq 3 ] || fail "socket: $(wc -l < "$tmp/socket.jsonl") lines"
"$dump" "$hmring" --count 1 --timeout 10 > "$tmp/dump.txt" 2>&1 ||
  fail "height-map ring: $(cat "$tmp/dump.txt")"
grep -q "1110x740" "$tmp/dump.txt" || fail "height-map ring: $(cat "$tmp/dump.txt")"
stop "$hm_pid" stereod-heightmap
pids=()
# The builder takes the newest frame of each ring: when it is slower than stereod it
# skips frames (the rings never wait for readers), so how many of the clip's frames it
# fuses depends on the two programs' speeds; that it fuses both pairs when it fuses does
# not (the first line may come before the second ring opened).
n_lines=$(grep -c . "$tmp/offline.jsonl" || true)
n_both=$(count "$tmp/offline.jsonl" "$both")
echo "offline: $n_both of $n_lines lines ($frames frames published per pair) fused from both pairs"
[ "$n_both" -ge 7 ] || fail "offline: only $n_both lines fused from both pairs"
[ $((n_both * 10)) -ge $(((n_lines - 1) * 9)) ] ||
  fail "offline: $n_both of $n_lines lines fused from both pairs"

# ---------------------------------------------------------------- 2. live
lwest=${tag}lw least=${tag}le lhmring=${tag}lhm
rings+=("$lwest" "$least" "$lhmring")
{ printf '[daemon]\nstats_interval=2\n'; pair_conf "$lwest" west 1/1 ""
  pair_conf "$least" east 1/1 ""; } > "$tmp/live.conf"
# A fused frame waits for the other pair's frame while the GPU finishes it; a pair that
# published nothing for 15 s is stopped. When the GPU is slower than the cameras (llvmpipe
# under load: seconds per frame pair) the frames processed are several clip frames apart,
# farther than a track follows: here every fused frame reports its blobs (confirm=1,
# max_missed=0); the tracks are the offline part's.
heightmap_conf "$lwest" "$least" "$lhmring" 100 10000 15000 "" \
  "$(printf 'confirm=1\nmax_missed=0')" > "$tmp/live-heightmap.conf"
"$stereod" --config "$tmp/live.conf" > "$tmp/live-stereod.log" 2>&1 &
st_pid=$!
pids+=($st_pid)
"$heightmap" --config "$tmp/live-heightmap.conf" --json > "$tmp/live.jsonl" \
  2> "$tmp/live-heightmap.log" &
hm_pid=$!
pids+=($hm_pid)
lboth="\"pairs\":\[\"$lwest\",\"$least\"\]"
for _ in $(seq 1200); do   # 120 s at most
  [ "$(count "$tmp/live.jsonl" "$lboth")" -ge 3 ] && break
  kill -0 "$st_pid" 2>/dev/null || fail "stereod died"
  kill -0 "$hm_pid" 2>/dev/null || fail "stereod-heightmap died"
  sleep 0.1
done
[ "$(count "$tmp/live.jsonl" "$lboth")" -ge 3 ] || fail "live: fewer than 3 lines fused from both pairs"
# east dies
mv "$tmp/clip/east" "$tmp/clip/east.gone"
alone="\"pairs\":\[\"$lwest\"\]"
for _ in $(seq 1200); do   # 120 s at most
  [ "$(count "$tmp/live.jsonl" "$alone")" -ge 5 ] && break
  kill -0 "$st_pid" 2>/dev/null || fail "stereod died when east's camera went away"
  sleep 0.1
done
[ "$(count "$tmp/live.jsonl" "$alone")" -ge 5 ] || fail "no lines fused from west alone after east stopped"
sleep 2   # a reconnection attempt or two
kill -0 "$st_pid" 2>/dev/null || fail "stereod died"
grep -q "pair $least: source failed" "$tmp/live-stereod.log" || fail "stereod said nothing about $least"
stop "$hm_pid" stereod-heightmap
stop "$st_pid" stereod
pids=()

# the lines: players in both halves while both pairs were fused, ids kept from line to
# line, every player near a real player's path, west's players found when west was alone
/usr/bin/python3 - "$tmp/offline.jsonl" "$tmp/socket.jsonl" "$west" "$east" \
  "$tmp/clip/players.csv" "$tmp/live.jsonl" "$lwest" "$least" <<'PY' || fail "JSON lines"
import csv, json, math, sys
def load(path):
    return [json.loads(l) for l in open(path) if l.strip()]
lines, served = load(sys.argv[1]), load(sys.argv[2])
west, east = sys.argv[3], sys.argv[4]
live, lwest, least = load(sys.argv[6]), sys.argv[7], sys.argv[8]
truth = {}
for r in csv.DictReader(open(sys.argv[5])):
    truth.setdefault(int(r["frame"]), []).append((float(r["x"]), float(r["y"])))
paths = [xy for k in truth for xy in truth[k]]
for l in served:
    assert l in lines, "a socket line that stdout did not carry: %s" % l
for name, ls in (("offline", lines), ("live", live)):
    frames = [l["frame"] for l in ls]
    assert frames == sorted(frames) and len(set(frames)) == len(frames), (name, frames)
    times = [l["time_ns"] for l in ls]
    assert times == sorted(times), "%s: capture times go back" % name
def halves(l):
    return (sum(p["x"] < -3 for p in l["players"]), sum(p["x"] > 3 for p in l["players"]))
def near_share(l, players=None):
    players = l["players"] if players is None else players
    near = sum(any(math.hypot(p["x"] - x, p["y"] - y) < 1.0 for x, y in paths)
               for p in players)
    return near / max(len(players), 1)
both = [l for l in lines if l["pairs"] == [west, east]]
# replay clock: the same instant in both pairs, frames of the clip 40 ms apart
steps = sorted({b["time_ns"] - a["time_ns"] for a, b in zip(both, both[1:])})
assert all(s % 40000000 == 0 for s in steps), "offline steps not whole frames: %s" % steps[:5]
# tracks are reported after 2 frames: skip the first lines
shares = []
for l in both[2:]:
    w, e = halves(l)
    assert w >= 3 and e >= 3, "both pairs fused but players west %d east %d" % (w, e)
    for p in l["players"]:
        assert -56 < p["x"] < 56 and -38 < p["y"] < 38, p
        assert 0.5 <= p["height"] < 3.2 and p["area"] > 0, p
    shares.append(near_share(l))
    assert shares[-1] >= 0.7, "frame %d: %.0f %% of the players within 1 m of a path" % (
        l["frame"], 100 * shares[-1])
kept = []
for a, b in zip(both[2:], both[3:]):
    ids = {p["id"] for p in a["players"]}
    kept.append(len(ids & {p["id"] for p in b["players"]}) / max(len(ids), 1))
assert kept and min(kept) >= 0.5, "ids kept from line to line: %s" % kept
lboth = [l for l in live if l["pairs"] == [lwest, least]]
alone = [l for l in live if l["pairs"] == [lwest]]
assert len(lboth) >= 3, "live: %d lines from both pairs" % len(lboth)
# west alone: west's players (the players in the west half, x < 0, that west sees)
for l in alone[3:]:
    w, e = halves(l)
    assert w >= 3, "west alone: %d players in west's half" % w
    share = near_share(l, [p for p in l["players"] if p["x"] < 0])
    assert share >= 0.7, "west alone, frame %d: %.0f %% of west's players near a path" % (
        l["frame"], 100 * share)
print("offline: %d lines from both pairs (players %s), ids kept %.0f-%.0f %%, players near "
      "a path %.0f-%.0f %%; live: %d lines from both pairs, %d from west alone (players %s)"
      % (len(both), [len(l["players"]) for l in both], 100 * min(kept), 100 * max(kept),
         100 * min(shares), 100 * max(shares), len(lboth), len(alone),
         [len(l["players"]) for l in alone]))
PY
echo "ok: $(grep -c . "$tmp/offline.jsonl") offline and $(grep -c . "$tmp/live.jsonl") live JSON lines"
