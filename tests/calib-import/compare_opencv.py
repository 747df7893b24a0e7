#!/usr/bin/python3
"""compare_opencv: calib_rectified_to_raw (through calib-check --map) against OpenCV on
random calibrations of each distortion model (4, 5, 8, 12 and 14 coefficients).

    compare_opencv.py CALIB_CHECK [TRIALS]

Needs python3-opencv, which the build does not: run it by hand (it is not a meson
test). Two comparisons per model:
 - cv2.initUndistortRectifyMap(K, D, R, P, size, CV_32FC1), the map OpenCV remaps with,
   stored in float: the difference includes that rounding (half a float step, 7.6e-6 px
   for positions of 128..256 px);
 - the same map in double: the rectified ray R^T P[:, :3]^-1 (x, y, 1) projected by
   cv2.projectPoints (calib3d's own implementation of the 14-coefficient model).
Prints the largest difference of each and exits 1 when the double one exceeds 1e-6 px.
"""

import os
import subprocess
import sys
import tempfile

import cv2
import numpy as np

CHECK = sys.argv[1]
TRIALS = int(sys.argv[2]) if len(sys.argv) > 2 else 20
W, H = 160, 120
rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))


def rotation(angle):
    axis = rng.uniform(-1, 1, 3)
    axis *= rng.uniform(-angle, angle) / np.linalg.norm(axis)
    return cv2.Rodrigues(axis)[0]


def lens(model):
    d = np.zeros(14)
    rational = model >= 8 and rng.random() < 0.5
    d[0] = rng.uniform(0, 20) if rational else rng.uniform(-0.4, 0.2)
    d[1] = rng.uniform(-0.3, 0.3) * (10 if rational else 1)
    d[2:4] = rng.uniform(-0.003, 0.003, 2)
    if model >= 5:
        d[4] = rng.uniform(-0.1, 0.1) * (10 if rational else 1)
    if model >= 8:
        base = d[[0, 1, 4]] if rational else np.zeros(3)
        d[5:8] = base + rng.uniform([-0.3, -0.3, -0.1], [0.3, 0.3, 0.1])
    if model >= 12:
        d[8:12] = rng.uniform(-0.005, 0.005, 4)
    if model >= 14:
        d[12:14] = rng.uniform(-0.05, 0.05, 2)
    return d[:model]


def numbers(values):
    return " ".join(repr(float(v) + 0.0) for v in np.asarray(values).flat)


def calibration(model):
    f = rng.uniform(150, 300)
    fr = f * rng.uniform(0.8, 1.1)
    cx, cy = W / 2 + rng.uniform(-5, 5), H / 2 + rng.uniform(-5, 5)
    P1 = np.array([[fr, 0, cx, 0], [0, fr, cy, 0], [0, 0, 1, 0]])
    P2 = P1.copy()
    P2[0, 3] = -fr * 0.3
    tx = P2[0, 3] / P2[0, 0]
    Q = np.array([[1, 0, 0, -cx], [0, 1, 0, -cy], [0, 0, 0, fr], [0, 0, -1 / tx, 0]])
    sides = []
    for _ in range(2):
        K = np.array([[f * rng.uniform(0.95, 1.05), 0, W / 2 + rng.uniform(-8, 8)],
                      [0, 0, H / 2 + rng.uniform(-8, 8)], [0, 0, 1]])
        K[1, 1] = K[0, 0] * rng.uniform(0.98, 1.02)
        sides.append((K, lens(model), rotation(0.1)))
    text = ["[calibration]", "version=1", f"width={W}", f"height={H}"]
    for name, (K, D, _) in zip(("left", "right"), sides):
        text += [f"[{name}]", f"K={numbers(K)}", f"distortion={numbers(D)}"]
    text += ["[rectification]", f"R1={numbers(sides[0][2])}", f"R2={numbers(sides[1][2])}",
             f"P1={numbers(P1)}", f"P2={numbers(P2)}", f"Q={numbers(Q)}",
             "[pose]", "rotation=1 0 0 0 1 0 0 0 1", "centre=0 0 0", ""]
    return "\n".join(text), sides, (P1, P2)


def main():
    worst_float, worst_double, failed = {}, {}, False
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "c.conf")
        for model in (4, 5, 8, 12, 14):
            worst_float[model] = worst_double[model] = 0.0
            done = 0
            while done < TRIALS:
                text, sides, Ps = calibration(model)
                with open(path, "w") as f:
                    f.write(text)
                p = subprocess.run([CHECK, "--map", path], capture_output=True, text=True)
                lines = p.stdout.splitlines()
                if p.returncode != 0:
                    continue        # a draw calib_load refuses (denominator, range): redraw
                done += 1
                ours = np.loadtxt(lines[1:]).reshape(2, H, W, 5)
                for side, ((K, D, R), P) in enumerate(zip(sides, Ps)):
                    mx, my = cv2.initUndistortRectifyMap(K, D, R, P, (W, H), cv2.CV_32FC1)
                    diff = max(np.abs(ours[side, :, :, 3] - mx).max(),
                               np.abs(ours[side, :, :, 4] - my).max())
                    worst_float[model] = max(worst_float[model], diff)
                    ys, xs = np.mgrid[0:H, 0:W]
                    pix = np.stack([xs.ravel(), ys.ravel(), np.ones(W * H)])
                    rays = (R.T @ np.linalg.inv(P[:, :3]) @ pix).T
                    proj = cv2.projectPoints(rays, np.zeros(3), np.zeros(3), K, D)[0]
                    proj = proj.reshape(H, W, 2)
                    diff = max(np.abs(ours[side, :, :, 3] - proj[:, :, 0]).max(),
                               np.abs(ours[side, :, :, 4] - proj[:, :, 1]).max())
                    worst_double[model] = max(worst_double[model], diff)
            failed = failed or worst_double[model] > 1e-6
            print(f"{model:2d} coefficients, {TRIALS} calibrations of {W}x{H}: max |ours - "
                  f"initUndistortRectifyMap (float)| {worst_float[model]:.3g} px, max |ours - "
                  f"projectPoints (double)| {worst_double[model]:.3g} px")
    print(f"OpenCV {cv2.__version__}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
