#!/usr/bin/env python3
"""A strict reader of the Prometheus text exposition format 0.0.4, for the tests of the
/metrics endpoints of stereod and stereod-heightmap.

parse(text) returns {family name: Family} and raises FormatError for anything the format
does not allow or that our conventions forbid:
  - every sample belongs to a family declared by a "# TYPE" line before it (histogram
    samples by their _bucket, _sum and _count suffixes), the samples of a family are
    contiguous, HELP and TYPE appear at most once per family and before its samples;
  - names and label names follow the grammar, label values use only the \\\\ \\" \\n
    escapes, values are floats (NaN, +Inf, -Inf included), an optional timestamp is an
    integer; no series appears twice;
  - counters end in _total, histograms carry le="+Inf" last, their buckets are
    cumulative (non-decreasing in le order, le strictly increasing), _count equals the
    +Inf bucket and _sum is there; every family has a HELP line.
compare(before, after) checks that counters and histogram counts never went down.

  promcheck.py URL [--moving NAME]... [--interval S]  scrapes twice, checks both and that
                                                      each NAME (a counter or histogram)
                                                      moved between them
"""
import math
import re
import sys
import time
import urllib.request

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r"[a-zA-Z_][a-zA-Z0-9_]*"
FLOAT = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?Inf|NaN"
SAMPLE = re.compile(r"^(%s)(\{.*\})? (%s)(?: (-?[0-9]+))?$" % (NAME, FLOAT))
LABEL_PAIR = re.compile(r'(%s)="((?:[^"\\\n]|\\[\\"n])*)"' % LABEL)
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")


class FormatError(Exception):
    pass


class Family:
    def __init__(self, name, type_):
        self.name, self.type, self.help = name, type_, None
        self.samples = {}        # (sample name, labels tuple) -> value
        self.order = []          # sample keys in the order of the text

    def series(self):
        """{labels without le: value} for counters and gauges; for histograms
        {labels without le: (buckets [(le, count)], sum, count)}."""
        if self.type != "histogram":
            return {labels: v for (n, labels), v in self.samples.items()}
        out = {}
        for (n, labels), v in self.samples.items():
            base = tuple(l for l in labels if l[0] != "le")
            b, s, c = out.get(base, ([], None, None))
            if n.endswith("_bucket"):
                le = dict(labels)["le"]
                b.append((float(le), v))
            elif n.endswith("_sum"):
                s = v
            else:
                c = v
            out[base] = (b, s, c)
        return out


def parse_float(text):
    return float(text.replace("Inf", "inf"))


def parse_labels(text, where):
    if text is None:
        return ()
    inner = text[1:-1]
    labels, pos = [], 0
    while pos < len(inner):
        m = LABEL_PAIR.match(inner, pos)
        if not m:
            raise FormatError("%s: bad label syntax at %r" % (where, inner[pos:]))
        labels.append((m.group(1), m.group(2)))
        pos = m.end()
        if pos < len(inner):
            if inner[pos] != ",":
                raise FormatError("%s: expected ',' between labels" % where)
            pos += 1
            if pos == len(inner):    # a trailing comma is allowed by the format
                break
    names = [l[0] for l in labels]
    if len(set(names)) != len(names):
        raise FormatError("%s: a label twice" % where)
    for n in names:
        if n.startswith("__"):
            raise FormatError("%s: reserved label name %s" % (where, n))
    return tuple(labels)


def family_of(sample, families):
    if sample in families and families[sample].type != "histogram":
        return families[sample]
    for suffix in ("_bucket", "_sum", "_count"):
        if sample.endswith(suffix):
            base = sample[: -len(suffix)]
            if base in families and families[base].type == "histogram":
                return families[base]
    return None


