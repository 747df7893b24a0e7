import sys, json, math, collections
sys.path.insert(0, '/work/main/bench')
import importlib.util
spec = importlib.util.spec_from_file_location('ss', '/work/main/bench/stadium-score.py')
ss = importlib.util.module_from_spec(spec); spec.loader.exec_module(ss)
from scorelib import align, match
setdir, variant = sys.argv[1], sys.argv[2]
seeds = sys.argv[3].split(',')
cnt = collections.Counter()
for s in seeds:
    d = '%s/%s' % (setdir, s)
    truth = ss.load_truth(d + '/clip')
    fn = d + ('/lines-%s.jsonl' % variant if variant != 'base' else '/lines.jsonl')
    lines = [json.loads(l) for l in open(fn) if l.strip()]
    lines = [l for l in lines if l.get('players') is not None]
    frames = sorted(truth)
    period = truth[frames[1]][0]['time_ns'] - truth[frames[0]][0]['time_ns']
    rel, k0, fits = align(truth, lines, period, 1.0, frames[0], frames[-1])
    for n, (r, line) in enumerate(zip(rel, lines)):
        if n < 1 or (k0 + r) not in truth: continue
        players, rep = truth[k0 + r], line['players']
        m = match(players, rep, 1.0)
        mr = {j for _, j, _ in m}
        for j, q in enumerate(rep):
            c = ('coast%d' % q['missed']) if q.get('missed', 0) > 0 else 'seen'
            dp = min(math.hypot(q['x'] - p['x'], q['y'] - p['y']) for p in players)
            do = min([math.hypot(q['x'] - o['x'], q['y'] - o['y']) for k, o in enumerate(rep) if k != j and o.get('missed',0)==0] or [99])
            if j in mr:
                cnt[c + ' matched' + (' dup<%.1f' % (math.ceil(do*2)/2) if do < 2 else '')] += 1; continue
            k = c + ' false ' + ('player<2m' if dp < 2 else 'far') + (' dup<1.5m' if do < 1.5 else '')
            cnt[k] += 1
for k in sorted(cnt): print('%-40s %d' % (k, cnt[k]))
