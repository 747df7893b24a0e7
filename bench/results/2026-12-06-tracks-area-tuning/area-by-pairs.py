import sys, json, math, collections, configparser
sys.path.insert(0, '/work/main/bench')
import importlib.util
spec = importlib.util.spec_from_file_location('ss', '/work/main/bench/stadium-score.py')
ss = importlib.util.module_from_spec(spec); spec.loader.exec_module(ss)
from scorelib import align, match
setdir = sys.argv[1]
seeds = sys.argv[2].split(',')
AE = [0.15, 0.2, 0.3, 0.5]
M = collections.defaultdict(lambda: [0]*(len(AE)+1)); F = collections.defaultdict(lambda: [0]*(len(AE)+1))
def bucket(v, E): return sum(v >= e for e in E)
for s in seeds:
    d = '%s/%s' % (setdir, s)
    truth = ss.load_truth(d + '/clip')
    try: lines = [json.loads(l) for l in open(d + '/lines-bp.jsonl') if l.strip()]
    except OSError: continue
    lines = [l for l in lines if l.get('players') is not None]
    if not lines: continue
    frames = sorted(truth)
    period = truth[frames[1]][0]['time_ns'] - truth[frames[0]][0]['time_ns']
    rel, k0, fits = align(truth, lines, period, 1.0, frames[0], frames[-1])
    nf = len(lines[0]['pairs'])
    for n, (r, line) in enumerate(zip(rel, lines)):
        if n < 1 or (k0 + r) not in truth: continue
        players, rep = truth[k0 + r], line['players']
        m = match(players, rep, 1.0)
        mr = {j: i for i, j, _ in m}
        for j, q in enumerate(rep):
            k = 'pairs %d' % bin(q['bp']).count('1')
            (M if j in mr else F)[k][bucket(q['area'], AE)] += 1
print('area edges', AE)
for k in sorted(set(M) | set(F)):
    print('%-9s matched %-26s false %s' % (k, M[k], F[k]))
