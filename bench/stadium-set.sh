#!/usr/bin/env bash
# bench/stadium-bench.sh on a range of random stadiums, then the pooled numbers:
#   bench/stadium-set.sh FIRST LAST [PAIRS]
# Seeds 1-20 are the tuning set; 100-119 are held out (run them only to report a tuned
# configuration, never while tuning). The environment of stadium-bench.sh applies
# (STADIUM_SCALE, STADIUM_FRAMES, STADIUM_BUILD, STADIUM_VARIANTS: each variant is pooled
# too, after the default); STADIUM_SET_DIR keeps every seed's
# folder there (SEED/, with the scorer's output in SEED/score.txt), otherwise they are
# removed. Prints each seed's summary line, a
# seed that failed as "# seed N: failed (status S)", then the pooled table and
#   # summary: players seeds FIRST-LAST (PAIRS pairs): recall ... (pooled over seeds)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
first=${1:?usage: stadium-set.sh FIRST LAST [PAIRS]}
last=${2:?usage: stadium-set.sh FIRST LAST [PAIRS]}
pairs=${3:-}
out=$(mktemp -d /tmp/stadium-set.XXXXXX)
trap 'rm -rf "$out"' EXIT
jsons=()
failed=0
for seed in $(seq "$first" "$last"); do
  dir=
  [ -n "${STADIUM_SET_DIR:-}" ] && dir=$STADIUM_SET_DIR/$seed
  status=0
  STADIUM_DIR=$dir STADIUM_JSON=$out/$seed.json \
    bash "$root/bench/stadium-bench.sh" "$seed" $pairs > "$out/$seed.txt" 2>&1 || status=$?
  [ -n "$dir" ] && cp "$out/$seed.txt" "$dir/score.txt"
  if [ "$status" -eq 0 ] && [ -f "$out/$seed.json" ]; then
    grep '^# summary: players' "$out/$seed.txt"
    jsons+=("$out/$seed.json")
  else
    echo "# seed $seed: failed (status $status)"
    tail -n 5 "$out/$seed.txt" | sed 's/^/#   /'
    failed=$((failed + 1))
  fi
done
[ "${#jsons[@]}" -gt 0 ] || { echo "stadium-set: every seed failed" >&2; exit 1; }
/usr/bin/python3 "$root/bench/stadium-score.py" --aggregate "${jsons[@]}" \
  --label "seeds $first-$last (${pairs:-drawn} pairs, ${#jsons[@]} scored, $failed failed)"
# the variants of STADIUM_VARIANTS, pooled over the same seeds
for spec in ${STADIUM_VARIANTS:-}; do
  vname=${spec%%:*}
  vj=()
  for j in "${jsons[@]}"; do [ -f "$j.$vname" ] && vj+=("$j.$vname"); done
  [ "${#vj[@]}" -gt 0 ] || continue
  echo "# variant $vname: ${spec#*:}"
  /usr/bin/python3 "$root/bench/stadium-score.py" --aggregate "${vj[@]}" \
    --label "$vname: seeds $first-$last (${pairs:-drawn} pairs, ${#vj[@]} scored)"
done
