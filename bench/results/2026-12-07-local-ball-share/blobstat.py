import sys, json, math, csv, importlib.util
sys.path.insert(0, '/work/main/bench')
spec = importlib.util.spec_from_file_location('ss', '/work/main/bench/stadium-score.py')
ss = importlib.util.module_from_spec(spec); spec.loader.exec_module(ss)
from scorelib import align
rows = []
for d in sys.argv[1:]:
    clip = d + '/clip'
    truth = ss.load_truth(clip)
    ball = {int(r['frame']): (float(r['x']), float(r['y']), float(r['z'])) for r in csv.DictReader(open(clip + '/ball.csv'))}
    lines = [json.loads(l) for l in open(d + '/lines.jsonl') if l.strip()]
    lines = [l for l in lines if l.get('players') is not None]
    frames = sorted(truth)
    period = truth[frames[1]][0]['time_ns'] - truth[frames[0]][0]['time_ns']
    rel, k0, fits = align(truth, lines, period, 1.0, frames[0], frames[-1])
    fr = -1
    for l in open(d + '/heightmap.log'):
        if 'BLOBFRAME' in l: fr += 1; continue
        if 'BLOBSTAT' not in l: continue
        t = l.split('BLOBSTAT ')[1].split()
        x, y = float(t[0]), float(t[1])
        v = dict(area=float(t[3]), top=float(t[5]), legs=float(t[7]), points=float(t[9]),
                 b=[float(t[11]), float(t[12]), float(t[13]), float(t[14])], scale=float(t[16]))
        if fr >= len(rel): continue
        k = k0 + rel[fr]
        if k not in truth: continue
        dp = min(math.hypot(p['x'] - x, p['y'] - y) for p in truth[k])
        bx = ball.get(k)
        db = math.hypot(bx[0] - x, bx[1] - y) if bx else 99
        lab = 'player' if dp < 0.7 else ('ball' if db < 1.5 and bx[2] > 0.5 else ('near' if dp < 1.5 else 'other'))
        v.update(seed=d.rsplit('/', 1)[-1], frame=k, lab=lab, dp=dp, ballz=bx[2] if bx else -1)
        rows.append(v)
json.dump(rows, open('/tmp/an/blobstat.json', 'w'))
from collections import Counter
print(Counter(r['lab'] for r in rows))
