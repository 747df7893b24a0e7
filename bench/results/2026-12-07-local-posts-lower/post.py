import sys, json, math, glob
sys.path.insert(0, "/work/main/bench")
import importlib.util
spec = importlib.util.spec_from_file_location("ss", "/work/main/bench/stadium-score.py")
ss = importlib.util.module_from_spec(spec); spec.loader.exec_module(ss)
from scorelib import align, match
root=sys.argv[1]; name=sys.argv[2]; R=float(sys.argv[3]); A=float(sys.argv[4])
posts=[(sx*52.5, sy*3.66) for sx in (-1,1) for sy in (-1,1)]
def dpost(x,y): return min(math.hypot(x-px,y-py) for px,py in posts)
mk=fk=mt=ft=0; ex=[]
for d in sorted(glob.glob(root+"/*/")):
    clip=d+"clip"; lp=d+name
    try: truth = ss.load_truth(clip)
    except Exception: continue
    try: lines = [json.loads(l) for l in open(lp) if l.strip()]
    except Exception: continue
    lines = [l for l in lines if l.get("players") is not None]
    frames = sorted(truth)
    period = truth[frames[1]][0]["time_ns"] - truth[frames[0]][0]["time_ns"]
    rel, k0, fits = align(truth, lines, period, 1.0, frames[0], frames[-1])
    for n, (r, line) in enumerate(zip(rel, lines)):
        if n < 1 or (k0 + r) not in truth: continue
        players, rep = truth[k0 + r], line["players"]
        m = match(players, rep, 1.0)
        used = {j for _, j, _ in m}
        for j, rp in enumerate(rep):
            hit = dpost(rp["x"],rp["y"]) < R and rp["area"] < A
            if j in used: mt+=1; mk+=hit; 
            else: ft+=1; fk+=hit
            if hit and j in used: ex.append((d.split('/')[-2], rp["x"], rp["y"], rp["area"]))
print("R %.2f A %.2f: dropped matched %d of %d, false %d of %d" % (R, A, mk, mt, fk, ft), ex[:5])
