# per player: pixels of its image box in a pair's left view, measured, their points' range error
import sys, array, math, configparser, csv
def rp(f):
    d=open(f,'rb').read(); parts=d.split(b'\n',3)
    w,h=map(int,parts[1].split()); s=float(parts[2])
    a=array.array('f'); a.frombytes(parts[3][:w*h*4])
    if s>0: a.byteswap()
    return w,h,a
calib, gtf, dispf, players, frame = sys.argv[1:6]
cp=configparser.ConfigParser(); cp.read(calib)
Q=[float(v) for v in cp['rectification']['Q'].split()]
P1=[float(v) for v in cp['rectification']['P1'].split()]
R=[float(v) for v in cp['pose']['rotation'].split()]
C=[float(v) for v in cp['pose']['centre'].split()]
w,h,g=rp(gtf); _,_,a=rp(dispf)
def at(arr,x,y): return arr[(h-1-y)*w+x]
def world(x,y,d):
    X=x+Q[3]; Y=y+Q[7]; Z=Q[11]; W=Q[14]*d+Q[15]
    X/=W; Y/=W; Z/=W
    return (R[0]*X+R[1]*Y+R[2]*Z+C[0], R[3]*X+R[4]*Y+R[5]*Z+C[1], R[6]*X+R[7]*Y+R[8]*Z+C[2])
def proj(p):
    q=[p[i]-C[i] for i in range(3)]
    X=R[0]*q[0]+R[3]*q[1]+R[6]*q[2]; Y=R[1]*q[0]+R[4]*q[1]+R[7]*q[2]; Z=R[2]*q[0]+R[5]*q[1]+R[8]*q[2]
    return P1[0]*X/Z+P1[2], P1[5]*Y/Z+P1[6], Z
for r in csv.DictReader(open(players)):
    if int(r['frame'])!=int(frame): continue
    px,py,ph,rad=float(r['x']),float(r['y']),float(r['height']),float(r['radius'])
    u0,v0,Z=proj((px,py,0)); u1,v1,_=proj((px,py,ph))
    if not (0<=u0<w and 0<=v1 and v0<h) or Z<0: continue
    hw=max(1,int(P1[0]*rad/Z+1))
    n=m=0; errs=[]; hs=[]
    for y in range(max(0,int(v1)), min(h,int(v0)+1)):
        for x in range(max(0,int(u0)-hw), min(w,int(u0)+hw+1)):
            gd=at(g,x,y)
            if not math.isfinite(gd): continue
            wp=world(x,y,gd)
            if not (0.2<wp[2]<ph+0.1 and math.hypot(wp[0]-px,wp[1]-py)<rad+0.15): continue
            n+=1
            d=at(a,x,y)
            if math.isfinite(d) and d>0:
                m+=1; q=world(x,y,d); errs.append(math.hypot(q[0]-px,q[1]-py)); hs.append(q[2])
    errs.sort()
    med=errs[len(errs)//2] if errs else float('nan')
    print('id%-2s %5.1f m  body px %4d measured %4d (%3.0f%%)  point dist to axis median %.2f m  within 0.5 m %d  heights>0.7: %d'%(
        r['id'], Z, n, m, 100*m/max(n,1), med, sum(1 for e in errs if e<0.5), sum(1 for z in hs if z>0.7)))
