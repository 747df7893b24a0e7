"""scorelib.py: what bench/stadium-score.py and bench/velocity-score.py share: matching
the reported players of a JSON line to the clip's, and placing the lines on the clip's
frame lattice."""

import math


def match(players, reported, radius):
    """Nearest first, one each, within radius: list of (player index, reported index,
    distance)."""
    cand = []
    for i, p in enumerate(players):
        for j, r in enumerate(reported):
            d = math.hypot(p["x"] - r["x"], p["y"] - r["y"])
            if d < radius:
                cand.append((d, i, j))
    cand.sort()
    used_p, used_r, out = set(), set(), []
    for d, i, j in cand:
        if i not in used_p and j not in used_r:
            used_p.add(i)
            used_r.add(j)
            out.append((i, j, d))
    return out


def align(truth, lines, period, radius, first, last):
    """Offline, stereod's capture times are one replay start plus the frames' timestamps:
    the lines lie on the clip's frame lattice with an unknown start. Returns (rel, k0,
    fits): each line's frame relative to the earliest line, the clip frame of the earliest
    (searched in first..last - span) where the lines' players fit best (most matched
    within radius, then nearest), and the fits sorted best first as (matched, -distance
    sum, k0)."""
    t_min = min(l["time_ns"] for l in lines)
    rel = [int(round((l["time_ns"] - t_min) / period)) for l in lines]
    span = max(rel)
    fits = []
    for k0 in range(first, max(last - span, first) + 1):
        got, dist = 0, 0.0
        for r, l in zip(rel, lines):
            m = match(truth.get(k0 + r, []), l["players"], radius)
            got += len(m)
            dist += sum(d for _, _, d in m)
        fits.append((got, -dist, k0))
    fits.sort(reverse=True)
    return rel, fits[0][2], fits
