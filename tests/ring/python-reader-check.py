#!/usr/bin/env python3
"""Reads frames of a test ring with client/python/stereod_client.py and checks them
against the pattern of tests/ring/ring-test-util.h (kept in step with it by hand).

    python-reader-check.py MODULE_DIR PAIR FRAMES SECONDS

Prints "peer ready" once the ring is open, then one summary line in the format of
ring-test-peer: peer frames=N bad=N torn=N numpy=0|1 closed=0|1 ordered=0|1 ...
"""

import math
import sys
import time

sys.path.insert(0, sys.argv[1])
import stereod_client  # noqa: E402

FRAME_OFFSET = 1000
CAPTURE_BASE = 1700000000000000000


def expect(f, x, y):
    disp = -32768 if x == 0 and y == 0 else (f * 7 + x + 3 * y) & 0x3FFF
    depth = (f * 13 + 2 * x + y) & 0xFFFF
    conf = (f + 5 * x + y) & 0xFF
    flt = (f & 0xFFFF) + 0.5 * x + 0.25 * y
    if x == 1 and y == 0:
        fu = fv = -32768
    else:
        fu = ((f * 3 + 5 * x + 2 * y) & 0x7FF) - 1024
        fv = ((f * 11 + x + 7 * y) & 0x3FF) - 512
    return disp, depth, conf, flt, fu, fv


def check_numpy(fr):
    np = stereod_client.np
    f = fr.frame_number
    y, x = np.mgrid[0:fr.height, 0:fr.width].astype(np.int64)
    disp = ((f * 7 + x + 3 * y) & 0x3FFF).astype(np.int16)
    disp[0, 0] = -32768
    bad = int(np.count_nonzero(fr.disparity != disp))
    bad += int(np.count_nonzero(fr.depth != ((f * 13 + 2 * x + y) & 0xFFFF)))
    bad += int(np.count_nonzero(fr.confidence != ((f + 5 * x + y) & 0xFF)))
    flt = (f & 0xFFFF) + 0.5 * x + 0.25 * y
    bad += int(np.count_nonzero(fr.float32 != flt.astype(np.float32)))
    fu = (((f * 3 + 5 * x + 2 * y) & 0x7FF) - 1024).astype(np.int16)
    fv = (((f * 11 + x + 7 * y) & 0x3FF) - 512).astype(np.int16)
    fu[0, 1] = fv[0, 1] = -32768
    bad += int(np.count_nonzero(fr.flow_u != fu)) + int(np.count_nonzero(fr.flow_v != fv))
    pu, pv = fr.flow_px()
    bad += int(not (math.isnan(pu[0, 1]) and math.isnan(pv[0, 1])))
    bad += int(pu[2, 3] != fu[2, 3] / 32.0) + int(pv[2, 3] != fv[2, 3] / 32.0)
    px = fr.disparity_px()
    bad += int(not math.isnan(px[0, 0]))
    bad += int(px[1, 2] != disp[1, 2] * fr.disparity_scale)
    bad += int(fr.disparity.shape != (fr.height, fr.width))
    return bad


def check_pure(fr):
    f, w = fr.frame_number, fr.width
    bad = 0
    for y in range(fr.height):
        for x in range(w):
            disp, depth, conf, flt, fu, fv = expect(f, x, y)
            i = y * w + x
            bad += fr.disparity[i] != disp
            bad += fr.depth[i] != depth
            bad += fr.confidence[i] != conf
            bad += fr.float32[i] != flt
            bad += fr.flow_u[i] != fu
            bad += fr.flow_v[i] != fv
    pu, pv = fr.flow_px()
    bad += not (math.isnan(pu[0][1]) and math.isnan(pv[0][1]))
    bad += pu[2][3] != expect(f, 3, 2)[4] / 32.0
    px = fr.disparity_px()
    bad += not math.isnan(px[0][0])
    bad += px[1][2] != expect(f, 2, 1)[0] * fr.disparity_scale
    bad += len(fr.disparity) != fr.width * fr.height
    return bad


def check_frame(fr):
    f = fr.frame_number
    bad = int(f != fr.counter + FRAME_OFFSET)
    bad += fr.capture_ns != CAPTURE_BASE + f * 1000
    bad += fr.flags != (f & 1)
    bad += fr.publish_ns == 0
    return bad + (check_numpy(fr) if stereod_client.np is not None else check_pure(fr))


def main():
    pair, frames_wanted, seconds = sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    ring = stereod_client.Client(pair)
    print("peer ready", flush=True)
    bad = 0
    cal = ring.calibration
    bad += (cal["fx"], cal["fy"], cal["baseline"], cal["doffs"]) != (700.5, 701.25, 0.12, 3.5)
    bad += cal["q"][1][1] != 1.5 or cal["q"][3][3] != 6.5
    bad += ring.disparity_scale != 1.0 / 32
    bad += ring.formats != 0x3F or ring.slot_count != 4 or ring.name != pair

    frames, last, first, closed, ordered, timeouts = 0, 0, 0, 0, 1, 0
    end = time.monotonic() + seconds
    while frames < frames_wanted and time.monotonic() < end:
        try:
            ring.wait(last, 0.5)
        except stereod_client.RingClosed:
            closed = 1
            break
        except TimeoutError:
            timeouts += 1
            continue
        try:
            fr = ring.read_latest()
        except stereod_client.TornReadError:
            continue
        first = first or fr.counter
        ordered &= fr.counter > last
        last = fr.counter
        bad += check_frame(fr)
        frames += 1
    print("peer frames=%d bad=%d torn=%d numpy=%d closed=%d ordered=%d timeouts=%d "
          "first=%d last=%d" % (frames, bad, ring.torn, stereod_client.np is not None,
                                closed, ordered, timeouts, first, last), flush=True)
    ring.close()


if __name__ == "__main__":
    main()
