import sys, json, math, importlib.util
sys.path.insert(0, '/work/main/bench')
spec = importlib.util.spec_from_file_location('ss', '/work/main/bench/stadium-score.py')
ss = importlib.util.module_from_spec(spec); spec.loader.exec_module(ss)
from scorelib import align, match
d = sys.argv[1]; ln = sys.argv[2] if len(sys.argv) > 2 else 'lines.jsonl'
clip = d + '/clip'
truth = ss.load_truth(clip); cams = ss.load_cameras(clip)
lines = [json.loads(l) for l in open(d + '/' + ln) if l.strip()]
lines = [l for l in lines if l.get('players') is not None]
frames = sorted(truth)
period = truth[frames[1]][0]['time_ns'] - truth[frames[0]][0]['time_ns']
rel, k0, fits = align(truth, lines, period, 1.0, frames[0], frames[-1])
for n, (r, line) in enumerate(zip(rel, lines)):
    if n < 1 or (k0 + r) not in truth: continue
    players, rep = truth[k0 + r], line['players']
    m = match(players, rep, 1.0); used = {j for _, j, _ in m}
    for j, q in enumerate(rep):
        if j in used: continue
        near = min((math.hypot(p['x']-q['x'], p['y']-q['y']) for p in players), default=99)
        cd = {k: math.hypot(q['x']-c[0], q['y']-c[1]) for k, c in cams.items()}
        print('f%d false (%.2f, %.2f) h %.2f area %.2f nearest player %.2f m; cams %s' % (k0+r, q['x'], q['y'], q['height'], q['area'], near, ' '.join('%s %.0f' % kv for kv in sorted(cd.items()))))
