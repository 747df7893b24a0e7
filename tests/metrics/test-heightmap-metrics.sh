#!/usr/bin/env bash
# stereod-heightmap's /metrics, on the real program fusing two test rings (hm-test-writer:
# 64x48 at 10 Hz each, a camera looking down at the centre spot):
#   1. metrics= that is not an address: --check-config exits 78 naming file, group and key;
#   2. metrics=127.0.0.1:0: "metrics on http://127.0.0.1:PORT/metrics" is logged, and two
#      scrapes 3 s apart pass promcheck.py (the whole text format, strictly), with every
#      family of heightmap.h there, the counters not going down, the fused frames, the
#      builder's histogram and both pairs' fused frames moving; both rings open, the
#      pairs per fused frame 2 on average;
#   3. a second builder (its own socket and ring) on the same metrics port exits 1 with
#      "cannot listen on 127.0.0.1:PORT", and the first one keeps serving;
#   4. a --no-publish run beside it serves no metrics (and exits 0);
# then SIGTERM: status 0, and the port is free again. Needs EGL (llvmpipe will do):
# skipped (77) when no EGL device opens, unless STEREOD_REQUIRE_GPU=1.
#   test-heightmap-metrics.sh STEREOD_HEIGHTMAP HM_TEST_WRITER PROMCHECK
set -euo pipefail
bin=$1 writer=$2 promcheck=$3
py=/usr/bin/python3
tmp=$(mktemp -d)
tag=hmm$$
a=${tag}a b=${tag}b hmring=${tag}hm
pid= a_pid= b_pid=
cleanup() {
  for p in $pid $a_pid $b_pid; do kill -KILL "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -f /dev/shm/stereod.$tag*
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  echo "--- stderr of stereod-heightmap:"
  tail -n 40 "$tmp/err" 2>/dev/null || true
  exit 1
}
alive() { [ -r "/proc/$1/stat" ] && read -r _ _ state _ < "/proc/$1/stat" && [ "$state" != Z ]; }

conf() { # METRICS SOCKET RING
  cat <<CONF
[heightmap]
x0=-8
x1=8
y0=-6
y1=6
cell=0.2
tolerance_ms=30
wait_ms=200
stale_ms=1500
socket=$2
ring=$3
metrics=$1
[pair west]
ring=$a
[pair east]
ring=$b
CONF
}

# 1. a bad address
conf "127.0.0.1:99999" "$tmp/p.sock" "$hmring" > "$tmp/bad.conf"
set +e
"$bin" --config "$tmp/bad.conf" --check-config > /dev/null 2> "$tmp/bad.err"
st=$?
set -e
[ "$st" = 78 ] || fail "metrics=127.0.0.1:99999: exit status $st, not 78"
grep -qF "$tmp/bad.conf: [heightmap] metrics: '127.0.0.1:99999': the port is not a number" \
  "$tmp/bad.err" || fail "the error does not name file, group and key: $(cat "$tmp/bad.err")"

# 2. two rings fused, scraped
"$writer" "$a" 64 48 > "$tmp/a.out" &
a_pid=$!
"$writer" "$b" 64 48 > "$tmp/b.out" &
b_pid=$!
conf "127.0.0.1:0" "$tmp/p.sock" "$hmring" > "$tmp/hm.conf"
"$bin" --config "$tmp/hm.conf" > /dev/null 2> "$tmp/err" &
pid=$!
url=
end=$((SECONDS + 60))
until [ -n "$url" ] && [ -S "$tmp/p.sock" ]; do
  url=$(sed -n "s/.*metrics on \(http:[^ ]*\)$/\1/p" "$tmp/err" 2>/dev/null | head -n 1 || true)
  if ! alive "$pid"; then
    if grep -qE "no EGL device|no display \(|eglInitialize failed|no platform displays" \
         "$tmp/err" && [ "${STEREOD_REQUIRE_GPU:-0}" = 0 ]; then
      echo "SKIP: no EGL device; set STEREOD_REQUIRE_GPU=1 to fail instead"
      exit 77
    fi
    fail "stereod-heightmap did not start"
  fi
  [ "$SECONDS" -lt "$end" ] || fail "not started within 60 s"
  sleep 0.1
