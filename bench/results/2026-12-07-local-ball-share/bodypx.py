# body pixels (GT point 0.3-2.0 m up, inside the pitch) of a pair's left view: share measured,
# right within 1 % of GT, by distance band; usage: bodypx.py calib.conf gt.pfm x.pfm [x2.pfm ...]
import sys, array, math, configparser
def rp(f):
    d=open(f,'rb').read(); parts=d.split(b'\n',3)
    w,h=map(int,parts[1].split()); s=float(parts[2])
    a=array.array('f'); a.frombytes(parts[3][:w*h*4])
    if s>0: a.byteswap()
    return w,h,a
cp=configparser.ConfigParser(); cp.read(sys.argv[1])
Q=[float(v) for v in cp['rectification']['Q'].split()]
R=[float(v) for v in cp['pose']['rotation'].split()]
C=[float(v) for v in cp['pose']['centre'].split()]
w,h,g=rp(sys.argv[2])
body=[]
for y in range(h):
    for x in range(w):
        d=g[y*w+x]
        if not math.isfinite(d) or d<=0: continue
        X=x+Q[3]; Y=(h-1-y)+Q[7]; Z=Q[11]; W=Q[14]*d+Q[15]
        X/=W; Y/=W; Z/=W
        px=R[0]*X+R[1]*Y+R[2]*Z+C[0]; py=R[3]*X+R[4]*Y+R[5]*Z+C[1]; pz=R[6]*X+R[7]*Y+R[8]*Z+C[2]
        if 0.3<pz<2.0 and abs(px)<53 and abs(py)<35:
            body.append((y*w+x, d, Z))
bands=[(0,30),(30,60),(60,90),(90,120),(120,1e9)]
print('body px', len(body))
for f in sys.argv[3:]:
    _,_,a=rp(f)
    s=[]
    for lo,hi in bands:
        sel=[(i,d) for i,d,z in body if lo<=z<hi]
        if not sel: continue
        m=sum(1 for i,d in sel if math.isfinite(a[i]))
        ok=sum(1 for i,d in sel if math.isfinite(a[i]) and abs(a[i]-d)<=0.01*d)
        s.append('%d-%s m: n %d meas %.0f%% ok %.0f%%'%(lo, '' if hi>1e8 else str(hi), len(sel),100*m/len(sel),100*ok/len(sel)))
    print(f.rsplit('/',1)[-1], ' | '.join(s))
