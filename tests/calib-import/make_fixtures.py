#!/usr/bin/python3
"""make_fixtures: writes tests/calib-import/data/ with OpenCV itself (python3-opencv, which
the build does not need: run by hand, the files are committed).

    make_fixtures.py OUTDIR

Every calibration is made by OpenCV (stereoRectify on a synthetic rig) and written the
way its producer writes it:
 - stereo_calib/: intrinsics.yml and extrinsics.yml as samples/cpp/stereo_calib.cpp
   writes them (fs << "M1" << ... << "D2"; fs << "R" << ... << "Q"), its flags
   CALIB_RATIONAL_MODEL + CALIB_ZERO_TANGENT_DIST + CALIB_FIX_K3..K5 + CALIB_SAME_FOCAL_
   LENGTH + CALIB_FIX_ASPECT_RATIO giving 8 coefficients with k1 k2 k6 free; T in metres,
   and extrinsics-mm.yml: the same rig calibrated with a board measured in millimetres;
 - imagesize-int.yml (5 coefficients, fs.write("imageSize", np.array([w, h])): a 2x1
   int matrix), imagesize-double.yml (12 coefficients, the size as a 1x2 double matrix),
   tilted.yml (14 coefficients, image_width and image_height scalars), all in one file;
 - stereo.xml: an XML FileStorage with 14 coefficients on the left and 5 on the right,
   imageSize a cv::Size written as a sequence;
 - ros-plumb_bob/ and ros-rational/: left.yaml and right.yaml as ROS's camera_calibration
   (calibrator.py, lryaml) writes them, numbers rounded as it rounds them.
expected.json holds, for every case, the numbers each file holds (what the import must
give back, parsed from the written text where the writer rounds).
"""

import json
import os
import re
import sys

import cv2
import numpy as np

OUT = sys.argv[1]
W, H = 640, 480
rng = np.random.default_rng(20261205)


def rig(dist_count, fixed=None):
    """K1 D1 K2 D2 R T (metres) of a synthetic pair 0.3 m apart."""
    f = 700.0 + rng.uniform(-5, 5)
    sides = []
    for _ in range(2):
        K = np.array([[f, 0, W / 2 + rng.uniform(-8, 8)], [0, f, H / 2 + rng.uniform(-8, 8)],
                      [0, 0, 1]])
        D = np.zeros(dist_count)
        D[:5] = [rng.uniform(-0.3, -0.1), rng.uniform(0.0, 0.1), rng.uniform(-1e-3, 1e-3),
                 rng.uniform(-1e-3, 1e-3), rng.uniform(-0.02, 0.02)][:5]
        if dist_count >= 8:
            D[5:8] = D[[0, 1, 4]] + rng.uniform(-0.05, 0.05, 3)
        if dist_count >= 12:
            D[8:12] = rng.uniform(-2e-3, 2e-3, 4)
        if dist_count >= 14:
            D[12:14] = rng.uniform(-0.01, 0.01, 2)
        if fixed:
            fixed(D)
        sides.append((K, D.reshape(1, -1)))
    R = cv2.Rodrigues(rng.uniform(-0.02, 0.02, 3))[0]
    T = np.array([[-0.3 + rng.uniform(-0.01, 0.01)], [rng.uniform(-3e-3, 3e-3)],
                  [rng.uniform(-3e-3, 3e-3)]])
    return sides, R, T


def rectify(sides, R, T):
    (K1, D1), (K2, D2) = sides
    R1, R2, P1, P2, Q, _, _ = cv2.stereoRectify(K1, D1, K2, D2, (W, H), R, T,
                                                flags=cv2.CALIB_ZERO_DISPARITY, alpha=0)
    return R1, R2, P1, P2, Q


def storage(path, items):
    fs = cv2.FileStorage(os.path.join(OUT, path), cv2.FILE_STORAGE_WRITE)
    for name, value in items:
        if name == "imageSize-seq":
            fs.startWriteStruct("imageSize", cv2.FILE_NODE_SEQ | cv2.FILE_NODE_FLOW)
            for v in value:
                fs.write("", int(v))
            fs.endWriteStruct()
        else:
            fs.write(name, value)
    fs.release()


def flat(m):
    return [float(v) for v in np.asarray(m).flat]


def expected(sides, rect, size=(W, H)):
    (K1, D1), (K2, D2) = sides
    R1, R2, P1, P2, Q = rect
    return {"size": list(size), "K_left": flat(K1), "dist_left": flat(D1), "K_right": flat(K2),
            "dist_right": flat(D2), "R1": flat(R1), "R2": flat(R2), "P1": flat(P1),
            "P2": flat(P2), "Q": flat(Q)}


