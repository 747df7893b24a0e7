#!/usr/bin/env bash
# bench/stadium-bench.sh end to end on a tiny random stadium (seed 1, 2 pairs, scale 0.1:
# 128x72 to 384x216 images, 5 frames): stereod-sim --stadium-seed writes the clip and the
# configs, stereod --offline plays them through GStreamer, stereod-heightmap --json fuses
# the rings, bench/stadium-score.py scores the lines. Checked: the command line's errors
# (exit 64), the same seed renders the same files, the generated files (22 players a
# frame, the pairs that see them among the stadium's, one [pair] per camera pair in
# offline mode), every frame published by both pairs, and the scorer's output: a
# summary line whose numbers parse and lie in their ranges, recall above 0, every
# player of every scored line counted once, and --aggregate of the one seed giving the
# same summary; a second run on the kept clip renders nothing and writes the configs
# again (--configs-only), with STADIUM_BUILDER's keys in every builder's configuration
# and a variant's beside them. Logic and counts only: nothing about speed.
#   test-stadium-bench.sh SOURCE_ROOT BUILD_ROOT
set -euo pipefail
src=$1 build=$2
sim=$build/tools/stereod-sim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; for f in "$tmp"/run/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }; done; exit 1; }

# the command line
for bad in "--stadium-seed 1" "--stadium-seed 1 --out $tmp/x --pairs 9" \
           "--stadium-seed 1 --out $tmp/x --scale 2" "--config $src/config/demo/sim.conf --scale 0.5" \
           "--stadium-seed 1 --out $tmp/x --ring-prefix a/b"; do
  status=0
  $sim $bad > /dev/null 2>&1 || status=$?
  [ "$status" -eq 64 ] || fail "stereod-sim $bad: exit status $status, not 64"
done

# a seed is one stadium: the description and the rendered files
args=(--stadium-seed 1 --pairs 2 --scale 0.1 --frames 3 --threads 2 --quiet)
[ "$($sim "${args[@]}" --describe)" = "$($sim "${args[@]}" --describe)" ] || fail "--describe differs"
[ "$($sim "${args[@]}" --describe)" != "$($sim --stadium-seed 2 --pairs 2 --scale 0.1 --frames 3 --describe)" ] ||
  fail "seeds 1 and 2 describe the same stadium"
$sim "${args[@]}" --out "$tmp/a"
$sim "${args[@]}" --out "$tmp/b" --threads 1
(cd "$tmp/a" && find . -type f ! -name '*.conf' | sort | xargs md5sum) > "$tmp/a.md5"
(cd "$tmp/b" && find . -type f ! -name '*.conf' | sort | xargs md5sum) > "$tmp/b.md5"
[ "$(wc -l < "$tmp/a.md5")" -eq $((2 * 3 * 3 + 2)) ] || fail "files: $(wc -l < "$tmp/a.md5")"
diff "$tmp/a.md5" "$tmp/b.md5" > /dev/null || fail "the same seed rendered different files"

# the run
status=0
STADIUM_BUILD=$build STADIUM_SCALE=0.1 STADIUM_FRAMES=5 STADIUM_DIR=$tmp/run \
  STADIUM_JSON=$tmp/score.json STADIUM_TIMEOUT=900 \
  bash "$src/bench/stadium-bench.sh" 1 2 > "$tmp/out.txt" 2>&1 || status=$?
cat "$tmp/out.txt"
[ "$status" -eq 0 ] || fail "stadium-bench.sh exit status $status"
clip=$tmp/run/clip
grep -q '^mode=offline$' "$clip/stereod.conf" || fail "stereod.conf is not offline"
grep -q '^offline_speed=1$' "$clip/stereod.conf" || fail "stereod.conf: not offline_speed=1"
# the engine's settings are config/stereod.conf's (every pair there and here), the demo's too
/usr/bin/python3 - "$src/config/stereod.conf" "$clip/stereod.conf" \
  "$src/config/demo/stereod.conf.in" <<'PY' || fail "the engine's settings differ from config/stereod.conf's"
import configparser, sys
keys = ("max_disparity", "window", "smoothing", "noise_floor", "refine", "coarse_fallback",
        "ground_margin")
def pairs(path):
    cp = configparser.ConfigParser(interpolation=None, strict=False)
    cp.read_string(open(path).read().replace("%", "%%"))
    return {g: {k: cp[g].get(k) for k in keys} for g in cp.sections() if g.startswith("pair ")}
ref = pairs(sys.argv[1])
want = list(ref.values())[0]
assert all(v == want for v in ref.values()), ref
assert want["noise_floor"] == "2" and want["window"] == "2" and want["smoothing"] == "1", want
assert want["coarse_fallback"] == "0.01", want
assert want["ground_margin"] == "1", want
assert want["max_disparity"] == "auto", want
for path in sys.argv[2:]:
    for g, v in pairs(path).items():
        assert v == want, (path, g, v, want)
PY
[ "$(grep -c '^\[pair ' "$clip/stereod.conf")" -eq 2 ] || fail "stereod.conf: not 2 pairs"
[ "$(grep -c '^\[pair ' "$clip/heightmap.conf")" -eq 2 ] || fail "heightmap.conf: not 2 pairs"
grep -Eq "stereod: offline: every stream ended .*-p1 5 pairs, .*-p2 5 pairs published" "$tmp/out.txt" ||
  fail "stereod did not publish the 5 frames of both pairs"

