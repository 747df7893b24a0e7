import sys, json, math, glob
sys.path.insert(0, "/work/main/bench")
import importlib.util
spec = importlib.util.spec_from_file_location("ss", "/work/main/bench/stadium-score.py")
ss = importlib.util.module_from_spec(spec); spec.loader.exec_module(ss)
from scorelib import align, match
root=sys.argv[1]; name=sys.argv[2]
mh=[]; fh=[]
for d in sorted(glob.glob(root+"/*/")):
    clip=d+"clip"; lp=d+name
    try: truth = ss.load_truth(clip); lines = [json.loads(l) for l in open(lp) if l.strip()]
    except Exception: continue
    lines = [l for l in lines if l.get("players") is not None]
    frames = sorted(truth)
    period = truth[frames[1]][0]["time_ns"] - truth[frames[0]][0]["time_ns"]
    rel, k0, fits = align(truth, lines, period, 1.0, frames[0], frames[-1])
    for n, (r, line) in enumerate(zip(rel, lines)):
        if n < 1 or (k0 + r) not in truth: continue
        players, rep = truth[k0 + r], line["players"]
        m = match(players, rep, 1.0); used = {j for _, j, _ in m}
        for j, rp in enumerate(rep): (mh if j in used else fh).append(rp["height"])
mh.sort(); fh.sort()
for t in (2.2,2.3,2.4,2.5,2.6):
    print("h >", t, "matched", sum(1 for h in mh if h>t), "of", len(mh), "false", sum(1 for h in fh if h>t), "of", len(fh))
print("top matched heights", mh[-8:])
