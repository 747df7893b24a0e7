import sys, json, math, importlib.util
sys.path.insert(0, '/work/main/bench')
spec = importlib.util.spec_from_file_location('ss', '/work/main/bench/stadium-score.py')
ss = importlib.util.module_from_spec(spec); spec.loader.exec_module(ss)
from scorelib import align, match
def run(d, lines_name='lines.jsonl'):
    clip = d + '/clip'
    truth = ss.load_truth(clip); cams = ss.load_cameras(clip)
    lines = [json.loads(l) for l in open(d + '/' + lines_name) if l.strip()]
    lines = [l for l in lines if l.get('players') is not None]
    frames = sorted(truth)
    period = truth[frames[1]][0]['time_ns'] - truth[frames[0]][0]['time_ns']
    rel, k0, fits = align(truth, lines, period, 1.0, frames[0], frames[-1])
    out = []
    for n, (r, line) in enumerate(zip(rel, lines)):
        if n < 1 or (k0 + r) not in truth: continue
        players, rep = truth[k0 + r], line['players']
        fused = ss.pair_names(line, None, cams)
        m = match(players, rep, 1.0)
        mp = {i: (j, dd) for i, j, dd in m}
        for i, p in enumerate(players):
            seen = bool(p['seen_by'] & fused)
            if not seen: continue
            near = min((math.hypot(p['x']-q['x'], p['y']-q['y']) for q in rep), default=99)
            if i not in mp:
                out.append(('miss', k0+r, p['id'], p['nearest'], ';'.join(sorted(p['seen_by'])), near))
            elif mp[i][1] > 0.3:
                out.append(('err', k0+r, p['id'], p['nearest'], ';'.join(sorted(p['seen_by'])), mp[i][1]))
    return out
if __name__ == '__main__':
    for d in sys.argv[1:]:
        for o in run(d):
            print(d.rsplit('/',1)[-1], '%s f%d id%d near %.1f m seen %s dist %.2f' % o)
