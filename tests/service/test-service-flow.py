#!/usr/bin/env python3
"""stereod's flow planes ([pair] flow=true) end to end, read with the pure-Python reader
(client/python/stereod_client.py).

Two synthetic pairs whose left views translate by known sub-pixel steps every frame,
each its own (a sum of random plane waves, so the shifted images are exact, not
resampled), are written as raw GRAY8 streams and played by stereod in offline mode
(every frame processed, exit at the end): the frames are consecutive, so every frame
after the first carries the flow from the one before it. The two pairs' flows are
computed together (one flow engine for both, one submission per batch). A reader per
ring follows it while stereod runs and checks each frame it gets against its pair's
step:
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
import re
import subprocess
import sys
import threading
import time

stereod, client_dir, out_dir = sys.argv[1:4]
sys.path.insert(0, client_dir)
import stereod_client as sc  # noqa: E402

np = sc.np
if np is None:
    print("FAIL: numpy is needed to make the images")
    sys.exit(1)

W, H, FRAMES, FPS = 160, 96, 24, 10
STEPS = {"a": (1.25, -0.5), "b": (-0.75, 1.0)}   # px per frame: the true flow of each pair
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
src = ("filesrc location=%s ! rawvideoparse width=%d height=%d format=gray8 "
       "framerate=%d/1")
conf_text = "[daemon]\nmode=offline\nstats_interval=2\nring_slots=8\n"
pairs = {}
for name, step in STEPS.items():
    left_path = os.path.join(out_dir, "%s-left.gray" % name)
    right_path = os.path.join(out_dir, "%s-right.gray" % name)
    with open(left_path, "wb") as lf, open(right_path, "wb") as rf:
        for k in range(FRAMES):
            dx, dy = k * step[0], k * step[1]
            lf.write(texture(dx, dy).tobytes())
            rf.write(texture(dx - DISPARITY, dy).tobytes())   # right(x) = left scene at x + d
    pair = "svcflow%d%s" % (os.getpid(), name)
    pairs[pair] = step
    conf_text += ("[pair %s]\nleft=%s\nright=%s\nwidth=%d\nheight=%d\nfps=%d\n"
                  "max_disparity=30\nflow=true\n"
                  % (pair, src % (left_path, W, H, FPS), src % (right_path, W, H, FPS), W, H,
                     FPS))
conf = os.path.join(out_dir, "flow.conf")
with open(conf, "w") as f:
    f.write(conf_text)
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


class Failed(Exception):
    pass


print_lock = threading.Lock()


def open_ring(pair):
    deadline = time.monotonic() + 120
    while True:
        try:
            ring = sc.Client(pair)
            if ring.writer_pid == proc.pid:
                return ring
            ring.close()
        except (FileNotFoundError, sc.RingClosed, OSError):
            pass
        if proc.poll() is not None:
            raise Failed("stereod exited (%d) before ring %s appeared" % (proc.returncode, pair))
        if time.monotonic() > deadline:
            raise Failed("no ring %s within 120 s" % pair)
        time.sleep(0.05)


def check_ring(pair, step, result):
    """Follows the ring of `pair` to its end, checking every frame against `step`; puts
    (frames checked, frame 1 seen) or the failure into result[pair]."""
    try:
        ring = open_ring(pair)
        if ring.formats != ((1 << sc.PLANE_DISPARITY) | (1 << sc.PLANE_CONFIDENCE) |
                            sc.FORMAT_FLOW):
            raise Failed("%s: ring formats 0x%x: not disparity, confidence and the flow planes"
                         % (pair, ring.formats))
        inner = (slice(MARGIN, H - MARGIN), slice(MARGIN, W - MARGIN))
        counter, checked, first_seen = 0, [], False
        while True:
            try:
                fr = ring.read_next(counter, timeout=60)
            except sc.RingClosed:
                break
            except TimeoutError:
                raise Failed("%s: no frame for 60 s" % pair)
            counter = fr.counter
            u, v = fr.flow_px()
            if u.shape != (H, W) or fr.flow_u.dtype != np.int16:
                raise Failed("%s: flow planes of shape %s, type %s"
                             % (pair, u.shape, fr.flow_u.dtype))
            if fr.frame_number == 1:
                first_seen = True
                if np.count_nonzero(fr.flow_u != sc.FLOW_UNKNOWN) or \
                        np.count_nonzero(fr.flow_v != sc.FLOW_UNKNOWN):
                    raise Failed("%s: frame 1 has a flow (it has no previous frame)" % pair)
                continue
            # unknown in one component means unknown in both
            if np.count_nonzero(np.isnan(u) != np.isnan(v)):
                raise Failed("%s frame %d: u and v disagree about which pixels are unknown"
                             % (pair, fr.frame_number))
            ui, vi = u[inner], v[inner]
            known = ~np.isnan(ui)
            frac = known.mean()
            if frac < MIN_KNOWN:
                raise Failed("%s frame %d: %.1f %% of the inner pixels have a flow (want >= "
                             "%.0f %%)" % (pair, fr.frame_number, 100 * frac, 100 * MIN_KNOWN))
            eu, ev = np.abs(ui[known] - step[0]), np.abs(vi[known] - step[1])
            m = (float(np.median(eu)), float(np.median(ev)))
            p90 = (float(np.percentile(eu, 90)), float(np.percentile(ev, 90)))
            with print_lock:
                print("%s frame %d: %.1f %% known, |u - %.2f| median %.3f p90 %.3f, |v - %.2f| "
                      "median %.3f p90 %.3f px" % (pair, fr.frame_number, 100 * frac, step[0],
                                                   m[0], p90[0], step[1], m[1], p90[1]))
            if max(m) > MEDIAN_TOL or max(p90) > P90_TOL:
                raise Failed("%s frame %d: flow error beyond %.2f px median / %.2f px p90"
                             % (pair, fr.frame_number, MEDIAN_TOL, P90_TOL))
            checked.append(fr.frame_number)
        result[pair] = (checked, first_seen)
    except Failed as e:
        result[pair] = str(e)


results = {}
readers = [threading.Thread(target=check_ring, args=(pair, step, results))
           for pair, step in pairs.items()]
for t in readers:
    t.start()
for t in readers:
    t.join()
for pair in pairs:
    if isinstance(results.get(pair), str):
        fail(results[pair])

status = proc.wait(timeout=60)
log.close()
if status != 0:
    fail("stereod exited %d" % status)
text = open(log_path).read()
ended = [l for l in text.splitlines() if "offline: every stream ended" in l]
for pair in pairs:
    if not ended or not re.search(r"\b%s %d pairs\b" % (pair, FRAMES), ended[0]):
        fail("stereod did not publish the %d frames of %s" % (FRAMES, pair))
    checked, first_seen = results[pair]
    if len(checked) < 3:
        fail("%s: only %d frames with flow were read" % (pair, len(checked)))
    print("ok: %s: %d frames with flow checked (%s), frame 1 %s" %
          (pair, len(checked), " ".join(map(str, checked)), "seen without flow" if first_seen
           else "not read"))
# one engine computes both pairs' flows, a submission per batch
if "optical flow of 2 pairs (%dx%d) in one engine" % (W, H) not in text:
    fail("stereod did not put both pairs' flows in one engine")
