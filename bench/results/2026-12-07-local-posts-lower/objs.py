# object pixels (GT above the row's median by > 3 %): measured share and share within 1 % of GT
import sys, array, math
def rp(f):
    d=open(f,'rb').read()
    parts=d.split(b'\n',3)
    w,h=map(int,parts[1].split()); s=float(parts[2])
    a=array.array('f'); a.frombytes(parts[3][:w*h*4])
    if s>0: a.byteswap()
    return w,h,a
w,h,g=rp(sys.argv[1]); _,_,d=rp(sys.argv[2])
n=m=ok=wrong=0
for y in range(0,h,2):
    row=[g[y*w+x] for x in range(0,w,2)]
    fin=sorted(v for v in row if math.isfinite(v))
    if not fin: continue
    med=fin[len(fin)//2]
    for x in range(0,w,2):
        gv=g[y*w+x]
        if not math.isfinite(gv) or gv < med*1.03 or gv < 20: continue
        n+=1; dv=d[y*w+x]
        if math.isfinite(dv):
            m+=1
            if abs(dv-gv) <= 0.01*gv: ok+=1
            else: wrong+=1
print('%s object px %d: measured %.1f%%, right (1%%) %.1f%%, wrong %.1f%%'%(sys.argv[2],n,100*m/n,100*ok/n,100*wrong/n))
# ground/background pixels: measured and wrong (> 2 %)
gn=gm=gw=0
for y in range(0,h,4):
    for x in range(0,w,4):
        gv=g[y*w+x]
        if not math.isfinite(gv) or gv < 1: continue
        gn+=1; dv=d[y*w+x]
        if math.isfinite(dv):
            gm+=1
            if abs(dv-gv) > 0.02*gv: gw+=1
print('   all px %d: measured %.1f%%, wrong (2%%) %.2f%%'%(gn,100*gm/gn,100*gw/gn))
