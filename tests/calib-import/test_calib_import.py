#!/usr/bin/python3
"""test_calib_import: stereod-calib-import on OpenCV FileStorage files written exactly as
OpenCV writes them (YAML in two files, XML in one), from the values of
config/calib/example.conf; the output must load with calib_load() (calib-check) and hold
the same numbers bit for bit. Then one case per kind of error.

    test_calib_import.py CONVERTER CALIB_CHECK EXAMPLE_CONF
"""

import configparser
import os
import shutil
import subprocess
import sys
import tempfile

CONVERTER, CHECK, EXAMPLE = sys.argv[1:4]
KEYS = [("left", "K"), ("left", "distortion"), ("right", "K"), ("right", "distortion"),
        ("rectification", "R1"), ("rectification", "R2"), ("rectification", "P1"),
        ("rectification", "P2"), ("rectification", "Q"), ("pose", "rotation"),
        ("pose", "centre")]
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def read_conf(text):
    cp = configparser.ConfigParser(interpolation=None)
    cp.optionxform = str
    cp.read_string(text)
    values = {(g, k): [float(t) for t in cp[g][k].replace(",", " ").split()] for g, k in KEYS}
    values["size"] = (int(cp["calibration"]["width"]), int(cp["calibration"]["height"]))
    return values


with open(EXAMPLE, encoding="utf-8") as f:
    ref = read_conf(f.read())


# OpenCV's FileStorage writers (modules/core/src/persistence*.cpp) ------------------------

def cv_number(v):
    """doubleToString(): integral values as "%d.", others as "%.16e"."""
    return f"{int(v)}." if v == round(v) and abs(v) < 2**31 else f"{v:.16e}"


def yaml_matrix(name, rows, cols, data):
    out = [f"{name}: !!opencv-matrix", f"   rows: {rows}", f"   cols: {cols}", "   dt: d"]
    line = "   data: [ "
    items = [cv_number(v) for v in data]
    for i, item in enumerate(items):
        piece = item + (", " if i + 1 < len(items) else " ]")
        if len(line) + len(item) > 71 and not line.endswith("[ "):
            out.append(line.rstrip())
            line = "       "
        line += piece
    out.append(line)
    return "\n".join(out) + "\n"


def xml_matrix(name, rows, cols, data):
    out = [f'<{name} type_id="opencv-matrix">', f"  <rows>{rows}</rows>",
           f"  <cols>{cols}</cols>", "  <dt>d</dt>", "  <data>"]
    line = "   "
    for item in (cv_number(v) for v in data):
        if len(line) + len(item) > 71:
            out.append(line)
            line = "   "
        line += " " + item
    return "\n".join(out) + "\n" + line + f"</data></{name}>\n"


YAML_HEAD = "%YAML:1.0\n---\n"
XML_HEAD = '<?xml version="1.0"?>\n<opencv_storage>\n'
XML_TAIL = "</opencv_storage>\n"
T = [-1.6, 0.0, 0.0]


def intrinsics_yaml(m1=None, d1=None):
    m1 = m1 or (3, 3, ref[("left", "K")])
    d1 = d1 or (1, 8, ref[("left", "distortion")] + [0.0, 0.0, 0.0])
    return (YAML_HEAD + yaml_matrix("M1", *m1) + yaml_matrix("D1", *d1) +
            yaml_matrix("M2", 3, 3, ref[("right", "K")]) +
            yaml_matrix("D2", 1, 5, ref[("right", "distortion")]))


def extrinsics_yaml(skip=(), p2=None):
    text = YAML_HEAD + yaml_matrix("R", 3, 3, ref[("rectification", "R1")])
    text += yaml_matrix("T", 3, 1, T)
    for name, rows, cols in (("R1", 3, 3), ("R2", 3, 3), ("P1", 3, 4), ("P2", 3, 4),
                             ("Q", 4, 4)):
        data = p2 if (name == "P2" and p2) else ref[("rectification", name)]
        if name not in skip:
            text += yaml_matrix(name, rows, cols, data)
    return text


def storage_xml():
    text = XML_HEAD
    text += xml_matrix("cameraMatrix1", 3, 3, ref[("left", "K")])
    text += xml_matrix("distCoeffs1", 1, 14, ref[("left", "distortion")] + [0.0] * 9)
    text += xml_matrix("cameraMatrix2", 3, 3, ref[("right", "K")])
    text += xml_matrix("distCoeffs2", 5, 1, ref[("right", "distortion")])
    for name, rows, cols in (("R1", 3, 3), ("R2", 3, 3), ("P1", 3, 4), ("P2", 3, 4),
                             ("Q", 4, 4)):
        text += xml_matrix(name, rows, cols, ref[("rectification", name)])
    text += "<image_size>\n  %d %d</image_size>\n" % ref["size"]
    text += "<rms>2.3456000000000001e-01</rms>\n"
    return text + XML_TAIL


# Running ------------------------------------------------------------------------------

tmp = tempfile.mkdtemp(prefix="calib-import-")


