#!/usr/bin/python3
"""test_calib_import: stereod-calib-import on calibrations written by OpenCV itself and by
ROS's camera_calibration (tests/calib-import/data/, made by make_fixtures.py with
python3-opencv 4.6): the output must load with calib_load() (calib-check) and hold the
numbers of the input bit for bit (expected.json). Then every kind of bad input, each
made by editing a good file: one line on stderr naming the file and the field, exit
status 65 (bad data), 64 (bad usage), 66 (unreadable input), 69 (no python3-yaml) or 73
(unwritable output), no traceback, no output file.

    test_calib_import.py CONVERTER CALIB_CHECK DATA_DIR
"""

import configparser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

CONVERTER, CHECK, DATA = sys.argv[1:4]
with open(os.path.join(DATA, "expected.json"), encoding="utf-8") as f:
    CASES = json.load(f)["cases"]
KEYS = {"K_left": ("left", "K"), "dist_left": ("left", "distortion"),
        "K_right": ("right", "K"), "dist_right": ("right", "distortion"),
        "R1": ("rectification", "R1"), "R2": ("rectification", "R2"),
        "P1": ("rectification", "P1"), "P2": ("rectification", "P2"),
        "Q": ("rectification", "Q"), "rotation": ("pose", "rotation"),
        "centre": ("pose", "centre")}
failures = []
tmp = tempfile.mkdtemp(prefix="calib-import-")


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def data(*parts):
    return os.path.join(DATA, *parts)


def text_of(*parts):
    with open(data(*parts), encoding="utf-8") as f:
        return f.read()


def write(name, text, mode="w"):
    path = os.path.join(tmp, name)
    with open(path, mode) as f:
        f.write(text)
    return path


def convert(*args, env=None):
    p = subprocess.run([sys.executable, CONVERTER, *args], capture_output=True, text=True,
                       timeout=60, env=env)
    return p.returncode, p.stderr


def loaded(path):
    """The calibration as calib_load() read it, written back by calib_to_data()."""
    p = subprocess.run([CHECK, path], capture_output=True, text=True, timeout=30)
    first, _, rest = p.stdout.partition("\n")
    if p.returncode != 0 or first != "OK":
        print(p.stdout + p.stderr)
        return None
    cp = configparser.ConfigParser(interpolation=None)
    cp.optionxform = str
    cp.read_string(rest)
    values = {k: [float(t) for t in cp[g][n].split()] for k, (g, n) in KEYS.items()}
    values["size"] = [int(cp["calibration"]["width"]), int(cp["calibration"]["height"])]
    values["counts"] = (len(values["dist_left"]), len(values["dist_right"]))
    return values


def stereo_q(P1, P2):
    """stereoRectify's Q: [1 0 0 -cx; 0 1 0 -cy; 0 0 0 f; 0 0 -1/Tx (cx - cx')/Tx]."""
    tx = P2[3] / P2[0]
    return [1, 0, 0, -P1[2], 0, 1, 0, -P1[6], 0, 0, 0, P1[0], 0, 0, -1 / tx,
            (P1[2] - P2[2]) / tx]


def padded(dist):
    """OpenCV's models are the 14-coefficient one with the later terms 0; calib_save
    writes the shortest that holds the non-zero ones."""
    full = dist + [0.0] * (14 - len(dist))
    last = max([i for i, v in enumerate(full) if v != 0.0], default=-1)
    return full[:next(m for m in (5, 8, 12, 14) if last < m)]


def imported(what, args, case, pose=None, counts=None):
    """Converts, loads and compares every number with the case's, exactly."""
    out = os.path.join(tmp, what.replace(" ", "-").replace("/", "-") + ".conf")
    rc, err = convert(*args, "-o", out)
    check(rc == 0, f"{what}: converted (rc {rc}, {err.strip()!r})")
    check("Traceback" not in err, f"{what}: no traceback")
    values = loaded(out) if rc == 0 else None
    check(values is not None, f"{what}: calib_load accepts the output")
    if values is None:
        return None
    want = dict(CASES[case])
    if "Q" not in want:
        want["Q"] = stereo_q(want["P1"], want["P2"])
    want["rotation"] = pose[0] if pose else [1, 0, 0, 0, 1, 0, 0, 0, 1]
    want["centre"] = pose[1] if pose else [0, 0, 0]
    check(values["size"] == want["size"], f"{what}: size {values['size']}")
    for key in KEYS:
        w = padded(want[key]) if key.startswith("dist") else want[key]
        same = values[key] == [float(v) for v in w]
        check(same, f"{what}: {key} exact" + ("" if same else f" ({values[key]} vs {w})"))
    if counts:
        check(values["counts"] == counts, f"{what}: distortion counts {values['counts']}")
    return values


