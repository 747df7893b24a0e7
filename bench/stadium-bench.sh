#!/usr/bin/env bash
# The whole service path on a random stadium: stereod-sim renders stadium SEED
# (--stadium-seed, PAIRS pairs or as many as the seed draws), stereod --offline plays its
# frames through the generated stereod.conf (the real GStreamer sources, every frame),
# stereod-heightmap --json reads the rings with the generated heightmap.conf, and
# bench/stadium-score.py scores the JSON lines against players.csv.
#   bench/stadium-bench.sh SEED [PAIRS]
# Environment: STADIUM_BUILD (build folder, default ./build), STADIUM_SCALE (image size
# factor, default 0.25), STADIUM_FRAMES (default 20), STADIUM_DIR (keep everything there:
# the clip is rendered only when its players.csv is missing or was drawn differently;
# its stereod.conf and heightmap.conf are this build's either way),
# STADIUM_JSON (write the scorer's counts there, for bench/stadium-set.sh),
# STADIUM_TIMEOUT (seconds for stereod, default 3600), STADIUM_VARIANTS (settings of the
# builder compared on the same replay: "NAME:key=value,key=value NAME2:..." runs one more
# stereod-heightmap per NAME with those keys set in its [heightmap] group, each scored
# apart; with STADIUM_JSON, their counts go to STADIUM_JSON.NAME), STADIUM_ENGINE
# ("key=value,key=value": set in every [pair] group of the stereod.conf played, a copy of
# the clip's, to compare engine settings on the same clip; default none: stereod's
# defaults, what is reported), STADIUM_BUILDER ("key=value,key=value": set in the
# [heightmap] group of every builder's configuration, the shipped one's copy and each
# variant's; e.g. wait_ms=300000 for 8 pairs at full size on a software renderer, whose
# 4K pairs publish a time's frames up to a minute apart), STADIUM_SPEED (the replay's
# offline_speed, default the clip's 1: its own 25 frames/s). Prints the scorer's
# table and its summary line (then each variant's, its summary prefixed with "NAME: ");
# exit status 0, or the step's that failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/offline-service.sh"
seed=${1:?usage: stadium-bench.sh SEED [PAIRS]}
pairs=${2:-}
build=$(cd "${STADIUM_BUILD:-$root/build}" && pwd)
scale=${STADIUM_SCALE:-0.25}
frames=${STADIUM_FRAMES:-20}
timeout_s=${STADIUM_TIMEOUT:-3600}
keep=${STADIUM_DIR:-}
if [ -n "$keep" ]; then work=$keep; mkdir -p "$work"; else work=$(mktemp -d /tmp/stadium.XXXXXX); fi
prefix="sb$$-"
hm_pid=
hm_variant_pids=()
cleanup() {
  [ -n "$hm_pid" ] && kill -TERM "$hm_pid" 2>/dev/null && wait "$hm_pid" 2>/dev/null
  for vp in "${hm_variant_pids[@]}"; do kill -TERM "$vp" 2>/dev/null; done
  rm -f /dev/shm/stereod."$prefix"*
  [ -n "$keep" ] || rm -rf "$work"
}
trap cleanup EXIT

args=(--stadium-seed "$seed" --scale "$scale" --frames "$frames" --ring-prefix "$prefix")
[ -n "$pairs" ] && args+=(--pairs "$pairs")
clip=$work/clip
want=$("$build/tools/stereod-sim" "${args[@]}" --describe)
if [ ! -f "$clip/players.csv" ] || [ "$want" != "$(cat "$clip/stadium.conf" 2>/dev/null)" ]; then
  rm -rf "$clip"
  "$build/tools/stereod-sim" "${args[@]}" --out "$clip" --quiet
else
  # the clip's images are kept; its configs are this build's (the stadium setting of
  # config/stereod.conf as stereod-sim writes it now) with this run's ring names
  "$build/tools/stereod-sim" "${args[@]}" --out "$clip" --configs-only
fi
n_pairs=$(grep -c '^\[pair ' "$clip/stereod.conf")

# the engine's settings: the clip's stereod.conf (stereod's defaults) or, with
# STADIUM_ENGINE, a copy with those keys set in every [pair] group
st_conf=$clip/stereod.conf
if [ -n "${STADIUM_ENGINE:-}" ]; then
  st_conf=$work/stereod-engine.conf
  /usr/bin/python3 "$root/bench/conf-set.py" "$clip/stereod.conf" "$st_conf" 'pair .*' \
    "$STADIUM_ENGINE" || exit 2
fi
# STADIUM_SPEED: the replay's offline_speed instead of the clip's 1 (slower, for a set
# whose many builders share one machine and would otherwise skip frames)
if [ -n "${STADIUM_SPEED:-}" ]; then
  /usr/bin/python3 "$root/bench/conf-set.py" "$st_conf" "$work/stereod-speed.conf" daemon \
    "offline_speed=$STADIUM_SPEED" || exit 2
  st_conf=$work/stereod-speed.conf
fi

# the builder's configuration: the clip's or, with STADIUM_BUILDER, a copy with those keys
# set; the variants' start from it, with their keys set and a ring of their own
hm_conf=$clip/heightmap.conf
if [ -n "${STADIUM_BUILDER:-}" ]; then
  hm_conf=$work/heightmap-builder.conf
  /usr/bin/python3 "$root/bench/conf-set.py" "$clip/heightmap.conf" "$hm_conf" heightmap \
    "$STADIUM_BUILDER" || exit 2
fi
variant_names=()
for spec in ${STADIUM_VARIANTS:-}; do
  vname=${spec%%:*}
  [[ $vname =~ ^[A-Za-z0-9_-]+$ ]] || { echo "stadium-bench: bad variant name in '$spec'" >&2; exit 2; }
  variant_names+=("$vname")
  /usr/bin/python3 "$root/bench/conf-set.py" "$hm_conf" \
    "$work/heightmap-$vname.conf" heightmap "${spec#*:}" --suffix "ring=-$vname" || exit 2
done
export OFFLINE_HM_VARIANTS="${variant_names[*]}"

status=0
offline_service stadium-bench "$build" "$st_conf" "$hm_conf" "$work" \
  "$timeout_s" || status=$?
[ "$status" -eq 0 ] || exit "$status"
echo "# stadium $seed: $n_pairs pairs, scale $scale, $frames frames, engine ${STADIUM_ENGINE:-as config/stereod.conf}${STADIUM_BUILDER:+, builder $STADIUM_BUILDER}; stereod: ${published:-?}"
# the builder's time (its summary at exit): more than a frame period means skipped frames
echo "# builder: $(grep -o '[0-9]* fused frames, .*' "$work/heightmap.log" | tail -n 1)"
/usr/bin/python3 "$root/bench/stadium-score.py" --clip "$clip" --lines "$work/lines.jsonl" \
  --prefix "$prefix" --seed "$seed" ${STADIUM_JSON:+--json "$STADIUM_JSON"}
for vname in "${variant_names[@]}"; do
  echo "# variant $vname"
  /usr/bin/python3 "$root/bench/stadium-score.py" --clip "$clip" \
    --lines "$work/lines-$vname.jsonl" --prefix "$prefix" --seed "$seed" \
    ${STADIUM_JSON:+--json "$STADIUM_JSON.$vname"} | sed "s/^# summary: /# summary: $vname: /"
done
