#!/usr/bin/python3
"""test-velocity-score.py: bench/velocity-score.py on a made-up clip and lines whose errors
are known: the lattice offset is found (lines start at clip frame 3, capture times on
another start), the true velocity is the step from the previous frame, the measured
velocities' RMSE is exact, the Kalman velocities count only after the warm-up, players
without a measured velocity are left out of that row, a frame without its previous one
has no true velocity, and bad usage exits 64.

    test-velocity-score.py BENCH_DIR
"""

import json
import math
import os
import subprocess
import sys
import tempfile

bench = sys.argv[1]
score = os.path.join(bench, "velocity-score.py")
tmp = tempfile.mkdtemp(prefix="velocity-score.")
period = 40_000_000

# two players: A runs at (5, 0) m/s, B at (0, -2) m/s; frames 0..9, frame 6 missing
with open(os.path.join(tmp, "players.csv"), "w") as f:
    f.write("frame,time_ns,id,x,y\n")
    for k in range(10):
        if k == 6:
            continue
        t = k * period
        f.write("%d,%d,0,%.4f,%.4f\n" % (k, t, -10 + 5 * k * 0.04, 3.0))
        f.write("%d,%d,1,%.4f,%.4f\n" % (k, t, 20.0, 8 - 2 * k * 0.04))

# lines for clip frames 3..9 (no line for 6), another time origin; A's measured velocity
# is off by (0.3, -0.4) (0.5 m/s), B has none; tracks off by (0.6, 0.8) (1 m/s)
lines = []
start = 1_700_000_000_000_000_000
for k in range(3, 10):
    if k == 6:
        continue
    players = [
        {"id": 7, "x": -10 + 5 * k * 0.04 + 0.05, "y": 3.0, "height": 1.8, "area": 0.2,
         "vx": 5.3, "vy": -0.4, "track_vx": 5.6, "track_vy": 0.8},
        {"id": 9, "x": 20.0, "y": 8 - 2 * k * 0.04 - 0.05, "height": 1.8, "area": 0.2,
         "track_vx": 0.6, "track_vy": -1.2},
    ]
    lines.append({"time_ns": start + (k - 3) * period, "frame": k, "pairs": ["a"],
                  "players": players})
with open(os.path.join(tmp, "lines.jsonl"), "w") as f:
    for l in lines:
        f.write(json.dumps(l) + "\n")


def run(*args):
    p = subprocess.run([sys.executable, score] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


rc, out = run("--clip", tmp, "--lines", os.path.join(tmp, "lines.jsonl"), "--warmup", "2",
              "--label", "made-up")
print(out)
assert rc == 0, rc
assert "lattice offset 3" in out, out
# matched with a true velocity: frames 3, 4, 5, 8, 9 (7 has no previous frame) x 2 players
assert "# 6 lines" in out, out
assert "10 matched players with a true velocity" in out, out


def row(name):
    for l in out.splitlines():
        if l.startswith(name):
            return [float(v) for v in l[34:].split()]
    raise AssertionError("no row " + name)


n, rmse, rx, ry = row("measured (vx, vy)")
assert n == 5 and abs(rmse - 0.5) < 0.01 and abs(rx - 0.3) < 0.01 and abs(ry - 0.4) < 0.01, \
    (n, rmse, rx, ry)
# Kalman from the second of consecutive lines: frames 4, 5 (3 starts), 8, 9 (7 starts
# again after the gap of 6, and has no truth): 4 frames x 2 players, all off by 1 m/s
n, rmse, rx, ry = row("Kalman (track_vx, track_vy)")
assert n == 8 and abs(rmse - 1.0) < 0.01, (n, rmse)
n, rmse, _, _ = row("Kalman, where measured")
assert n == 4 and abs(rmse - 1.0) < 0.01, (n, rmse)
n, rmse, _, _ = row("zero (the players' speeds)")
assert n == 10 and abs(rmse - math.sqrt((5 * 25 + 5 * 4) / 10)) < 0.02, (n, rmse)
assert "# summary: velocities made-up: measured RMSE 0.500 m/s (5 of 10 matched)" in out, out

rc, out = run("--clip", tmp)
assert rc == 64, rc
rc, out = run("--clip", os.path.join(tmp, "nothing"), "--lines", os.path.join(tmp, "lines.jsonl"))
assert rc == 66, rc
print("ok")
