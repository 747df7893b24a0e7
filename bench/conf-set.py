#!/usr/bin/python3
"""conf-set.py: a copy of a key file with keys set in some of its groups (the stadium
benchmark's engine settings and builder variants, bench/stadium-bench.sh).

    conf-set.py SRC DST GROUP KEYS [--suffix KEY=TEXT]

GROUP: a regular expression that the whole group name must match ("pair .*",
"heightmap"). KEYS: "key=value,key=value" set in every such group (a key already there
takes the value in place, the others are added at the group's end); keys are lower case
and '_'. --suffix appends TEXT to KEY's value in those groups (a ring of its own).
Comments and other groups are copied as they are. Exit status 0, 2 for a bad key.
"""
import argparse
import re
import sys

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("src")
ap.add_argument("dst")
ap.add_argument("group")
ap.add_argument("keys")
ap.add_argument("--suffix", default=None)
args = ap.parse_args()
sets = dict(kv.split("=", 1) for kv in args.keys.split(",") if kv)
for k in sets:
    if not re.fullmatch(r"[a-z_]+", k):
        print("conf-set: bad key '%s'" % k, file=sys.stderr)
        sys.exit(2)
suffix_key, suffix = args.suffix.split("=", 1) if args.suffix else (None, None)

out, inside, left = [], False, {}
for line in open(args.src).read().splitlines():
    m = re.match(r"^\[(.*)\]$", line)
    if m:
        if inside:
            out += [f"{k}={v}" for k, v in left.items()]
        inside, left = re.fullmatch(args.group, m.group(1)) is not None, dict(sets)
    elif inside and "=" in line and not line.startswith("#"):
        k = line.split("=", 1)[0].strip()
        if k == suffix_key:
            line = line + suffix
        elif k in left:
            line = f"{k}={left.pop(k)}"
    out.append(line)
if inside:
    out += [f"{k}={v}" for k, v in left.items()]
open(args.dst, "w").write("\n".join(out) + "\n")