def write(name, text):
    path = os.path.join(tmp, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def convert(*args):
    p = subprocess.run([sys.executable, CONVERTER, *args], capture_output=True, text=True,
                       timeout=30)
    return p.returncode, p.stderr


def loaded(path):
    p = subprocess.run([CHECK, path], capture_output=True, text=True, timeout=30)
    first, _, rest = p.stdout.partition("\n")
    if p.returncode != 0 or first != "OK":
        print(p.stdout + p.stderr)
        return None
    return read_conf(rest)


def compare(values, expect_pose, what):
    check(values is not None, f"{what}: calib_load accepts the converted file")
    if values is None:
        return
    check(values["size"] == ref["size"], f"{what}: image size {values['size']}")
    for key in KEYS:
        want = ref[key] if key[0] != "pose" else expect_pose[key[1]]
        check(values[key] == want, f"{what}: [{key[0]}] {key[1]} exact "
              f"({values[key]} vs {want})" if values[key] != want else
              f"{what}: [{key[0]}] {key[1]} exact")


# YAML, two files, the pose given, the size on the command line, D1 with 8 coefficients.
intr, extr = write("intrinsics.yml", intrinsics_yaml()), write("extrinsics.yml", extrinsics_yaml())
out = os.path.join(tmp, "yaml.conf")
pose_rot = ",".join(repr(v) for v in ref[("pose", "rotation")])
pose_centre = ",".join(repr(v) for v in ref[("pose", "centre")])
rc, err = convert(intr, extr, "-o", out, "--size", "%dx%d" % ref["size"],
                  "--pose-rotation", pose_rot, "--pose-centre", pose_centre)
check(rc == 0 and err == "", f"yaml: converted (rc {rc}, stderr {err!r})")
compare(loaded(out), {"rotation": ref[("pose", "rotation")], "centre": ref[("pose", "centre")]},
        "yaml")

# XML, one file, no pose (warning, identity), the size from the file, 14 and 5x1 coefficients.
xml = write("stereo.xml", storage_xml())
out = os.path.join(tmp, "xml.conf")
rc, err = convert(xml, "-o", out)
check(rc == 0, f"xml: converted (rc {rc})")
check(err.count("\n") == 1 and "warning" in err and "pose" in err,
      f"xml: one warning line about the pose ({err!r})")
compare(loaded(out), {"rotation": [1.0, 0, 0, 0, 1.0, 0, 0, 0, 1.0], "centre": [0.0, 0, 0]},
        "xml")


def refused(what, files, must_name, extra=(), status=1, output=True):
    out = os.path.join(tmp, "refused.conf")
    rc, err = convert(*files, *(["-o", out] if output else []), *extra)
    lines = err.splitlines()
    check(rc == status, f"{what}: exit status {rc}, expected {status}")
    if status == 1:
        check(len(lines) == 1 and lines[0].startswith("stereod-calib-import: ") and
              all(s in lines[0] for s in must_name), f"{what}: one line naming {must_name}: {err!r}")
    check(not os.path.exists(out), f"{what}: no output written")


size = ["--size", "%dx%d" % ref["size"]]
refused("missing P2", [intr, write("no-p2.yml", extrinsics_yaml(skip=("P2",)))],
        ["P2"], size)
refused("4x4 K", [write("k4.yml", intrinsics_yaml(m1=(4, 4, [1.0] * 16))), extr],
        ["k4.yml", "M1", "4x4"], size)
refused("garbage file", [write("garbage.yml", "\x7fELF binary junk\n\x00\x01"), extr],
        ["garbage.yml"], size)
refused("broken YAML", [write("broken.yml", "%YAML:1.0\nM1: !!opencv-matrix\n   data: [ 1., 2.\n"),
                         extr], ["broken.yml"], size)
refused("missing file", [os.path.join(tmp, "absent.yml"), extr], ["absent.yml"], size)
refused("non-zero k4", [write("k4-dist.yml", intrinsics_yaml(
        d1=(1, 8, ref[("left", "distortion")] + [0.001, 0.0, 0.0]))), extr],
        ["k4-dist.yml", "D1", "coefficient 6"], size)
refused("6 coefficients", [write("d6.yml", intrinsics_yaml(
        d1=(1, 6, ref[("left", "distortion")] + [0.0]))), extr], ["d6.yml", "D1"], size)
swapped = list(ref[("rectification", "P2")])
swapped[3] = -swapped[3]
refused("P2 of a swapped pair", [intr, write("swapped.yml", extrinsics_yaml(p2=swapped))],
        ["swapped.yml", "P2"], size)
refused("no image size", [intr, extr], ["image size", "--size"])
refused("no -o", [intr, extr], [], size, status=2, output=False)
refused("bad --size", [intr, extr], [], ["--size", "640by360"], status=2)
refused("--pose-centre without --pose-rotation", [intr, extr], [],
        size + ["--pose-centre", "1,2,3"], status=2)

shutil.rmtree(tmp, ignore_errors=True)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
