# seen players' recall by the gap to the nearest other player (surface to surface)
import sys, json, math, importlib.util, csv
sys.path.insert(0, '/work/main/bench')
spec = importlib.util.spec_from_file_location('ss', '/work/main/bench/stadium-score.py')
ss = importlib.util.module_from_spec(spec); spec.loader.exec_module(ss)
from scorelib import align, match
lf = sys.argv[1]; tab = {}
for d in sys.argv[2:]:
    clip = d + '/clip'; truth = ss.load_truth(clip); cams = ss.load_cameras(clip)
    rad = {}
    for r in csv.DictReader(open(clip + '/players.csv')): rad[(int(r['frame']), int(r['id']))] = float(r['radius'])
    try: lines = [json.loads(l) for l in open(d + '/' + lf) if l.strip()]
    except OSError: continue
    lines = [l for l in lines if l.get('players') is not None]
    if not lines: continue
    frames = sorted(truth); period = truth[frames[1]][0]['time_ns'] - truth[frames[0]][0]['time_ns']
    rel, k0, fits = align(truth, lines, period, 1.0, frames[0], frames[-1])
    for n, (r, line) in enumerate(zip(rel, lines)):
        f = k0 + r
        if n < 1 or f not in truth: continue
        players, rep = truth[f], line['players']; fused = ss.pair_names(line, None, cams)
        got = {i for i, _, _ in match(players, rep, 1.0)}
        for i, p in enumerate(players):
            if not (p['seen_by'] & fused): continue
            gap = min(math.hypot(p['x']-q['x'], p['y']-q['y']) - rad[(f, p['id'])] - rad[(f, q['id'])] for q in players if q is not p)
            b = 'overlap' if gap < 0 else 'gap<0.3' if gap < 0.3 else 'gap<1' if gap < 1 else 'apart'
            zb = '<90' if p['nearest'] < 90 else '90+'
            for key in ((b, zb), (b, 'all'), ('any', zb), ('any', 'all')):
                t = tab.setdefault(key, [0, 0]); t[0] += 1; t[1] += i in got
for k in sorted(tab): print('%-8s %-4s seen %4d found %4d  %.1f %%  missed %d' % (k + (tab[k][0], tab[k][1], 100*tab[k][1]/tab[k][0], tab[k][0]-tab[k][1])))
