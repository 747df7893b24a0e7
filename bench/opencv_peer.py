#!/usr/bin/env python3
"""The peers of stereod-bench: OpenCV StereoSGBM (3-way) and StereoBM on the same pairs.

    python3 bench/opencv_peer.py DIR [--disparities 128] [--runs 5] [--threads N]

DIR holds the pairs stereod-bench --save-pairs DIR wrote (WxH-left.pgm, WxH-right.pgm).
Prints one line per size and method: median ms per pair (host to host: the images are in
memory, the disparity is returned), pairs/s and Mpixel/s; CSV with --csv FILE.
SGBM settings as in shared/data/middlebury/README.md: block 5, P1 = 8*5*5, P2 = 32*5*5,
uniqueness 10, disp12MaxDiff 1, speckle 100/2, MODE_SGBM_3WAY. BM: block 15.
"""
import argparse
import glob
import os
import statistics
import time

import cv2


def time_method(matcher, left, right, runs):
    matcher.compute(left, right)  # warm-up
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        matcher.compute(left, right)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--disparities", type=int, default=128)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0, help="0 = OpenCV's default (all cores)")
    ap.add_argument("--csv")
    a = ap.parse_args()
    if a.threads:
        cv2.setNumThreads(a.threads)
    rows = []
    print(f"# OpenCV {cv2.__version__}, {cv2.getNumThreads()} threads, "
          f"{a.disparities} disparities, median of {a.runs}")
    for lp in sorted(glob.glob(os.path.join(a.dir, "*-left.pgm")),
                     key=lambda p: int(os.path.basename(p).split("x")[0])):
        size = os.path.basename(lp)[: -len("-left.pgm")]
        left = cv2.imread(lp, cv2.IMREAD_GRAYSCALE)
        right = cv2.imread(lp.replace("-left.pgm", "-right.pgm"), cv2.IMREAD_GRAYSCALE)
        h, w = left.shape
        nd = min(a.disparities, (w // 2) // 16 * 16)
        sgbm = cv2.StereoSGBM_create(minDisparity=0, numDisparities=nd, blockSize=5,
                                     P1=8 * 25, P2=32 * 25, disp12MaxDiff=1,
                                     uniquenessRatio=10, speckleWindowSize=100,
                                     speckleRange=2, mode=cv2.STEREO_SGBM_MODE_SGBM_3WAY)
        bm = cv2.StereoBM_create(numDisparities=nd, blockSize=15)
        for name, m in (("SGBM-3way", sgbm), ("BM", bm)):
            runs = a.runs if w * h <= 2_100_000 else max(1, a.runs // 2)
            ms = time_method(m, left, right, runs)
            rows.append((size, name, ms))
            print(f"{size:>10} {name:>10} {ms:9.1f} ms/pair {1000 / ms:8.2f} pairs/s "
                  f"{w * h / ms / 1e3:8.1f} Mpix/s", flush=True)
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("size,method,ms_per_pair\n")
            for r in rows:
                f.write(f"{r[0]},{r[1]},{r[2]:.3f}\n")


if __name__ == "__main__":
    main()
