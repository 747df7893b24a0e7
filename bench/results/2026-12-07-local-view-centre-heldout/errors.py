# The matched players' position errors of kept stadium-bench folders, split two ways:
# along / across the view of the nearest pair that sees the player, by its distance band,
# and along / across the player's motion (its truth velocity over the frame before), by
# speed band.  usage: errors.py LINES_FILE SEED_DIR...   (LINES_FILE: lines.jsonl, or a
# variant's lines-NAME.jsonl; each SEED_DIR holds clip/ and the lines)
import sys, os, json, math, importlib.util
bench = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
sys.path.insert(0, bench)
spec = importlib.util.spec_from_file_location('ss', os.path.join(bench, 'stadium-score.py'))
ss = importlib.util.module_from_spec(spec); spec.loader.exec_module(ss)
from scorelib import align, match


def split(ex, ey, ux, uy):
    """(along, across) the unit direction (ux, uy)"""
    return ex * ux + ey * uy, -ex * uy + ey * ux


by_view, by_motion = {}, {}
ln = sys.argv[1]
for d in sys.argv[2:]:
    clip = d + '/clip'
    truth = ss.load_truth(clip); cams = ss.load_cameras(clip)
    lines = [json.loads(l) for l in open(d + '/' + ln) if l.strip()]
    lines = [l for l in lines if l.get('players') is not None]
    frames = sorted(truth)
    period = truth[frames[1]][0]['time_ns'] - truth[frames[0]][0]['time_ns']
    rel, k0, fits = align(truth, lines, period, 1.0, frames[0], frames[-1])
    for n, (r, line) in enumerate(zip(rel, lines)):
        k = k0 + r
        if n < 1 or k not in truth: continue
        players, rep = truth[k], line['players']
        prev = {o['id']: o for o in truth.get(k - 1, [])}
        for i, j, e in match(players, rep, 1.0):
            p = players[i]; q = rep[j]
            ex, ey = q['x'] - p['x'], q['y'] - p['y']
            sb = [cams[s] for s in p.get('seen_by', ()) if s in cams] or list(cams.values())
            c = min(sb, key=lambda c: math.hypot(p['x'] - c[0], p['y'] - c[1]))
            D = math.hypot(p['x'] - c[0], p['y'] - c[1])
            b = '0-30' if D < 30 else '30-60' if D < 60 else '60-90' if D < 90 else '90+'
            by_view.setdefault(b, []).append(split(ex, ey, (p['x'] - c[0]) / D, (p['y'] - c[1]) / D)
                                             + (math.hypot(ex, ey),))
            if p['id'] not in prev: continue
            pp = prev[p['id']]
            vx = (p['x'] - pp['x']) / (period * 1e-9); vy = (p['y'] - pp['y']) / (period * 1e-9)
            sp = math.hypot(vx, vy)
            if sp < 0.5:
                b, al, ac = 'slow<0.5', 0.0, 0.0
            else:
                b = '0.5-3' if sp < 3 else '3-6' if sp < 6 else '6+'
                al, ac = split(ex, ey, vx / sp, vy / sp)
            by_motion.setdefault(b, []).append((al, ac, math.hypot(ex, ey)))


def report(title, bands, order):
    print(title)
    for b in order:
        v = bands.get(b, [])
        if not v: continue
        n = len(v)
        print('%-8s n %4d along mean %+.3f rms %.3f | across mean %+.3f rms %.3f | total rms %.3f' % (
            b, n, sum(a for a, _, _ in v) / n, math.sqrt(sum(a * a for a, _, _ in v) / n),
            sum(c for _, c, _ in v) / n, math.sqrt(sum(c * c for _, c, _ in v) / n),
            math.sqrt(sum(t * t for _, _, t in v) / n)))


report('# along / across the view of the nearest pair that sees the player (m from it)',
       by_view, ['0-30', '30-60', '60-90', '90+'])
report('# along / across the player\'s motion (m/s; below 0.5 m/s not split)',
       by_motion, ['slow<0.5', '0.5-3', '3-6', '6+'])
