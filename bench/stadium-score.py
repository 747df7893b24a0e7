#!/usr/bin/python3
"""stadium-score.py: scores stereod-heightmap's JSON lines against a stereod-sim stadium's
ground truth (players.csv of --stadium-seed).

    stadium-score.py --clip DIR --lines LINES.jsonl [--prefix PREFIX] [--seed N]
                     [--skip K] [--radius M] [--json OUT.json]
    stadium-score.py --aggregate OUT1.json OUT2.json ... [--label TEXT]

Each JSON line is one fused frame. Its clip frame comes from its capture time: offline,
stereod's capture times are one replay start plus the frames' timestamps, so the lines
lie on the clip's frame lattice with an unknown start; the start is the lattice offset
whose frames the lines' players fit best, most matched and then nearest (printed with
the runner-up's fit, so that a doubtful alignment shows; bench/scorelib.py). The first K lines (default 1: a track is reported after
`confirm` = 2 fused frames) are not scored.

Per scored line: the players of its frame (all 22) are matched to the reported players,
nearest first, one each, within --radius (1 m). A player is "seen" when one of the
line's fused pairs sees it (players.csv seen_by: inside both views, not hidden from
either camera). Printed: recall of the seen players and of all, RMSE of the matched
positions, false detections per line (reported players matched to nobody), the mean
and mean absolute error of the matched players' heights and areas (reported area minus
the footprint pi r^2), by distance band of the player (players.csv nearest_m: to the
nearest pair that sees it) or, for a false detection, of its distance to the nearest
fused pair's camera. Last line:

  # summary: players seed N (P pairs): recall R % (seen), recall A % (all), RMSE E m,
  false F per frame

--aggregate pools the counts of several --json files (recall = all matched over all
counted, RMSE over all matched) and prints the same table and a summary line per set.
Exit status: 0, 1 no line could be scored, 64 bad usage, 66 an input cannot be read.
"""

import argparse
import configparser
import csv
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scorelib import align, match  # noqa: E402

BANDS = [(0, 30), (30, 60), (60, 90), (90, float("inf"))]
BAND_NAMES = ["0-30 m", "30-60 m", "60-90 m", "90+ m"]


def band_of(d):
    for i, (lo, hi) in enumerate(BANDS):
        if lo <= d < hi:
            return i
    return len(BANDS) - 1


def empty_counts():
    return {"seen": 0, "seen_matched": 0, "all": 0, "matched": 0, "sq": 0.0,
            "h_err": 0.0, "h_abs": 0.0, "a_err": 0.0, "a_abs": 0.0, "false": 0}


def load_truth(clip):
    truth = {}
    try:
        with open(clip + "/players.csv") as f:
            for r in csv.DictReader(f):
                truth.setdefault(int(r["frame"]), []).append({
                    "id": int(r["id"]), "time_ns": int(r["time_ns"]),
                    "x": float(r["x"]), "y": float(r["y"]), "height": float(r["height"]),
                    "footprint": float(r["footprint"]), "nearest": float(r["nearest_m"]),
                    "seen_by": set(p for p in r["seen_by"].split(";") if p)})
    except (OSError, KeyError, ValueError) as e:
        print("stadium-score: %s/players.csv: %s" % (clip, e), file=sys.stderr)
        sys.exit(66)
    return truth


def load_cameras(clip):
    cp = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=None)
    cp.read(clip + "/stadium.conf")
    cams = {}
    for sec in cp.sections():
        if sec.startswith("pair "):
            pos = [float(v) for v in cp[sec]["position"].replace(",", " ").split()]
            cams[sec[5:]] = pos
    return cams


def pair_names(line, prefix, cams):
    """The stadium's names (p1, p2 ...) of a line's fused pairs: PREFIX stripped, or
    without --prefix the stadium pair name the ring name ends with."""
    out = set()
    for n in line["pairs"]:
        if prefix:
            out.add(n[len(prefix):] if n.startswith(prefix) else n)
        else:
            ends = [k for k in cams if n.endswith(k)]
            out.add(max(ends, key=len) if ends else n)
    return out