# Good inputs ------------------------------------------------------------------------

POSE = ([0.99567269573139672, 0.029272349295884719, -0.088198710544277706,
         0.092929451601597032, -0.3136323138844791, 0.94498618440297533,
         0.0, -0.9490931994562849, -0.31499539480099181], [-20.0, -79.0, 25.0])
INTR, EXTR = data("stereo_calib", "intrinsics.yml"), data("stereo_calib", "extrinsics.yml")
EXTR_MM = data("stereo_calib", "extrinsics-mm.yml")
SIZE = ["--size", "640x480"]
pose_args = ["--pose-rotation", ",".join(repr(v) for v in POSE[0]),
             "--pose-centre", ",".join(repr(v) for v in POSE[1])]

metre = imported("stereo_calib rational", [INTR, EXTR, *SIZE, *pose_args], "stereo_calib",
                 POSE, counts=(8, 8))
imported("imageSize 2x1 int matrix, 5 coefficients", [data("imagesize-int.yml")],
         "imagesize-int.yml", counts=(5, 5))
imported("imageSize 1x2 double matrix, 12 coefficients", [data("imagesize-double.yml")],
         "imagesize-double.yml", counts=(12, 12))
imported("image_width/height, 14 coefficients", [data("tilted.yml")], "tilted.yml",
         counts=(14, 14))
imported("XML, 14 and 5x1 coefficients", [data("stereo.xml")], "stereo.xml", counts=(14, 5))
one = text_of("imagesize-int.yml")
for what, size in (("a sequence", "[ 640, 480 ]"), ("a width, height map",
                                                     "{ width: 640, height: 480 }")):
    path = write("size-form.yml", one.replace(
        one[one.index("imageSize"):one.index("cameraMatrix1")], f"imageSize: {size}\n"))
    imported(f"imageSize {what}", [path], "imagesize-int.yml")
for folder, n in (("ros-plumb_bob", 5), ("ros-rational", 8)):
    imported(f"ROS {folder[4:]}", ["--ros", data(folder, "left.yaml"),
                                   data(folder, "right.yaml")], folder, counts=(n, n))

# The millimetre board: refused as it is, the metre calibration with --units mm (to
# 1e-12 relative: stereoRectify rounds the millimetre run differently in the last bits).
out = os.path.join(tmp, "mm.conf")
rc, err = convert(INTR, EXTR_MM, *SIZE, *pose_args, "--units", "mm", "-o", out)
check(rc == 0, f"mm board with --units mm: converted (rc {rc}, {err.strip()!r})")
mm = loaded(out)
check(mm is not None and metre is not None, "mm board with --units mm: loads")
if mm and metre:
    worst = max(abs(a - b) / max(1.0, abs(a)) for key in KEYS for a, b in
                zip(mm[key], metre[key]))
    check(worst <= 1e-12, f"mm board with --units mm: the metre calibration ({worst:.2g})")
    check(CASES["stereo_calib_mm"]["P2"][3] / metre["P2"][3] > 999,
          "mm board: its P2[0][3] is in millimetres")


# Bad inputs -------------------------------------------------------------------------

def refused(what, args, status, must_name=(), output=True):
    out = os.path.join(tmp, "refused.conf")
    if os.path.exists(out):
        os.unlink(out)
    rc, err = convert(*args, *(["-o", out] if output else []))
    lines = err.strip().splitlines()
    check(rc == status, f"{what}: exit status {rc}, expected {status}")
    check("Traceback" not in err, f"{what}: no traceback")
    if status != 64:
        check(len(lines) == 1 and lines[0].startswith("stereod-calib-import: ") and
              all(s in lines[0] for s in must_name),
              f"{what}: one line naming {list(must_name)}: {err.strip()!r}")
    else:
        check(lines and lines[-1].startswith("stereod-calib-import: "),
              f"{what}: says what is wrong: {err.strip()!r}")
    check(not os.path.exists(out), f"{what}: no output written")


