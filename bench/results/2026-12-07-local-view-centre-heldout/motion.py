# error along / across each player's motion (truth velocity), by speed band
import sys, json, math, importlib.util
sys.path.insert(0, '/work/main/bench')
spec = importlib.util.spec_from_file_location('ss', '/work/main/bench/stadium-score.py')
ss = importlib.util.module_from_spec(spec); spec.loader.exec_module(ss)
from scorelib import align, match
ln = sys.argv[1]
bands = {}
allv = []
for d in sys.argv[2:]:
    clip = d + '/clip'
    truth = ss.load_truth(clip)
    lines = [json.loads(l) for l in open(d + '/' + ln) if l.strip()]
    lines = [l for l in lines if l.get('players') is not None]
    frames = sorted(truth)
    period = truth[frames[1]][0]['time_ns'] - truth[frames[0]][0]['time_ns']
    rel, k0, fits = align(truth, lines, period, 1.0, frames[0], frames[-1])
    for n, (r, line) in enumerate(zip(rel, lines)):
        k = k0 + r
        if n < 1 or k not in truth: continue
        players, rep = truth[k], line['players']
        prev = truth.get(k - 1)
        for i, j, e in match(players, rep, 1.0):
            p = players[i]; q = rep[j]
            if prev is None: continue
            pp = [o for o in prev if o.get('id', o.get('player')) == p.get('id', p.get('player'))]
            if not pp: continue
            pp = pp[0]
            vx = (p['x'] - pp['x']) / (period * 1e-9); vy = (p['y'] - pp['y']) / (period * 1e-9)
            sp = math.hypot(vx, vy)
            ex, ey = q['x'] - p['x'], q['y'] - p['y']
            if sp < 0.5:
                b = 'slow<0.5'; al = ac = 0
            else:
                ux, uy = vx / sp, vy / sp
                al = ex*ux + ey*uy; ac = -ex*uy + ey*ux
                b = '0.5-3' if sp < 3 else '3-6' if sp < 6 else '6+'
            bands.setdefault(b, []).append((al, ac, math.hypot(ex, ey)))
            rv = (q.get('vx', 0), q.get('vy', 0))
            allv.append((sp, math.hypot(rv[0] - vx, rv[1] - vy)))
for b in ['slow<0.5', '0.5-3', '3-6', '6+']:
    v = bands.get(b, [])
    if not v: continue
    n = len(v)
    print('%-8s n %4d along-motion mean %+.3f rms %.3f | across mean %+.3f rms %.3f | total rms %.3f' % (
        b, n, sum(a for a, _, _ in v)/n, math.sqrt(sum(a*a for a, _, _ in v)/n),
        sum(c for _, c, _ in v)/n, math.sqrt(sum(c*c for _, c, _ in v)/n), math.sqrt(sum(t*t for _, _, t in v)/n)))
