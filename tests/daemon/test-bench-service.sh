#!/bin/sh
# test-bench-service.sh BENCH: stereod-bench --service (the service's own frame loop and
# capture) on 3 live pairs whose frame period (5 ms at 200 fps, 2.5 ms per batch with 2
# in flight) is far below one pair's GPU time on any renderer at 96x64 with llvmpipe
# (about 20 ms): every live batch after the first holds one pair (the latency cap), the
# pairs take turns, the report's numbers are consistent.
set -u
bench=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! timeout 300 "$bench" --service --pairs 3 --size 96x64 --fps 200 --seconds 4 \
    --warmup-seconds 2 > "$out" 2>&1; then
  echo "FAIL: stereod-bench --service failed"; cat "$out"; exit 1
fi
cat "$out" | grep -v -- '-Message'
python3 - "$out" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"published ([0-9.]+) pairs/s.* ([0-9]+) batches \(([0-9.]+) pairs each\)", text)
if not m:
    sys.exit("FAIL: no service line")
published, batches, each = float(m.group(1)), int(m.group(2)), float(m.group(3))
if batches < 5 or published <= 0:
    sys.exit("FAIL: %d batches, %.1f pairs/s published" % (batches, published))
# the first batch (before any GPU time is known) may hold all 3
if each > (batches - 1 + 3) / batches + 0.005:
    sys.exit("FAIL: %.2f pairs per batch: the live batches are not capped" % each)
if "frame period 5.00 ms" not in text:
    sys.exit("FAIL: the summary line does not state the frame period")
print("ok: %d batches, %.2f pairs each, %.1f pairs/s published" % (batches, each, published))
PY