def score(args):
    truth = load_truth(args.clip)
    cams = load_cameras(args.clip)
    try:
        lines = [json.loads(l) for l in open(args.lines) if l.strip()]
    except (OSError, ValueError) as e:
        print("stadium-score: %s: %s" % (args.lines, e), file=sys.stderr)
        return 66
    frames = sorted(truth)
    period = (truth[frames[1]][0]["time_ns"] - truth[frames[0]][0]["time_ns"]
              if len(frames) > 1 else 40000000)
    lines = [l for l in lines if l.get("players") is not None]
    if not lines:
        print("stadium-score: %s: no JSON lines" % args.lines, file=sys.stderr)
        return 1
    # the lattice offset: the clip frame of the earliest line
    rel, k0, fits = align(truth, lines, period, args.radius, frames[0], frames[-1])
    span = max(rel)
    runner_up = fits[1][0] if len(fits) > 1 else None
    bands = [empty_counts() for _ in BANDS]
    scored = 0
    for n, (r, line) in enumerate(zip(rel, lines)):
        if n < args.skip or (k0 + r) not in truth:
            continue
        scored += 1
        players, reported = truth[k0 + r], line["players"]
        fused = pair_names(line, args.prefix, cams)
        m = match(players, reported, args.radius)
        matched_p = {i: (j, d) for i, j, d in m}
        for i, p in enumerate(players):
            b = bands[band_of(p["nearest"])]
            seen = bool(p["seen_by"] & fused)
            b["all"] += 1
            b["seen"] += seen
            if i in matched_p:
                j, d = matched_p[i]
                rp = reported[j]
                b["matched"] += 1
                b["seen_matched"] += seen
                b["sq"] += d * d
                b["h_err"] += rp["height"] - p["height"]
                b["h_abs"] += abs(rp["height"] - p["height"])
                b["a_err"] += rp["area"] - p["footprint"]
                b["a_abs"] += abs(rp["area"] - p["footprint"])
        used = {j for _, j, _ in m}
        for j, rp in enumerate(reported):
            if j in used:
                continue
            d = min((math.hypot(rp["x"] - c[0], rp["y"] - c[1])
                     for name, c in cams.items() if name in fused), default=0.0)
            bands[band_of(d)]["false"] += 1
    if scored == 0:
        print("stadium-score: no line left to score (%d lines, skip %d)" % (len(lines), args.skip),
              file=sys.stderr)
        return 1
    result = {"seed": args.seed, "pairs": len(cams), "lines": len(lines), "scored": scored,
              "offset": k0, "fit": fits[0][0], "runner_up": runner_up, "bands": bands}
    print("# clip frames %d..%d (lattice offset %d: %d players within %.1f m; next best %s)"
          % (k0, k0 + span, k0, fits[0][0], args.radius,
             "-" if runner_up is None else runner_up))
    report(result, "seed %s (%d pairs)" % (args.seed, len(cams)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f)
    return 0


def pct(a, b):
    return 100.0 * a / b if b else float("nan")


def report(result, label):
    bands, frames = result["bands"], result["scored"]
    print("# %d lines scored of %d" % (frames, result["lines"]))
    print("%-8s %7s %9s %9s %8s %9s %9s %9s %9s" % (
        "band", "players", "recall_s%", "recall_a%", "rmse_m", "false/fr", "h_err_m",
        "h_mae_m", "a_err_m2"))
    total = empty_counts()
    for name, b in list(zip(BAND_NAMES, bands)) + [("all", None)]:
        if b is None:
            b = total
        else:
            for k in total:
                total[k] += b[k]
        m = b["matched"]
        print("%-8s %7d %9.1f %9.1f %8.3f %9.2f %9.3f %9.3f %9.3f" % (
            name, b["all"], pct(b["seen_matched"], b["seen"]), pct(b["matched"], b["all"]),
            math.sqrt(b["sq"] / m) if m else float("nan"), b["false"] / max(frames, 1),
            b["h_err"] / m if m else float("nan"), b["h_abs"] / m if m else float("nan"),
            b["a_err"] / m if m else float("nan")))
    m = total["matched"]
    print("# summary: players %s: recall %.1f %% (seen), recall %.1f %% (all), RMSE %.3f m, "
          "false %.2f per frame" % (label, pct(total["seen_matched"], total["seen"]),
                                   pct(m, total["all"]),
                                   math.sqrt(total["sq"] / m) if m else float("nan"),
                                   total["false"] / max(frames, 1)))


def aggregate(args):
    results = []
    for path in args.aggregate:
        try:
            with open(path) as f:
                results.append(json.load(f))
        except (OSError, ValueError) as e:
            print("stadium-score: %s: %s" % (path, e), file=sys.stderr)
            return 66
    if not results:
        print("stadium-score: nothing to aggregate", file=sys.stderr)
        return 1
    pooled = {"scored": 0, "lines": 0, "bands": [empty_counts() for _ in BANDS]}
    for r in results:
        pooled["scored"] += r["scored"]
        pooled["lines"] += r["lines"]
        for pb, b in zip(pooled["bands"], r["bands"]):
            for k in pb:
                pb[k] += b[k]
    report(pooled, args.label or "%d seeds" % len(results))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clip")
    ap.add_argument("--lines")
    ap.add_argument("--prefix", default="")
    ap.add_argument("--seed", default="?")
    ap.add_argument("--skip", type=int, default=1)
    ap.add_argument("--radius", type=float, default=1.0)
    ap.add_argument("--json")
    ap.add_argument("--aggregate", nargs="+")
    ap.add_argument("--label")
    args = ap.parse_args()
    if args.aggregate:
        return aggregate(args)
    if not args.clip or not args.lines:
        ap.print_usage(sys.stderr)
        return 64
    return score(args)


if __name__ == "__main__":
    sys.exit(main())
