# merge-offline.py ROOT LINES: every SEED/ under ROOT with clip/ and LINES (a builder's
# JSON lines): the published players closer than d merged (area-weighted centre), then
# scored as bench/stadium-score.py does (first line skipped, match within 1 m; "seen":
# the players some pair sees), for d in 0 .. 0.6 m. An approximation of merge_distance on
# lines published without it.
import sys, json, math, glob, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
import importlib.util
spec = importlib.util.spec_from_file_location("ss", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../stadium-score.py"))
ss = importlib.util.module_from_spec(spec); spec.loader.exec_module(ss)
from scorelib import align, match
root, name = sys.argv[1], sys.argv[2]
for d in [0, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6]:
    tot = seen = mat = fal = 0; sq = 0.0
    for sd in sorted(glob.glob(root + "/*/")):
        clip = sd + "clip"; lp = sd + name
        if not os.path.exists(lp): continue
        truth = ss.load_truth(clip); cams = ss.load_cameras(clip)
        lines = [json.loads(l) for l in open(lp) if l.strip()]
        lines = [l for l in lines if l.get("players") is not None]
        if not lines: continue
        frames = sorted(truth)
        period = truth[frames[1]][0]["time_ns"] - truth[frames[0]][0]["time_ns"]
        # merge
        for l in lines:
            ps = [dict(p) for p in l["players"]]
            changed = True
            while changed:
                changed = False
                for i in range(len(ps)):
                    for j in range(i+1, len(ps)):
                        if math.hypot(ps[i]["x"]-ps[j]["x"], ps[i]["y"]-ps[j]["y"]) < d:
                            a, b = ps[i], ps[j]; wa, wb = a["area"], b["area"]
                            a["x"] = (a["x"]*wa + b["x"]*wb)/(wa+wb); a["y"] = (a["y"]*wa + b["y"]*wb)/(wa+wb)
                            a["area"] = wa + wb; del ps[j]; changed = True; break
                    if changed: break
            l["players"] = ps
        rel, k0, fits = align(truth, lines, period, 1.0, frames[0], frames[-1])
        for n, (r, line) in enumerate(zip(rel, lines)):
            if n < 1 or (k0 + r) not in truth: continue
            players, rep = truth[k0 + r], line["players"]
            m = match(players, rep, 1.0)
            mp = {i: dd for i, _, dd in m}
            for i, p in enumerate(players):
                if not p["seen_by"]: continue
                seen += 1
                if i in mp: mat += 1; sq += mp[i]**2
            fal += len(rep) - len(m)
            tot += 1
    print("merge %.2f: recall(seen~) %.1f %% rmse %.3f false %.2f /frame (%d lines)" % (d, 100.0*mat/seen, math.sqrt(sq/max(mat,1)), fal/tot, tot))