def ros_yaml(name, d, k, r, p, size, model):
    """camera_calibration's calibrator.py lryaml(), verbatim in what it writes."""
    def format_mat(x, precision):
        return ("[%s]" % (
            np.array2string(x, precision=precision, suppress_small=True, separator=", ")
            .replace("[", "").replace("]", "").replace("\n", "\n        ")))
    return "\n".join([
        "image_width: %d" % size[0],
        "image_height: %d" % size[1],
        "camera_name: " + name,
        "camera_matrix:",
        "  rows: 3",
        "  cols: 3",
        "  data: " + format_mat(k, 5),
        "distortion_model: " + model,
        "distortion_coefficients:",
        "  rows: 1",
        "  cols: %d" % d.size,
        "  data: [%s]" % ", ".join("%8f" % x for x in d.flat),
        "rectification_matrix:",
        "  rows: 3",
        "  cols: 3",
        "  data: " + format_mat(r, 8),
        "projection_matrix:",
        "  rows: 3",
        "  cols: 4",
        "  data: " + format_mat(p, 5),
        ""])


def ros_numbers(text, field):
    """The numbers of `field`'s data as written (an independent little reader)."""
    block = text.split(field + ":", 1)[1]
    data = block.split("data: [", 1)[1].split("]", 1)[0]
    return [float(t) for t in re.split(r"[\s,]+", data.strip()) if t]


def main():
    os.makedirs(os.path.join(OUT, "stereo_calib"), exist_ok=True)
    cases = {}

    def no_tangent_k345(D):
        D[2:5] = 0.0
        D[5:7] = 0.0

    sides, R, T = rig(8, no_tangent_k345)
    rect = rectify(sides, R, T)
    storage("stereo_calib/intrinsics.yml", [("M1", sides[0][0]), ("D1", sides[0][1]),
                                            ("M2", sides[1][0]), ("D2", sides[1][1])])
    storage("stereo_calib/extrinsics.yml", [("R", R), ("T", T)] +
            list(zip(("R1", "R2", "P1", "P2", "Q"), rect)))
    cases["stereo_calib"] = expected(sides, rect)
    rect_mm = rectify(sides, R, T * 1000.0)
    storage("stereo_calib/extrinsics-mm.yml", [("R", R), ("T", T * 1000.0)] +
            list(zip(("R1", "R2", "P1", "P2", "Q"), rect_mm)))
    cases["stereo_calib_mm"] = expected(sides, rect_mm)

    for name, count, size_items in (
            ("imagesize-int.yml", 5, [("imageSize", np.array([W, H]))]),
            ("imagesize-double.yml", 12, [("imageSize", np.array([[float(W), float(H)]]))]),
            ("tilted.yml", 14, [("image_width", W), ("image_height", H)])):
        sides, R, T = rig(count)
        rect = rectify(sides, R, T)
        storage(name, size_items + [("cameraMatrix1", sides[0][0]),
                                    ("distCoeffs1", sides[0][1]),
                                    ("cameraMatrix2", sides[1][0]),
                                    ("distCoeffs2", sides[1][1]), ("R", R), ("T", T)] +
                list(zip(("R1", "R2", "P1", "P2", "Q"), rect)))
        cases[name] = expected(sides, rect)

    sides, R, T = rig(14)
    sides[1] = (sides[1][0], sides[1][1][:, :5].T.copy())     # right: 5x1
    rect = rectify(sides, R, T)
    storage("stereo.xml", [("imageSize-seq", (W, H)), ("K1", sides[0][0]), ("D1", sides[0][1]),
                           ("K2", sides[1][0]), ("D2", sides[1][1])] +
            list(zip(("R1", "R2", "P1", "P2", "Q"), rect)) + [("rms", 0.2345)])
    cases["stereo.xml"] = expected(sides, rect)

    for folder, count, model in (("ros-plumb_bob", 5, "plumb_bob"),
                                 ("ros-rational", 8, "rational_polynomial")):
        os.makedirs(os.path.join(OUT, folder), exist_ok=True)
        sides, R, T = rig(count)
        rect = rectify(sides, R, T)
        case = {"size": [W, H]}
        for side, (K, D), Rr, P in (("left", sides[0], rect[0], rect[2]),
                                    ("right", sides[1], rect[1], rect[3])):
            text = ros_yaml("narrow_stereo/" + side, D, K, Rr, P, (W, H), model)
            with open(os.path.join(OUT, folder, side + ".yaml"), "w") as f:
                f.write(text)
            case["K_" + side] = ros_numbers(text, "camera_matrix")
            case["dist_" + side] = ros_numbers(text, "distortion_coefficients")
            case["R1" if side == "left" else "R2"] = ros_numbers(text, "rectification_matrix")
            case["P1" if side == "left" else "P2"] = ros_numbers(text, "projection_matrix")
        cases[folder] = case

    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump({"opencv": cv2.__version__, "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
