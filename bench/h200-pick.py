#!/usr/bin/env python3
"""h200-pick.py ENGINE_TXT: the engine switches that made a batch fastest.

Reads the output of bench/h200-engine.sh (blocks "== LABEL", each with one stereod-bench
table row) and, for every environment switch that a variant set alone ("new NAME=VALUE"),
compares the GPU ms per batch (the row's gpu/batch column: every stage, the upload and
the readback included) of each value with the build's default ("new"). Prints one line,
the shell assignments of the values that beat the default by more than 1 %, e.g.
"STEREOD_READBACK=direct STEREOD_QUAD_TILE=32" (empty when the defaults are fastest),
and on stderr the table it chose from. A shell that runs the service with the chosen
switches: export $(python3 bench/h200-pick.py engine.txt)
"""
import re
import sys


def blocks(path):
    label, out = None, {}
    head = None
    for line in open(path, errors="replace"):
        if line.startswith("== "):
            label, head = line[3:].strip(), None
            continue
        if label is None:
            continue
        if line.startswith("size") and "gpu/batch" in line:
            head = line.replace("|", " ").split()
            continue
        if head and re.match(r"^\s*\d+x\d+\s", line) and label not in out:
            # the header's "p50 ms"-style names are two words: count from the end
            cols = line.replace("|", " ").split()
            k = len(head) - head.index("gpu/batch")
            out[label] = float(cols[-k])
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: h200-pick.py ENGINE_TXT")
    times = blocks(sys.argv[1])
    if "new" not in times:
        print("")
        return
    base = times["new"]
    best = {}   # switch name -> (ms, value)
    for label, ms in times.items():
        m = re.fullmatch(r"new (\w+)=(\S+)", label)
        print("%-40s %8.3f ms per batch" % (label, ms), file=sys.stderr)
        if not m:
            continue
        name, value = m.groups()
        if ms < base * 0.99 and ms < best.get(name, (base, None))[0]:
            best[name] = (ms, value)
    print(" ".join("%s=%s" % (k, v[1]) for k, v in sorted(best.items())))


if __name__ == "__main__":
    main()
