#!/usr/bin/python3
"""velocity-score.py: scores the players' velocities in stereod-heightmap's JSON lines
against a stereod-sim clip's truth (players.csv: frame, time_ns, id, x, y, ...; the demo's
clip or a --stadium-seed one).

    velocity-score.py --clip DIR --lines LINES.jsonl [--played N] [--radius M]
                      [--warmup K] [--label TEXT]

The truth: a player's velocity at clip frame f is its step from frame f - 1 over the
frames' time difference (what the optical flow from the previous frame measures). Each
JSON line is one fused frame; its clip frame comes from its capture time as in
stadium-score.py (offline, the lines lie on the clip's frame lattice with an unknown
start: the offset whose frames the lines' players fit best, most matched and then
nearest; --played N: the clip's frames
0..N-1 were played, the offset is searched among those). The players of a line are
matched to the clip's, nearest first, one each, within --radius (1 m). For every matched
player: its measured velocity ("vx", "vy": the median scene flow of its blob's pixels),
when the line has one, and its track's Kalman velocity ("track_vx", "track_vy") once the
track has been in K consecutive lines (--warmup, default 4). Printed: counts and RMSE of
the vector error (m/s), with the x (across the stand) and y (along the views) parts,
and the RMSE of a zero velocity (the players' speeds) for scale. Last line:

  # summary: velocities LABEL: measured RMSE M m/s (N of the matched), Kalman RMSE K m/s

Exit status: 0, 1 nothing could be scored, 64 bad usage, 66 an input cannot be read.
"""

import argparse
import csv
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scorelib import align, match  # noqa: E402


def load_truth(clip):
    pos = {}
    try:
        with open(clip + "/players.csv") as f:
            for r in csv.DictReader(f):
                pos.setdefault(int(r["frame"]), {})[int(r["id"])] = (
                    int(r["time_ns"]), float(r["x"]), float(r["y"]))
    except (OSError, KeyError, ValueError) as e:
        print("velocity-score: %s/players.csv: %s" % (clip, e), file=sys.stderr)
        sys.exit(66)
    truth = {}
    for f, players in pos.items():
        prev = pos.get(f - 1)
        out = []
        for pid, (t, x, y) in players.items():
            v = None
            if prev and pid in prev and t > prev[pid][0]:
                dt = (t - prev[pid][0]) * 1e-9
                v = ((x - prev[pid][1]) / dt, (y - prev[pid][2]) / dt)
            out.append({"id": pid, "time_ns": t, "x": x, "y": y, "v": v})
        truth[f] = out
    return truth


class Rmse:
    def __init__(self):
        self.n, self.sx, self.sy = 0, 0.0, 0.0

    def add(self, ex, ey):
        self.n += 1
        self.sx += ex * ex
        self.sy += ey * ey

    def text(self):
        if not self.n:
            return "%6d %8s %8s %8s" % (0, "-", "-", "-")
        return "%6d %8.3f %8.3f %8.3f" % (self.n, math.sqrt((self.sx + self.sy) / self.n),
                                          math.sqrt(self.sx / self.n),
                                          math.sqrt(self.sy / self.n))

    def value(self):
        return math.sqrt((self.sx + self.sy) / self.n) if self.n else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clip")
    ap.add_argument("--lines")
    ap.add_argument("--played", type=int, default=0)
    ap.add_argument("--radius", type=float, default=1.0)
    ap.add_argument("--warmup", type=int, default=4)
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    if not args.clip or not args.lines or args.warmup < 1:
        ap.print_usage(sys.stderr)
        return 64
    truth = load_truth(args.clip)
    try:
        lines = [json.loads(l) for l in open(args.lines) if l.strip()]
    except (OSError, ValueError) as e:
        print("velocity-score: %s: %s" % (args.lines, e), file=sys.stderr)
        return 66
    lines = [l for l in lines if l.get("players") is not None]
    frames = sorted(truth)
    if not lines or len(frames) < 2:
        print("velocity-score: nothing to score", file=sys.stderr)
        return 1
    t0 = min(p["time_ns"] for p in truth[frames[0]])
    t1 = min(p["time_ns"] for p in truth[frames[1]])
    period = (t1 - t0) / (frames[1] - frames[0]) if t1 > t0 else 40e6
    last = min(args.played - 1, frames[-1]) if args.played > 0 else frames[-1]
    rel, k0, fits = align(truth, lines, period, args.radius, frames[0], last)
    span = max(rel)
    measured, kalman, kalman_same, zero = Rmse(), Rmse(), Rmse(), Rmse()
    matched = 0
    age = {}          # track id -> consecutive lines it was in
    prev_rel = None
    for r, line in zip(rel, lines):
        ids = {p["id"] for p in line["players"]}
        consecutive = prev_rel is not None and r == prev_rel + 1
        age = {i: (age.get(i, 0) + 1 if consecutive else 1) for i in ids}
        prev_rel = r
        players = truth.get(k0 + r)
        if not players:
            continue
        for i, j, _ in match(players, line["players"], args.radius):
            v = players[i]["v"]
            if v is None:
                continue
            rp = line["players"][j]
            matched += 1
            zero.add(v[0], v[1])
            if "vx" in rp and "vy" in rp:
                measured.add(rp["vx"] - v[0], rp["vy"] - v[1])
            if age[rp["id"]] >= args.warmup:
                kalman.add(rp["track_vx"] - v[0], rp["track_vy"] - v[1])
                if "vx" in rp:
                    kalman_same.add(rp["track_vx"] - v[0], rp["track_vy"] - v[1])
    if matched == 0:
        print("velocity-score: no matched player with a true velocity", file=sys.stderr)
        return 1
    print("# clip frames %d..%d (lattice offset %d: %d players within %.1f m; next best %s)"
          % (k0, k0 + span, k0, fits[0][0], args.radius,
             fits[1][0] if len(fits) > 1 else "-"))
    print("# %d lines, %d matched players with a true velocity" % (len(lines), matched))
    print("%-34s %6s %8s %8s %8s" % ("velocity (m/s)", "n", "rmse", "rmse_x", "rmse_y"))
    print("%-34s %s" % ("measured (vx, vy)", measured.text()))
    print("%-34s %s" % ("Kalman (track_vx, track_vy)", kalman.text()))
    print("%-34s %s" % ("Kalman, where measured", kalman_same.text()))
    print("%-34s %s" % ("zero (the players' speeds)", zero.text()))
    print("# summary: velocities %s: measured RMSE %.3f m/s (%d of %d matched), Kalman RMSE "
          "%.3f m/s (%d)" % (args.label or args.clip, measured.value(), measured.n, matched,
                             kalman.value(), kalman.n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
