#!/usr/bin/env python3
"""stereod's flow planes ([pair] flow=true) end to end, read with the pure-Python reader
(client/python/stereod_client.py).

A synthetic pair whose left view translates by a known sub-pixel step every frame (a sum
of random plane waves, so the shifted images are exact, not resampled) is written as two
raw GRAY8 streams and played by stereod in offline mode (every frame processed, exit at
the end): the frames are consecutive, so every frame after the first carries the flow
from the one before it. The reader follows the ring while stereod runs and checks each
frame it gets:
  - the ring has the FLOW_U and FLOW_V planes beside the disparity;
  - frame 1 (when it is read) has no flow: every pixel unknown;
  - later frames: at least MIN_KNOWN of the pixels inside the margin have a flow, whose
    median error against the true step is below MEDIAN_TOL px and whose 90th percentile
    error is below P90_TOL px (each component).
Prints the errors measured.

  test-service-flow.py STEREOD CLIENT_PY_DIR TMPDIR
"""
import math
import os
import subprocess
import sys
import time

stereod, client_dir, out_dir = sys.argv[1:4]
sys.path.insert(0, client_dir)
import stereod_client as sc  # noqa: E402

np = sc.np
if np is None:
    print("FAIL: numpy is needed to make the images")
    sys.exit(1)

W, H, FRAMES, FPS = 160, 96, 24, 10
STEP = (1.25, -0.5)          # px per frame: the true flow of every pixel
DISPARITY = 6.0              # px, the right view's shift
MARGIN = 12                  # px: content enters the view at the borders
MIN_KNOWN = 0.6
MEDIAN_TOL = 0.05
P90_TOL = 0.1

rng = np.random.default_rng(16)
waves = []
for _ in range(24):
    f = rng.uniform(0.2, 1.1)                    # rad/px
    a = rng.uniform(0.0, math.pi)
    waves.append((f * math.cos(a), f * math.sin(a), rng.uniform(0, 2 * math.pi),
                  rng.uniform(4.0, 9.0)))
ys, xs = np.mgrid[0:H, 0:W].astype(np.float64)


def texture(dx, dy):
    """The texture sampled at (x - dx, y - dy): the view translated by (dx, dy)."""
    v = np.full((H, W), 128.0)
    for kx, ky, phase, amp in waves:
        v += amp * np.sin(kx * (xs - dx) + ky * (ys - dy) + phase)
    return np.clip(np.rint(v), 0, 255).astype(np.uint8)


os.makedirs(out_dir, exist_ok=True)
left_path, right_path = os.path.join(out_dir, "left.gray"), os.path.join(out_dir, "right.gray")
with open(left_path, "wb") as lf, open(right_path, "wb") as rf:
    for k in range(FRAMES):
        dx, dy = k * STEP[0], k * STEP[1]
        lf.write(texture(dx, dy).tobytes())
        rf.write(texture(dx - DISPARITY, dy).tobytes())   # right(x) = left scene at x + d

pair = "svcflow%d" % os.getpid()
src = ("filesrc location=%s ! rawvideoparse width=%d height=%d format=gray8 "
       "framerate=%d/1")
conf = os.path.join(out_dir, "flow.conf")
with open(conf, "w") as f:
    f.write("[daemon]\nmode=offline\nstats_interval=2\nring_slots=8\n"
            "[pair %s]\nleft=%s\nright=%s\nwidth=%d\nheight=%d\nfps=%d\nmax_disparity=30\n"
            "flow=true\n" % (pair, src % (left_path, W, H, FPS), src % (right_path, W, H, FPS),
                             W, H, FPS))
log_path = os.path.join(out_dir, "stereod.log")
log = open(log_path, "w")
proc = subprocess.Popen([stereod, "--config", conf], stderr=log, stdout=log)


def fail(msg):
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    log.close()
    print("FAIL: %s\nstereod log:\n%s" % (msg, open(log_path).read()))
    sys.exit(1)


ring = None
deadline = time.monotonic() + 120
while ring is None:
    try:
        ring = sc.Client(pair)
        if ring.writer_pid != proc.pid:
            ring.close()
            ring = None
    except (FileNotFoundError, sc.RingClosed, OSError):
        ring = None
    if ring is None:
        if proc.poll() is not None:
            fail("stereod exited (%d) before its ring appeared" % proc.returncode)
        if time.monotonic() > deadline:
            fail("no ring within 120 s")
        time.sleep(0.05)

if ring.formats != ((1 << sc.PLANE_DISPARITY) | (1 << sc.PLANE_CONFIDENCE) | sc.FORMAT_FLOW):
    fail("ring formats 0x%x: not disparity, confidence and the flow planes" % ring.formats)

inner = (slice(MARGIN, H - MARGIN), slice(MARGIN, W - MARGIN))
counter, checked, first_seen = 0, [], False
while True:
    try:
        fr = ring.read_next(counter, timeout=60)
    except sc.RingClosed:
        break
    except TimeoutError:
        fail("no frame for 60 s")
    counter = fr.counter
    u, v = fr.flow_px()
    if u.shape != (H, W) or fr.flow_u.dtype != np.int16:
        fail("flow planes of shape %s, type %s" % (u.shape, fr.flow_u.dtype))
    if fr.frame_number == 1:
        first_seen = True
        if np.count_nonzero(fr.flow_u != sc.FLOW_UNKNOWN) or \
                np.count_nonzero(fr.flow_v != sc.FLOW_UNKNOWN):
            fail("frame 1 has a flow (it has no previous frame)")
        continue
    # unknown in one component means unknown in both
    if np.count_nonzero(np.isnan(u) != np.isnan(v)):
        fail("frame %d: u and v disagree about which pixels are unknown" % fr.frame_number)
    ui, vi = u[inner], v[inner]
    known = ~np.isnan(ui)
    frac = known.mean()
    if frac < MIN_KNOWN:
        fail("frame %d: %.1f %% of the inner pixels have a flow (want >= %.0f %%)"
             % (fr.frame_number, 100 * frac, 100 * MIN_KNOWN))
    eu, ev = np.abs(ui[known] - STEP[0]), np.abs(vi[known] - STEP[1])
    m = (float(np.median(eu)), float(np.median(ev)))
    p90 = (float(np.percentile(eu, 90)), float(np.percentile(ev, 90)))
    print("frame %d: %.1f %% known, |u - %.2f| median %.3f p90 %.3f, |v - %.2f| median %.3f "
          "p90 %.3f px" % (fr.frame_number, 100 * frac, STEP[0], m[0], p90[0], STEP[1], m[1],
                           p90[1]))
    if max(m) > MEDIAN_TOL or max(p90) > P90_TOL:
        fail("frame %d: flow error beyond %.2f px median / %.2f px p90"
             % (fr.frame_number, MEDIAN_TOL, P90_TOL))
    checked.append(fr.frame_number)

status = proc.wait(timeout=60)
log.close()
if status != 0:
    fail("stereod exited %d" % status)
if "%s %d pairs published" % (pair, FRAMES) not in open(log_path).read():
    fail("stereod did not publish its %d frames" % FRAMES)
if len(checked) < 3:
    fail("only %d frames with flow were read" % len(checked))
print("ok: %d frames with flow checked (%s), frame 1 %s" %
      (len(checked), " ".join(map(str, checked)), "seen without flow" if first_seen
       else "not read"))
