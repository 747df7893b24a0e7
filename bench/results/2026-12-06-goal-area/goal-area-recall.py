import json,csv,math,collections,glob,os,sys
for name in sys.argv[1:]:
  c=collections.Counter()
  for d in sorted(glob.glob('/tmp/lq8/set/*/')):
    truth=collections.defaultdict(list)
    for r in csv.DictReader(open(d+'clip/players.csv')): truth[int(r['frame'])].append(r)
    f=d+('lines.jsonl' if name=='def' else 'lines-%s.jsonl'%name)
    if not os.path.exists(f): continue
    L=[json.loads(l) for l in open(f) if l.startswith('{')]
    for l in L[1:]:
      P=truth[l['frame']]; R=l['players']
      cand=sorted((math.hypot(float(p['x'])-r['x'],float(p['y'])-r['y']),i,j) for i,p in enumerate(P) for j,r in enumerate(R))
      mp,mr={},{}
      for dd,i,j in cand:
        if dd<1 and i not in mp and j not in mr: mp[i]=j; mr[j]=i
      for i,p in enumerate(P):
        if not p['seen_by']: continue
        x,y=float(p['x']),float(p['y'])
        k='goal' if abs(x)>44 and abs(y)<12 else 'rest'
        c[k,'n']+=1; c[k,'hit']+= i in mp
      for j,r in enumerate(R):
        if j in mr: continue
        k='goal' if abs(r['x'])>44 and abs(r['y'])<12 else 'rest'
        c[k,'false']+=1
      c['lines']+=1
  print(name, ' '.join('%s %d players %.1f%% recall, %d false'%(k,c[k,'n'],100*c[k,'hit']/max(1,c[k,'n']),c[k,'false']) for k in ('goal','rest')), c['lines'],'lines')
