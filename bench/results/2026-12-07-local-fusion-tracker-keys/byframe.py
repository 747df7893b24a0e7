import sys, json, math, importlib.util
sys.path.insert(0, __import__('os').path.join(__import__('os').path.dirname(__file__), '../..'))
spec = importlib.util.spec_from_file_location('ss', __import__('os').path.join(__import__('os').path.dirname(__file__), '../../stadium-score.py'))
ss = importlib.util.module_from_spec(spec); spec.loader.exec_module(ss)
from scorelib import align, match
ln = sys.argv[1]; acc = {}
for d in sys.argv[2:]:
    truth = ss.load_truth(d+'/clip')
    lines = [json.loads(l) for l in open(d + '/' + ln) if l.strip()]
    lines = [l for l in lines if l.get('players') is not None]
    frames = sorted(truth); period = truth[frames[1]][0]['time_ns'] - truth[frames[0]][0]['time_ns']
    rel, k0, fits = align(truth, lines, period, 1.0, frames[0], frames[-1])
    for n, (r, line) in enumerate(zip(rel, lines)):
        if (k0 + r) not in truth: continue
        players, rep = truth[k0 + r], line['players']
        m = match(players, rep, 1.0)
        a = acc.setdefault(n, [0, 0.0, 0])
        for i, j, dd in m:
            a[0] += 1; a[1] += dd * dd
        a[2] += len(rep) - len(m)
for n in sorted(acc):
    c, s, f = acc[n]
    print('line %d: matched %d rmse %.3f false %d' % (n, c, math.sqrt(s / max(c, 1)), f))
