#!/usr/bin/python3
"""stadium-bound.py: what the range noise alone allows on the random stadiums.

    stadium-bound.py [--sim PATH] [--seeds 1-20] [--pairs 2,8] [--sigma 0.05,0.07,0.1,0.15]
                     [--draws 20] [--work DIR]

For each seed and pair count, stereod-sim renders the stadium at 0.05 x (8 frames: only
players.csv and stadium.conf are used, and neither depends on the image size). For every
player a pair sees (players.csv seen_by), the covariance of its position: per pair that
sees it, the range error D L sigma / (f B) along its horizontal view (D and L the 3-D and
horizontal distances from the pair to the player 1 m up, f the drawn sensor's focal
length in px, B the baseline; sigma the disparity error of the whole body, px) and half a
pixel across (D 0.5 / f), summed as information. Drawn --draws times per player, a
position within 1 m is matched as bench/stadium-score.py matches. Prints per pair count
and sigma: the player-frames, the recall and the RMSE of the matched draws, and the share
of the player-frames no pair sees at 12 px/m or more (a player about 6 px wide). This is
the floor the range noise sets, not a measurement of the service.
"""

import argparse
import csv
import math
import os
import random
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PAIR_RE = re.compile(r"\[pair (\S+)\]\n# sensor (\d+)x\d+, focal ([\d.]+) x width[^\n]*\n"
                     r"position=([-\d.]+),([-\d.]+),([-\d.]+)\n(?:[^\[]*?\n)?baseline=([\d.]+)")


def cameras(clip):
    text = open(os.path.join(clip, "stadium.conf")).read()
    cams = {}
    for m in PAIR_RE.finditer(text):
        width = int(m.group(2))
        cams[m.group(1)] = ((float(m.group(4)), float(m.group(5)), float(m.group(6))),
                            float(m.group(3)) * width, float(m.group(7)))
    return cams


def covariances(clip):
    cams = cameras(clip)
    out = []
    with open(os.path.join(clip, "players.csv")) as f:
        for r in csv.DictReader(f):
            seen = [p for p in r["seen_by"].split(";") if p]
            if not seen:
                continue
            x, y, z = float(r["x"]), float(r["y"]), 1.0
            out.append([(cams[p], (x, y, z)) for p in seen])
    return out


def bound(obs, sigma, draws, rng):
    n = matched = 0
    sq = 0.0
    low = 0
    for views in obs:
        info = [[0.0, 0.0], [0.0, 0.0]]
        sharpest = 0.0
        for ((cx, cy, cz), f, b), (x, y, z) in views:
            d = math.dist((cx, cy, cz), (x, y, z))
            l = math.hypot(x - cx, y - cy)
            along = d * l * sigma / (f * b)
            across = d * 0.5 / f
            u = ((x - cx) / l, (y - cy) / l)
            for i in range(2):
                for j in range(2):
                    uu = u[i] * u[j]
                    info[i][j] += uu / along ** 2 + ((i == j) - uu) / across ** 2
            sharpest = max(sharpest, f / d)
        det = info[0][0] * info[1][1] - info[0][1] * info[1][0]
        a, c, b = info[1][1] / det, info[0][0] / det, -info[0][1] / det
        l11 = math.sqrt(a)
        l21 = b / l11
        l22 = math.sqrt(max(c - l21 * l21, 0.0))
        for _ in range(draws):
            g1, g2 = rng.gauss(0, 1), rng.gauss(0, 1)
            ex, ey = l11 * g1, l21 * g1 + l22 * g2
            e2 = ex * ex + ey * ey
            if e2 <= 1.0:
                matched += 1
                sq += e2
        n += 1
        low += sharpest < 12.0
    return n, 100.0 * matched / (draws * n), math.sqrt(sq / max(matched, 1)), 100.0 * low / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sim", default=os.path.join(HERE, "..", "build", "tools", "stereod-sim"))
    ap.add_argument("--seeds", default="1-20")
    ap.add_argument("--pairs", default="2,8")
    ap.add_argument("--sigma", default="0.05,0.07,0.1,0.15")
    ap.add_argument("--draws", type=int, default=20)
    ap.add_argument("--work", help="keep the clips there (default: a temporary folder)")
    args = ap.parse_args()
    try:
        first, last = (int(v) for v in args.seeds.split("-"))
        pair_counts = [int(v) for v in args.pairs.split(",")]
        sigmas = [float(v) for v in args.sigma.split(",")]
    except ValueError:
        print("stadium-bound: --seeds FIRST-LAST, --pairs and --sigma comma lists",
              file=sys.stderr)
        return 64
    work = args.work or tempfile.mkdtemp(prefix="stadium-bound.")
    rng = random.Random(1)
    for pairs in pair_counts:
        obs = []
        for seed in range(first, last + 1):
            clip = os.path.join(work, "%d-%d" % (seed, pairs))
            if not os.path.exists(os.path.join(clip, "players.csv")):
                subprocess.run([args.sim, "--stadium-seed", str(seed), "--pairs", str(pairs),
                                "--scale", "0.05", "--frames", "8", "--quiet", "--out", clip],
                               check=True)
            obs += covariances(clip)
        for sigma in sigmas:
            n, recall, rmse, low = bound(obs, sigma, args.draws, rng)
            print("%d pairs, seeds %d-%d, sigma %.2f px: %d seen player-frames; range noise "
                  "alone: recall %.1f %%, RMSE %.3f m; seen by no pair at 12 px/m: %.1f %%"
                  % (pairs, first, last, sigma, n, recall, rmse, low))
    return 0


if __name__ == "__main__":
    sys.exit(main())