def edited(name, text, old, new, count=1):
    """A copy of a fixture with `old` replaced by `new` (which must be there)."""
    assert old in text, (name, old)
    return write(name, text.replace(old, new, count))


def drop_matrix(text, name):
    return re.sub(rf"^{name}: !!opencv-matrix\n(   .*\n)+", "", text, flags=re.M)


intr, extr = text_of("stereo_calib", "intrinsics.yml"), text_of("stereo_calib", "extrinsics.yml")
xml = text_of("stereo.xml")
ros_l, ros_r = text_of("ros-plumb_bob", "left.yaml"), text_of("ros-plumb_bob", "right.yaml")
ROS_R = data("ros-plumb_bob", "right.yaml")
ROS_L = data("ros-plumb_bob", "left.yaml")
M1 = "M1: !!opencv-matrix\n   rows: 3\n   cols: 3\n   dt: d\n"
D1 = "D1: !!opencv-matrix\n   rows: 1\n   cols: 8\n   dt: d\n"

# The OpenCV files: structure and values.
refused("missing P2", [INTR, write("no-p2.yml", drop_matrix(extr, "P2")), *SIZE], 65, ["P2"])
refused("4x4 K", [edited("k4x4.yml", intr, M1 + "   data: [", M1.replace(
    "rows: 3\n   cols: 3", "rows: 4\n   cols: 4") + "   data: [ 1., 1., 1., 1., 1., 1., 1.,"),
    EXTR, *SIZE], 65, ["k4x4.yml", "M1", "4x4 matrix, expected 3x3"])
refused("rows x cols != numbers", [edited("short.yml", intr, M1, M1.replace("cols: 3", "cols: 4")),
                                   EXTR, *SIZE], 65, ["short.yml", "M1", "3x4 matrix with 9"])
refused("three channels", [edited("3d.yml", intr, M1, M1.replace("dt: d", "dt: 3d")), EXTR,
                           *SIZE], 65, ["3d.yml", "M1", "channels"])
refused("unknown dt", [edited("dtq.yml", intr, M1, M1.replace("dt: d", "dt: q")), EXTR, *SIZE],
        65, ["dtq.yml", "M1", "dt"])
refused("rows not a number", [edited("rows.yml", intr, M1, M1.replace("rows: 3", "rows: x")),
                              EXTR, *SIZE], 65, ["rows.yml", "M1", "rows"])
# (a later file overrides a name of an earlier one)
refused("matrix without data", [INTR, EXTR, write("nodata.yml", "%YAML:1.0\n---\nM1: "
                                                  "!!opencv-matrix\n   rows: 3\n   cols: 3\n"
                                                  "   dt: d\n"), *SIZE],
        65, ["nodata.yml", "M1", "data"])
refused("a matrix tag on a number", [INTR, EXTR, write("tagnum.yml", "%YAML:1.0\nM1: "
                                                       "!!opencv-matrix 5\n"), *SIZE],
        65, ["tagnum.yml", "M1", "tagged opencv-matrix"])
refused("not a number", [edited("abc.yml", intr, "0., 0., 1. ]", "0., abc, 1. ]"), EXTR, *SIZE],
        65, ["abc.yml", "M1", "'abc' is not a number"])
refused("NaN", [edited("nan.yml", intr, "0., 0., 1. ]", "0., .nan, 1. ]"), EXTR, *SIZE], 65,
        ["nan.yml", "M1", "finite"])
refused("a boolean", [edited("bool.yml", intr, "0., 0., 1. ]", "0., true, 1. ]"), EXTR, *SIZE],
        65, ["bool.yml", "M1", "not a number"])
refused("6 coefficients", [edited("d6.yml", intr.replace("0., 0., -5.8560840169015090e-03 ]",
                                                         "0. ]", 1),
                                  D1, D1.replace("cols: 8", "cols: 6")), EXTR, *SIZE],
        65, ["d6.yml", "D1", "4, 5, 8, 12 or 14"])
refused("2x4 distortion", [edited("d2x4.yml", intr, D1, D1.replace("rows: 1\n   cols: 8",
                                                                   "rows: 2\n   cols: 4")),
                           EXTR, *SIZE], 65, ["d2x4.yml", "D1", "2x4"])
refused("rational denominator", [edited("den.yml", intr, "0., 0., -5.8560840169015090e-03 ]",
                                        "-9., 0., 0. ]"), EXTR, *SIZE], 65,
        ["den.yml", "D1", "denominator"])
