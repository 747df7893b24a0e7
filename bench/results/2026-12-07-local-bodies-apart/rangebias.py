import sys, json, math, importlib.util
sys.path.insert(0, '/work/main/bench')
spec = importlib.util.spec_from_file_location('ss', '/work/main/bench/stadium-score.py')
ss = importlib.util.module_from_spec(spec); spec.loader.exec_module(ss)
from scorelib import align, match
rows = []
for d in sys.argv[1:]:
    clip = d + '/clip'
    truth = ss.load_truth(clip); cams = ss.load_cameras(clip)
    try:
        lines = [json.loads(l) for l in open(d + '/lines.jsonl') if l.strip()]
    except OSError: continue
    lines = [l for l in lines if l.get('players') is not None]
    if not lines: continue
    frames = sorted(truth)
    period = truth[frames[1]][0]['time_ns'] - truth[frames[0]][0]['time_ns']
    rel, k0, fits = align(truth, lines, period, 1.0, frames[0], frames[-1])
    for n, (r, line) in enumerate(zip(rel, lines)):
        if n < 1 or (k0 + r) not in truth: continue
        players, rep = truth[k0 + r], line['players']
        fused = ss.pair_names(line, '', cams)
        for i, j, dist in match(players, rep, 1.0):
            p, q = players[i], rep[j]
            seen = [k for k in p['seen_by'] if k in fused and k in cams]
            if not seen: continue
            k = min(seen, key=lambda k: math.hypot(p['x']-cams[k][0], p['y']-cams[k][1]))
            c = cams[k]; Z = math.hypot(p['x']-c[0], p['y']-c[1])
            ux, uy = (p['x']-c[0])/Z, (p['y']-c[1])/Z
            ex, ey = q['x']-p['x'], q['y']-p['y']
            rows.append((Z, ex*ux+ey*uy, -ex*uy+ey*ux, len(seen)))
bands = [(0,30),(30,60),(60,90),(90,120),(120,999)]
for lo, hi in bands:
  for ns in (1, 2):
    s = [r for r in rows if lo <= r[0] < hi and (r[3] == 1) == (ns == 1)]
    if not s: continue
    n = len(s); ma = sum(r[1] for r in s)/n; sa = math.sqrt(sum((r[1]-ma)**2 for r in s)/n)
    mc = sum(r[2] for r in s)/n; sc = math.sqrt(sum((r[2]-mc)**2 for r in s)/n)
    rm = math.sqrt(sum(r[1]**2+r[2]**2 for r in s)/n)
    print('%3d-%3d m %s n %4d along mean %+.3f sd %.3f  across mean %+.3f sd %.3f  rmse %.3f' % (lo, hi, 'one' if ns==1 else '2+ ', n, ma, sa, mc, sc, rm))
