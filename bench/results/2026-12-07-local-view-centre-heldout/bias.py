# along-view / across-view error of matched players, by distance to the nearest camera
import sys, json, math, importlib.util
sys.path.insert(0, '/work/main/bench')
spec = importlib.util.spec_from_file_location('ss', '/work/main/bench/stadium-score.py')
ss = importlib.util.module_from_spec(spec); spec.loader.exec_module(ss)
from scorelib import align, match
ln = sys.argv[1]
bands = {}
for d in sys.argv[2:]:
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
        for i, j, e in match(players, rep, 1.0):
            p = players[i]; q = rep[j]
            sb = [cams[s] for s in p.get('seen_by', ()) if s in cams] or list(cams.values())
            c = min(sb, key=lambda c: math.hypot(p['x']-c[0], p['y']-c[1]))
            D = math.hypot(p['x']-c[0], p['y']-c[1])
            ux, uy = (p['x']-c[0])/D, (p['y']-c[1])/D
            ex, ey = q['x']-p['x'], q['y']-p['y']
            along = ex*ux + ey*uy; across = -ex*uy + ey*ux
            b = '0-30' if D < 30 else '30-60' if D < 60 else '60-90' if D < 90 else '90+'
            bands.setdefault(b, []).append((along, across))
for b in ['0-30', '30-60', '60-90', '90+']:
    v = bands.get(b, [])
    if not v: continue
    n = len(v)
    ma = sum(a for a, _ in v)/n; mc = sum(c for _, c in v)/n
    ra = math.sqrt(sum(a*a for a, _ in v)/n); rc = math.sqrt(sum(c*c for _, c in v)/n)
    print('%-6s n %4d along mean %+.3f rms %.3f | across mean %+.3f rms %.3f' % (b, n, ma, ra, mc, rc))