done
port=${url#http://127.0.0.1:}
port=${port%/metrics}
echo "serving $url"

"$py" - "$promcheck" "$url" <<'PY' || fail "the metrics"
import importlib.util, sys, time
spec = importlib.util.spec_from_file_location("promcheck", sys.argv[1])
pc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pc)
url = sys.argv[2]
# the rings first: until both are open and fused a few times
deadline = time.time() + 60
while True:
    fams = pc.parse(pc.scrape(url))
    fused = fams["stereod_heightmap_pair_frames_fused_total"].series()
    if min(fused.values()) >= 3:
        break
    if time.time() > deadline:
        raise SystemExit("FAIL: both pairs not fused 3 times within 60 s: %s" % fused)
    time.sleep(0.5)
first = fams
time.sleep(3)
second = pc.parse(pc.scrape(url))
pc.compare(first, second)
expected = {
    "stereod_heightmap_build_info": "gauge",
    "stereod_heightmap_fused_frames_total": "counter",
    "stereod_heightmap_pairs_per_fused_frame": "histogram",
    "stereod_heightmap_players": "gauge",
    "stereod_heightmap_builder_seconds": "histogram",
    "stereod_heightmap_pair_frames_fused_total": "counter",
    "stereod_heightmap_pair_frames_refused_total": "counter",
    "stereod_heightmap_pair_ring_open": "gauge",
    "stereod_heightmap_socket_clients": "gauge",
}
for name, type_ in expected.items():
    assert name in second, "%s not served" % name
    assert second[name].type == type_, "%s is a %s" % (name, second[name].type)
for name in ("stereod_heightmap_fused_frames_total", "stereod_heightmap_builder_seconds",
             "stereod_heightmap_pairs_per_fused_frame"):
    assert pc.total(second[name]) > pc.total(first[name]), "%s did not move" % name
for labels, v in second["stereod_heightmap_pair_frames_fused_total"].series().items():
    before = first["stereod_heightmap_pair_frames_fused_total"].series()[labels]
    assert v > before, "%s did not move for %s" % (v, labels)
pairs = {dict(l)["pair"] for l in second["stereod_heightmap_pair_ring_open"].series()}
assert pairs == {"west", "east"}, pairs
assert all(v == 1 for v in second["stereod_heightmap_pair_ring_open"].series().values())
buckets, s, c = second["stereod_heightmap_pairs_per_fused_frame"].series()[()]
assert c > 0 and 1.5 <= s / c <= 2.0, "pairs per fused frame %s / %s" % (s, c)
n = second["stereod_heightmap_fused_frames_total"].series()[()]
print("ok: %d families, %d fused frames, %.2f pairs per fused frame" % (len(second), n, s / c))
PY

# 3. the same port for a second builder
conf "127.0.0.1:$port" "$tmp/q.sock" "${hmring}2" > "$tmp/second.conf"
set +e
timeout 60 "$bin" --config "$tmp/second.conf" > /dev/null 2> "$tmp/second.err"
st=$?
set -e
[ "$st" = 1 ] || fail "a second builder on port $port: exit status $st, not 1"
grep -qF "cannot listen on 127.0.0.1:$port" "$tmp/second.err" ||
  fail "the second builder does not say why: $(cat "$tmp/second.err")"
"$py" "$promcheck" "$url" --interval 1 --moving stereod_heightmap_fused_frames_total ||
  fail "the first builder stopped serving"

# 4. --no-publish beside it: no metrics
timeout 60 "$bin" --config "$tmp/hm.conf" --no-publish --json --frames 3 > /dev/null \
  2> "$tmp/np.err" || fail "--no-publish run: $(cat "$tmp/np.err")"
if grep -q "metrics on" "$tmp/np.err"; then fail "--no-publish served metrics"; fi

kill -TERM "$pid"
st=0
wait "$pid" || st=$?
pid=
[ "$st" = 0 ] || fail "exit status $st after SIGTERM"
if "$py" -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 2)" \
     "$port" 2>/dev/null; then
  fail "port $port still answers after the builder stopped"
fi
echo "ok"