refused("tilt out of range", [edited("tilt.yml", one.replace(
    "distCoeffs1: !!opencv-matrix\n   rows: 1\n   cols: 5",
    "distCoeffs1: !!opencv-matrix\n   rows: 1\n   cols: 14"), "-6.1521395908873365e-03 ]",
    "-6.1521395908873365e-03, 0., 0., 0., 0., 0., 0., 0., 0.7, 0. ]")], 65,
    ["tilt.yml", "distCoeffs1", "tau_x = 0.7"])
swapped = re.sub(r"(P2: !!opencv-matrix\n(?:   .*\n){4}.*?)-(2\.0696)", r"\1\2", extr)
refused("P2 of a swapped pair", [INTR, write("swapped.yml", swapped), *SIZE], 65,
        ["swapped.yml", "P2", "swapped"])
refused("Q not of P1 and P2", [INTR, edited("q.yml", extr, "3.3475730580870908e+00",
                                            "3.3e+00"), *SIZE], 65, ["q.yml", "Q", "match"])
refused("not a rotation", [INTR, edited("rot.yml", extr, "9.9993375926126571e-01",
                                        "9.8e-01"), *SIZE], 65, ["rot.yml", "R1", "rotation"])
refused("T of another unit", [INTR, edited("t.yml", extr, "-2.9871666221280169e-01",
                                           "-2.9871666221280169e+02"), *SIZE], 65,
        ["t.yml", "T", "baseline"])
refused("mm board without --units", [INTR, EXTR_MM, *SIZE], 65,
        ["extrinsics-mm.yml", "P2", "baseline", "298.7", "--units mm"])
refused("mm board with --units m", [INTR, EXTR_MM, *SIZE, "--units", "m"], 65,
        ["extrinsics-mm.yml", "P2", "--units m", "--units mm"])
refused("image size of another camera", [INTR, EXTR, "--size", "64x48"], 65,
        ["intrinsics.yml", "M1", "0.1-10x", "--size"])
refused("no image size", [INTR, EXTR], 65, ["image size", "--size"])

# Image sizes.
for what, size in (("three numbers", "[ 640, 480, 3 ]"), ("a fraction", "[ 640.5, 480 ]"),
                   ("negative", "[ -640, 480 ]"), ("a word", "hello"),
                   ("too large", "[ 640000, 480 ]"), ("a map without height", "{ width: 640 }"),
                   ("an unknown tag",
                    "!!opencv-nd-matrix { sizes: [ 2 ], dt: i, data: [ 1, 2 ] }")):
    refused(f"imageSize {what}", [write("size.yml", one.replace(
        one[one.index("imageSize"):one.index("cameraMatrix1")], f"imageSize: {size}\n"))], 65,
        ["size.yml", "imageSize"] + (["opencv-nd-matrix"] if "tag" in what else []))
refused("image_width a boolean", [edited("width.yml", text_of("tilted.yml"), "image_width: 640",
                                         "image_width: true")], 65, ["width.yml", "image_width"])

# Files that are not calibrations.
refused("binary", [write("garbage.yml", b"\x7fELF\x00\x01\x02", "wb"), EXTR, *SIZE], 65,
        ["garbage.yml"])
refused("not UTF-8", [write("latin1.yml", "%YAML:1.0\nname: caf\xe9\n".encode("latin-1"), "wb"),
                      EXTR, *SIZE], 65, ["latin1.yml", "UTF-8"])
refused("empty", [write("empty.yml", ""), EXTR, *SIZE], 65, ["empty.yml", "map"])
refused("a YAML list", [write("list.yml", "- 1\n- 2\n"), EXTR, *SIZE], 65, ["list.yml", "map"])
refused("broken YAML", [write("broken.yml", "%YAML:1.0\nM1: !!opencv-matrix\n   data: [ 1., 2.\n"),
                        EXTR, *SIZE], 65, ["broken.yml", "YAML", "line"])
refused("deep nesting", [write("deep.yml", "a: " + "[" * 5000 + "]" * 5000 + "\n"), EXTR, *SIZE],
        65, ["deep.yml"])
bomb = "a0: &a0 {x: 1}\n" + "".join(f"a{i}: &a{i} {{l: *a{i - 1}, r: *a{i - 1}}}\n"
                                    for i in range(1, 40))
