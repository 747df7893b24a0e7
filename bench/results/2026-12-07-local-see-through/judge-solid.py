import sys, re, csv, math
rows = []
for d in sys.argv[1:]:
    P = {}
    for r in csv.DictReader(open(d + '/clip/players.csv')):
        P.setdefault(int(r['frame']), []).append((float(r['x']), float(r['y'])))
    allp = [p for v in P.values() for p in v]
    for line in open(d + '/heightmap.log'):
        m = re.search(r'SEE3 \(([-\d.]+), ([-\d.]+)\) n (\d+) solid ([\d ]+)', line)
        if m:
            x, y = float(m.group(1)), float(m.group(2))
            near = min(math.hypot(x - px, y - py) for px, py in allp)
            rows.append((d, x, y, int(m.group(3)), [int(v) for v in m.group(4).split()], near))
print(len(rows), 'blobs judged;', sum(r[5] < 0.7 for r in rows), 'at players,', sum(r[5] >= 0.7 for r in rows), 'not')
for i, sc in enumerate((0, 15, 20, 30, 40, 60)):
    for k in (1, 2, 3, 5):
        pl = [r for r in rows if r[5] < 0.7 and r[4][i] < k]
        fa = [r for r in rows if r[5] >= 0.7 and r[4][i] < k]
        print('see_scale %2d need %d: drops %d at players, %d others' % (sc, k, len(pl), len(fa)))
if len(sys.argv) > 1:
    print('players dropped at see_scale 20/30, need 1:')
    for r in rows:
        if r[5] < 0.7 and (r[4][2] < 1 or r[4][3] < 1): print('  ', r)
    print('others kept at see_scale 30, need 1:')
    for r in rows:
        if r[5] >= 0.7 and r[4][3] >= 1: print('  ', r)