def parse(text):
    if not text.endswith("\n"):
        raise FormatError("the text does not end with a newline")
    families, closed, current = {}, set(), [None]

    def enter(name, where):
        # the lines of one family are together: once another one starts, it is closed
        if current[0] != name:
            if current[0] is not None:
                closed.add(current[0])
            if name in closed:
                raise FormatError("%s: the lines of %s are not together" % (where, name))
            current[0] = name

    for number, line in enumerate(text.split("\n")[:-1], 1):
        where = "line %d" % number
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) < 3 or parts[1] not in ("HELP", "TYPE"):
                continue                      # a comment
            name = parts[2]
            if not re.fullmatch(NAME, name):
                raise FormatError("%s: bad metric name %r" % (where, name))
            fam = families.setdefault(name, Family(name, None))
            if fam.samples:
                raise FormatError("%s: %s of %s after its samples" % (where, parts[1], name))
            enter(name, where)
            if parts[1] == "TYPE":
                type_ = parts[3] if len(parts) == 4 else ""
                if type_ not in TYPES:
                    raise FormatError("%s: bad type %r" % (where, type_))
                if fam.type is not None:
                    raise FormatError("%s: TYPE of %s twice" % (where, name))
                fam.type = type_
            else:
                if fam.help is not None:
                    raise FormatError("%s: HELP of %s twice" % (where, name))
                fam.help = parts[3] if len(parts) == 4 else ""
                if not re.fullmatch(r"(?:[^\\]|\\[\\n])*", fam.help):
                    raise FormatError("%s: bad escape in HELP" % where)
            continue
        if line == "":
            raise FormatError("%s: empty line" % where)
        m = SAMPLE.match(line)
        if not m:
            raise FormatError("%s: not a sample line: %r" % (where, line))
        sample, labels = m.group(1), parse_labels(m.group(2), where)
        fam = family_of(sample, families)
        if fam is None or fam.type is None:
            raise FormatError("%s: %s has no TYPE line before it" % (where, sample))
        enter(fam.name, where)
        if fam.type == "histogram" and sample.endswith("_bucket"):
            if "le" not in dict(labels):
                raise FormatError("%s: a bucket without le" % where)
            try:
                parse_float(dict(labels)["le"])
            except ValueError:
                raise FormatError("%s: le is not a float" % where)
        elif "le" in dict(labels) and fam.type == "histogram":
            raise FormatError("%s: le on %s" % (where, sample))
        key = (sample, labels)
        if key in fam.samples:
            raise FormatError("%s: the series %s%s twice" % (where, sample, labels))
        fam.samples[key] = parse_float(m.group(3))
        fam.order.append(key)
    for fam in families.values():
        check_family(fam)
    return families


def check_family(fam):
    if fam.type is None:
        raise FormatError("%s: HELP without TYPE" % fam.name)
    if fam.help is None:
        raise FormatError("%s: no HELP line" % fam.name)
    if fam.type == "counter":
        if not fam.name.endswith("_total"):
            raise FormatError("counter %s does not end in _total" % fam.name)
        for (n, labels), v in fam.samples.items():
            if not (v >= 0):
                raise FormatError("counter %s%s is %r" % (n, labels, v))
    if fam.type != "histogram":
        return
    for base, (buckets, s, c) in fam.series().items():
        what = "%s%s" % (fam.name, base)
        if not buckets or not math.isinf(buckets[-1][0]) or buckets[-1][0] < 0:
            raise FormatError("%s: the last bucket is not le=\"+Inf\"" % what)
        les = [le for le, _ in buckets]
        if les != sorted(les) or len(set(les)) != len(les):
            raise FormatError("%s: le not strictly increasing in the text" % what)
        counts = [v for _, v in buckets]
        if counts != sorted(counts):
            raise FormatError("%s: buckets are not cumulative: %s" % (what, counts))
        if s is None or c is None:
            raise FormatError("%s: _sum or _count missing" % what)
        if c != counts[-1]:
            raise FormatError("%s: _count %r differs from the +Inf bucket %r" % (what, c,
                                                                                counts[-1]))


def total(fam):
    """Sum over the series of a counter's values or a histogram's counts."""
    if fam.type == "histogram":
        return sum(c for _, (_, _, c) in fam.series().items())
    return sum(fam.series().values())


def compare(before, after):
    for name, fam in before.items():
        if fam.type not in ("counter", "histogram"):
            continue
        if name not in after:
            raise FormatError("%s disappeared" % name)
        now = after[name].series()
        for labels, v in fam.series().items():
            if labels not in now:
                raise FormatError("%s%s disappeared" % (name, labels))
            a = v[2] if fam.type == "histogram" else v
            b = now[labels][2] if fam.type == "histogram" else now[labels]
            if b < a:
                raise FormatError("%s%s went down: %r -> %r" % (name, labels, a, b))


def scrape(url, timeout=10):
    # no proxy: the endpoints are on this machine whatever http_proxy says
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=timeout) as r:
        ctype = r.headers.get("Content-Type", "")
        if not ctype.startswith("text/plain") or "version=0.0.4" not in ctype:
            raise FormatError("Content-Type %r" % ctype)
        return r.read().decode("utf-8")


def main(argv):
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--moving", action="append", default=[])
    ap.add_argument("--interval", type=float, default=3)
    a = ap.parse_args(argv)
    first = parse(scrape(a.url))
    time.sleep(a.interval)
    second = parse(scrape(a.url))
    compare(first, second)
    for name in a.moving:
        if name not in second:
            raise FormatError("%s not served" % name)
        if not total(second[name]) > total(first[name]):
            raise FormatError("%s did not move in %.1f s" % (name, a.interval))
    print("ok: %d families" % len(second))


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except FormatError as e:
        print("FAIL: %s" % e)
        sys.exit(1)