refused("alias bomb", [write("bomb.yml", bomb), EXTR, *SIZE], 65, ["bomb.yml", "names"])
refused("over 16 MiB", [write("huge.yml", "%YAML:1.0\n" + "#" * (17 << 20) + "\n"), EXTR, *SIZE],
        65, ["huge.yml", "16 MiB"])
refused("missing file", [os.path.join(tmp, "absent.yml"), EXTR, *SIZE], 66, ["absent.yml"])

# XML.
refused("XML not well-formed", [write("bad.xml", xml.replace("</K1>", "", 1))], 65,
        ["bad.xml", "XML"])
refused("XML of another root", [write("root.xml", xml.replace("opencv_storage", "storage"))], 65,
        ["root.xml", "<storage>"])
refused("XML with a DTD", [write("dtd.xml", xml.replace(
    "<opencv_storage>", '<!DOCTYPE x [<!ENTITY a "aaaa">]>\n<opencv_storage>', 1))], 65,
    ["dtd.xml", "DTD"])
refused("XML 2 channels", [write("ch.xml", xml.replace("<dt>d</dt>", "<dt>2d</dt>", 1))], 65,
        ["ch.xml", "K1", "channels"])

# ROS camera_info.
ros = ["--ros"]
refused("ROS fisheye", ros + [edited("fish.yaml", ros_l, "plumb_bob", "equidistant"), ROS_R],
        65, ["fish.yaml", "distortion_model", "fisheye", "not supported"])
refused("ROS unknown model", ros + [edited("model.yaml", ros_l, "plumb_bob", "zoom"), ROS_R],
        65, ["model.yaml", "distortion_model", "zoom"])
refused("ROS plumb_bob with 8", ros + [edited("pb8.yaml", ros_l, "  cols: 5\n  data: [",
                                              "  cols: 8\n  data: [0, 0, 0, "), ROS_R], 65,
        ["pb8.yaml", "distortion_coefficients", "N = 4 or 5"])
refused("ROS without projection", ros + [ROS_L, write("noproj.yaml", ros_r.split(
    "projection_matrix")[0])], 65, ["noproj.yaml", "projection_matrix", "missing"])
refused("ROS swapped", ros + [ROS_R, ROS_L], 65, ["right.yaml", "projection_matrix", "swapped"])
refused("ROS sizes differ", ros + [ROS_L, edited("size.yaml", ros_r, "image_width: 640",
                                                 "image_width: 800")], 65,
        ["size.yaml", "image_width", "640x480"])
proj = ros_r.index("projection_matrix")
tx = re.search(r"(-\d+\.\d+)(,\n)", ros_r[proj:])   # P2[0][3], the end of the first row
refused("ROS mm board", ros + [ROS_L, write("mm.yaml", ros_r[:proj] + ros_r[proj:].replace(
    tx.group(0), f"{float(tx.group(1)) * 1000:.5f}{tx.group(2)}"))],
    65, ["mm.yaml", "projection_matrix", "baseline", "--units mm"])

# The environment and the command line.
fake = os.path.join(tmp, "noyaml")
os.makedirs(fake)
write("noyaml/yaml.py", "raise ImportError('no yaml here')\n")
env = dict(os.environ, PYTHONPATH=fake)
rc, err = convert(INTR, EXTR, *SIZE, "-o", os.path.join(tmp, "x.conf"), env=env)
check(rc == 69 and "python3-yaml" in err and "Traceback" not in err,
      f"without python3-yaml: status 69 and the package named ({rc}, {err.strip()!r})")
refused("unwritable output", [INTR, EXTR, *SIZE, "-o", os.path.join(tmp, "no", "dir.conf")], 73,
        ["dir.conf"], output=False)
refused("no -o", [INTR, EXTR, *SIZE], 64, output=False)
refused("no input", [], 64)
refused("bad --size", [INTR, EXTR, "--size", "640by360"], 64)
refused("--units km", [INTR, EXTR, *SIZE, "--units", "km"], 64)
refused("--pose-centre alone", [INTR, EXTR, *SIZE, "--pose-centre", "1,2,3"], 64)
refused("--pose-rotation of 8 numbers", [INTR, EXTR, *SIZE, "--pose-rotation", "1,0,0,0,1,0,0,0",
                                         "--pose-centre", "1,2,3"], 64)
refused("--ros with one file", ["--ros", ROS_L], 64)

shutil.rmtree(tmp, ignore_errors=True)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