/usr/bin/python3 - "$clip/players.csv" "$tmp/out.txt" "$tmp/score.json" "$src/bench/stadium-score.py" <<'PY' ||
import csv, json, re, subprocess, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 22 * 5, "players.csv: %d rows" % len(rows)
for r in rows:
    assert set(p for p in r["seen_by"].split(";") if p) <= {"p1", "p2"}, r
    assert 1.68 <= float(r["height"]) <= 1.95 and 0.21 <= float(r["radius"]) <= 0.27, r
    assert float(r["nearest_m"]) > 0, r
assert any(r["seen_by"] for r in rows), "no player seen by any pair"
out = open(sys.argv[2]).read()
m = re.search(r"^# summary: players seed 1 \(2 pairs\): recall ([0-9.]+) % \(seen\), "
              r"recall ([0-9.]+) % \(all\), RMSE ([0-9.]+) m, false ([0-9.]+) per frame$",
              out, re.M)
assert m, "no summary line"
seen, all_, rmse, false = map(float, m.groups())
assert 0 < seen <= 100 and 0 < all_ <= seen + 1e-9, (seen, all_)
assert 0 < rmse < 1.0 and false >= 0, (rmse, false)
scored = int(re.search(r"^# (\d+) lines scored of (\d+)$", out, re.M).group(1))
lines = int(re.search(r"^# (\d+) lines scored of (\d+)$", out, re.M).group(2))
assert 1 <= scored <= lines <= 5, (scored, lines)
row = re.search(r"^all\s+(\d+)\s", out, re.M)
assert int(row.group(1)) == 22 * scored, "players counted %s, lines %d" % (row.group(1), scored)
bands = [int(x) for x in re.findall(r"^\d+(?:-\d+)?\+? m\s+(\d+)\s", out, re.M)]
assert len(bands) == 4 and sum(bands) == 22 * scored, bands
j = json.load(open(sys.argv[3]))
assert j["scored"] == scored and j["pairs"] == 2
agg = subprocess.run([sys.executable, sys.argv[4], "--aggregate", sys.argv[3], "--label",
                      "seed 1 (2 pairs)"], capture_output=True, text=True, check=True).stdout
assert m.group(0) in agg.splitlines(), agg
print("ok: recall %.1f %% (seen), %.1f %% (all), RMSE %.3f m, false %.2f per frame, "
      "%d of %d lines scored" % (seen, all_, rmse, false, scored, lines))
PY
  fail "the scorer's output"

# a kept clip: its images stay, its configs are this build's again (a clip rendered by an
# older build, here one whose stereod.conf lost a key, plays with the stadium setting of now)
sum_before=$(cd "$clip" && find . -type f ! -name '*.conf' | sort | xargs md5sum | md5sum)
cp "$clip/stereod.conf" "$tmp/stereod.conf.first"
sed -i '/^ground_margin=/d' "$clip/stereod.conf"
status=0
STADIUM_BUILD=$build STADIUM_SCALE=0.1 STADIUM_FRAMES=5 STADIUM_DIR=$tmp/run STADIUM_TIMEOUT=900 \
  STADIUM_BUILDER=wait_ms=30000 STADIUM_VARIANTS="v:min_points=3" \
  bash "$src/bench/stadium-bench.sh" 1 2 > "$tmp/out2.txt" 2>&1 || status=$?
[ "$status" -eq 0 ] || { cat "$tmp/out2.txt"; fail "stadium-bench.sh on the kept clip: exit status $status"; }
[ "$(cd "$clip" && find . -type f ! -name '*.conf' | sort | xargs md5sum | md5sum)" = "$sum_before" ] ||
  fail "the kept clip was rendered again"
[ "$(grep -c '^ground_margin=1$' "$clip/stereod.conf")" -eq 2 ] ||
  fail "the kept clip's stereod.conf was not written again"
# the same configs but for the ring names of the run
diff <(sed 's/sb[0-9]*-/sbN-/g' "$tmp/stereod.conf.first") <(sed 's/sb[0-9]*-/sbN-/g' "$clip/stereod.conf") > /dev/null ||
  fail "the kept clip's stereod.conf differs from the first run's"
grep -q '^# summary: players seed 1 (2 pairs)' "$tmp/out2.txt" || fail "no summary line on the kept clip"
# STADIUM_BUILDER's keys in the builder's configuration and in the variant's, beside its own
grep -q '^# stadium 1: .*, builder wait_ms=30000; stereod: ' "$tmp/out2.txt" ||
  fail "the stadium line does not name STADIUM_BUILDER's keys"
[ "$(grep -c '^wait_ms=' "$tmp/run/heightmap-builder.conf")" -eq 1 ] &&
  grep -q '^wait_ms=30000$' "$tmp/run/heightmap-builder.conf" ||
  fail "heightmap-builder.conf: not one wait_ms=30000"
grep -q '^wait_ms=30000$' "$tmp/run/heightmap-v.conf" && grep -q '^min_points=3$' "$tmp/run/heightmap-v.conf" ||
  fail "heightmap-v.conf: not both wait_ms=30000 and min_points=3"
grep -q '^# summary: v: players seed 1 (2 pairs)' "$tmp/out2.txt" || fail "no summary line of the variant"
# --configs-only renders nothing
$sim "${args[@]}" --out "$tmp/c" --configs-only
[ "$(cd "$tmp/c" && ls | sort | tr '\n' ' ')" = "heightmap.conf stadium.conf stereod.conf " ] ||
  fail "--configs-only wrote $(ls "$tmp/c")"
echo "ok: a kept clip plays with this build's configs"
