#!/usr/bin/env python3
"""Reads a test ring with client/python/stereod_client.py through read_next() until it
raises, or until it has read FRAMES frames, for the hostile, owner and follow tests.

    python-ring-check.py MODULE_DIR PAIR TIMEOUT [--frames N] [--owner SPEC] [--dir DIR]
                         [--follow]

Prints "peer ready" once the ring is open, "peer frame COUNTER writer PID gen G" for
every frame, "raised NAME errno=E" when the open or a read raised, and last a summary
line: peer frames=N bad=N generations=G discont=N raised=NAME|none
bad counts frames whose metadata does not follow the ring-test-util pattern; discont the
even-numbered frames flagged DISCONT (odd ones carry the flag in the pattern itself).
"""

import argparse
import sys

sys.path.insert(0, sys.argv[1])
import stereod_client  # noqa: E402

FRAME_OFFSET = 1000
CAPTURE_BASE = 1700000000000000000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("module_dir")
    ap.add_argument("pair")
    ap.add_argument("timeout", type=float)
    ap.add_argument("--frames", type=int, default=0)
    ap.add_argument("--owner", default=None)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--follow", action="store_true")
    args = ap.parse_args()

    raised = "none"
    frames = bad = discont = 0
    ring = None
    try:
        if args.follow:
            ring = stereod_client.Client.open_wait(args.pair, args.timeout, dir=args.dir,
                                                   owner=args.owner, follow=True)
        else:
            ring = stereod_client.Client(args.pair, dir=args.dir, owner=args.owner)
        print("peer ready", flush=True)
        last = 0
        while args.frames == 0 or frames < args.frames:
            f = ring.read_next(last, args.timeout)
            last = f.counter
            frames += 1
            bad += int(f.frame_number != f.counter + FRAME_OFFSET)
            bad += int(f.capture_ns != CAPTURE_BASE + f.frame_number * 1000)
            # The pattern's own flags are frame_number & 1 (bit 0 is FLAG_DISCONT): only
            # an even frame tells the reader's flag from the pattern's.
            if f.flags & stereod_client.FLAG_DISCONT and f.frame_number % 2 == 0:
                discont += 1
            print("peer frame %d writer %d gen %d" % (f.counter, ring.writer_pid, ring.generation),
                  flush=True)
    except (OSError, EOFError) as e:
        raised = type(e).__name__
        print("raised %s errno=%s: %s" % (raised, getattr(e, "errno", None), e), flush=True)
    print("peer frames=%d bad=%d generations=%d discont=%d raised=%s"
          % (frames, bad, ring.generation if ring else 0, discont, raised), flush=True)
    if ring is not None:
        ring.close()


if __name__ == "__main__":
    main()
