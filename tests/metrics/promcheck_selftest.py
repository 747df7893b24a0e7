#!/usr/bin/env python3
"""promcheck.py reads good texts and refuses every kind of bad one (so that the tests of
the endpoints that use it can fail)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import promcheck  # noqa: E402

GOOD = """# HELP a_total A.
# TYPE a_total counter
a_total{pair="west",cause="x\\\\y\\"z\\nw"} 5
a_total{pair="east",cause=""} 0 1700000000000
# HELP g G \\\\ with a backslash.
# TYPE g gauge
g NaN
# A comment line.
# HELP h H.
# TYPE h histogram
h_bucket{pair="west",le="0.001"} 0
h_bucket{pair="west",le="1e-2"} 2
h_bucket{pair="west",le="+Inf"} 3
h_sum{pair="west"} 1.5
h_count{pair="west"} 3
"""

BAD = {
    "no newline at the end": GOOD[:-1],
    "sample before TYPE": "a_total 1\n# HELP a_total A.\n# TYPE a_total counter\n",
    "no HELP": "# TYPE g gauge\ng 1\n",
    "TYPE twice": "# HELP g G.\n# TYPE g gauge\n# TYPE g gauge\ng 1\n",
    "unknown type": "# HELP g G.\n# TYPE g meter\ng 1\n",
    "counter without _total": "# HELP c C.\n# TYPE c counter\nc 1\n",
    "negative counter": "# HELP c_total C.\n# TYPE c_total counter\nc_total -1\n",
    "bad value": "# HELP g G.\n# TYPE g gauge\ng 1,5\n",
    "bad value inf": "# HELP g G.\n# TYPE g gauge\ng inf\n",
    "bad label": "# HELP g G.\n# TYPE g gauge\ng{pair=west} 1\n",
    "bad escape": "# HELP g G.\n# TYPE g gauge\ng{pair=\"a\\tb\"} 1\n",
    "label twice": "# HELP g G.\n# TYPE g gauge\ng{a=\"1\",a=\"2\"} 1\n",
    "reserved label": "# HELP g G.\n# TYPE g gauge\ng{__a=\"1\"} 1\n",
    "series twice": "# HELP g G.\n# TYPE g gauge\ng{a=\"1\"} 1\ng{a=\"1\"} 2\n",
    "empty line": "# HELP g G.\n# TYPE g gauge\n\ng 1\n",
    "not together": "# HELP g G.\n# TYPE g gauge\ng{a=\"1\"} 1\n# HELP k K.\n"
                    "# TYPE k gauge\nk 1\ng{a=\"2\"} 1\n",
    "HELP after samples": "# TYPE g gauge\ng 1\n# HELP g G.\n",
    "no +Inf": "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n",
    "not cumulative": "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 2\n"
                      "h_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",
    "le out of order": "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"2\"} 1\n"
                       "h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",
    "count differs": "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\n"
                     "h_count 1\n",
    "no sum": "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n",
    "bucket without le": "# HELP h H.\n# TYPE h histogram\nh_bucket 1\n",
    "le not a float": "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"x\"} 1\n",
    "undeclared suffix": "# HELP g G.\n# TYPE g gauge\ng_bucket 1\n",
}


def main():
    fams = promcheck.parse(GOOD)
    assert set(fams) == {"a_total", "g", "h"}, fams
    assert fams["a_total"].series()[(("pair", "west"), ("cause", "x\\\\y\\\"z\\nw"))] == 5
    buckets, s, c = fams["h"].series()[(("pair", "west"),)]
    assert [v for _, v in buckets] == [0, 2, 3] and s == 1.5 and c == 3
    for what, text in BAD.items():
        try:
            promcheck.parse(text)
        except promcheck.FormatError:
            continue
        raise AssertionError("accepted: %s" % what)
    later = promcheck.parse(GOOD.replace("} 5\n", "} 4\n"))
    try:
        promcheck.compare(fams, later)
    except promcheck.FormatError:
        pass
    else:
        raise AssertionError("a counter that went down was accepted")
    promcheck.compare(fams, fams)
    print("ok: %d bad texts refused" % len(BAD))


main()
