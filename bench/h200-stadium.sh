#!/usr/bin/env bash
# h200-stadium.sh: the stadium benchmark (issue 14, docs/heightmap.md) at the drawn
# sensors' full size, on the H200, in one device call.
#
#   bench/h200-stadium.sh pack      (here, from the project root, after ninja -C build)
#   then the device tool:  kind nvidia-h200, carry [".gpu"], timeout_s 600, command
#     "H200_SEEDS=1-20 H200_PAIRS=2 bash .gpu/bin/h200-stadium.sh run"
#
# pack: ../shared/device/prepare.sh --gst with stereod, stereod-sim and stereod-heightmap,
# this script and the benchmark's scripts (stadium-bench.sh, offline-service.sh,
# stadium-score.py, scorelib.py, conf-set.py).
#
# run (on the GPU machine): renders the seeds of H200_SEEDS (FIRST-LAST, default 1-20)
# in turn with H200_PAIRS pairs (default 2; "drawn": as many as the seed draws), scale
# H200_SCALE (default 1: the drawn sensors, 1280x720 to 3840x2160) and H200_FRAMES frames
# (default 8, the first not scored) on all cores; each rendered seed is played through
# bench/stadium-bench.sh (stereod --offline with GStreamer sources, stereod-heightmap,
# the scorer) while the next renders, at most H200_JOBS seeds at once (default 4), once
# per engine setting of H200_ENGINES ("NAME:key=value,key=value ...", default
# "defaults:": config/stereod.conf's; each NAME is one STADIUM_ENGINE); STADIUM_VARIANTS
# (builder settings) and STADIUM_SPEED pass through: with 8 pairs, several builders beside
# each other at the clip's speed fused 1-3 of 4 frames each on 2026-12-06 (one alone: all
# 4), so give variants a slower replay (STADIUM_SPEED=0.25). No seed starts after H200_BUDGET_S seconds (default
# 450): a call inside the device tool's 600 s pools the seeds it finished.
# H200_RENDER_FIRST=1: every seed is rendered first, then the replays run (H200_JOBS at
# once) on an otherwise idle machine: with the rendering and other seeds' replays beside
# it a builder falls behind the replay's 25 frames/s sooner and fuses fewer frames (on
# 2026-12-06: 2-8 JSON lines for 8 frames; alone, with a 3840x2160 pair, 4-6).
# Prints each seed's summary line and, per engine setting (and variant), the pooled
# table; everything also goes to $OUT (ENGINE.txt, seeds.txt, summary.txt; with
# H200_KEEP=1 the seeds' JSON lines and ground truth, keep.tar.gz).
set -uo pipefail
mode=${1:-}
if [ "$mode" = pack ]; then
  set -e
  . "$(dirname "$0")/h200-pack.sh"
  h200_pack --gst \
    $b/daemon/stereod $b/tools/stereod-sim $b/heightmap/stereod-heightmap \
    "$root/bench/h200-stadium.sh" "$root/bench/stadium-bench.sh" \
    "$root/bench/offline-service.sh" "$root/bench/stadium-score.py" "$root/bench/scorelib.py" \
    "$root/bench/conf-set.py"
  h200_pack_size h200-stadium.sh
  exit 0
fi
if [ "$mode" != run ]; then
  echo "usage: $0 pack|run" >&2
  exit 2
fi

here=$(cd "$(dirname "$0")/.." && pwd)   # .gpu
out=${OUT:-/tmp/h200-stadium-out}
mkdir -p "$out"
seeds=${H200_SEEDS:-1-20}
first=${seeds%-*} last=${seeds#*-}
pairs=${H200_PAIRS:-2}
[ "$pairs" = drawn ] && pairs=
scale=${H200_SCALE:-1} frames=${H200_FRAMES:-8} jobs=${H200_JOBS:-4}
engines=${H200_ENGINES:-defaults:}
base=/tmp/h200-stadium
rm -rf "$base"
mkdir -p "$base/root/bench" "$base/build/tools" "$base/build/daemon" "$base/build/heightmap"

# the programs as bench/stadium-bench.sh finds them in a build folder: the GL loader is
# unpacked once (.gpu/run), then each wrapper runs its program with .gpu/run's environment
# (H200_BUILD=DIR: a build folder's programs instead, a rehearsal on the development
# machine, e.g. H200_SEEDS=1-2 H200_SCALE=0.1 H200_FRAMES=3)
for p in tools/stereod-sim daemon/stereod heightmap/stereod-heightmap; do
  if [ -n "${H200_BUILD:-}" ]; then
    ln -sfn "$(cd "$H200_BUILD" && pwd)/$p" "$base/build/$p"
    continue
  fi
  [ -f "$base/unpacked" ] || bash "$here/run" stereod --version > /dev/null ||
    { echo "h200-stadium: .gpu/run failed" >&2; exit 1; }
  touch "$base/unpacked"
  cat > "$base/build/$p" <<EOF
#!/usr/bin/env bash
export LD_LIBRARY_PATH="$here/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
[ -f /usr/share/glvnd/egl_vendor.d/10_nvidia.json ] || export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export GST_PLUGIN_SYSTEM_PATH="$here/gst" GST_PLUGIN_SCANNER="$here/bin/gst-plugin-scanner" GST_REGISTRY=/tmp/stereod-gst-registry.bin
exec "$here/bin/${p#*/}" "\$@"
EOF
  chmod +x "$base/build/$p"
done
for f in stadium-bench.sh offline-service.sh stadium-score.py scorelib.py conf-set.py; do
  cp "$(dirname "$0")/$f" "$base/root/bench/"
done
# the scripts call /usr/bin/python3 (Debian's); here python3 is elsewhere
[ -x /usr/bin/python3 ] || ln -sf "$(command -v python3)" /usr/bin/python3
nproc | sed 's/^/# cores: /'
"$base/build/daemon/stereod" --version 2>&1 | head -n 1

t0=$(date +%s)
deadline=$((t0 + ${H200_BUDGET_S:-450}))
# one seed's replays, every engine setting in turn (they share the clip, whose ring names
# stadium-bench.sh rewrites)
replay_seed() {
  local seed=$1 spec ename ekeys dir
  for spec in $engines; do
    ename=${spec%%:*} ekeys=${spec#*:}
    dir=$base/run-$ename/$seed
    mkdir -p "$dir"
    ln -sfn "$base/clips/$seed" "$dir/clip"
    STADIUM_BUILD="$base/build" STADIUM_SCALE="$scale" STADIUM_FRAMES="$frames" \
      STADIUM_DIR="$dir" STADIUM_JSON="$base/run-$ename/$seed.json" STADIUM_ENGINE="$ekeys" \
      STADIUM_TIMEOUT=500 bash "$base/root/bench/stadium-bench.sh" "$seed" $pairs \
      > "$base/run-$ename/$seed.txt" 2>&1 ||
      echo "# seed $seed: failed (status $?)" >> "$base/run-$ename/$seed.txt"
  done
}
if [ "${H200_RENDER_FIRST:-0}" = 1 ]; then how="all rendered, then played"; else
  how="each rendered, then played while the next renders"; fi
echo "== seeds $first-$last (${pairs:-drawn} pairs, scale $scale, $frames frames): $how" \
  "($jobs at once); no seed starts after" \
  "${H200_BUDGET_S:-450} s" | tee "$out/seeds.txt"
done_seeds=()
for seed in $(seq "$first" "$last"); do
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "# seeds $seed-$last: not run (H200_BUDGET_S)" | tee -a "$out/seeds.txt"
    break
  fi
  args=(--stadium-seed "$seed" --scale "$scale" --frames "$frames" --ring-prefix "sb0-")
  [ -n "$pairs" ] && args+=(--pairs "$pairs")
  ts=$(date +%s%N)
  if ! "$base/build/tools/stereod-sim" "${args[@]}" --out "$base/clips/$seed" --quiet; then
    echo "# seed $seed: stereod-sim failed" | tee -a "$out/seeds.txt"
    continue
  fi
  printf '# seed %d rendered in %d ms: %s\n' "$seed" $(( ($(date +%s%N) - ts) / 1000000 )) \
    "$(grep -h '^# sensor' "$base/clips/$seed/stadium.conf" | sed 's/^# sensor //' | cut -d, -f1 | paste -sd' ')" |
    tee -a "$out/seeds.txt"
  done_seeds+=("$seed")
  [ "${H200_RENDER_FIRST:-0}" = 1 ] && continue
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 0.5; done
  replay_seed "$seed" &
done
if [ "${H200_RENDER_FIRST:-0}" = 1 ]; then
  echo "# rendered in $(( $(date +%s) - t0 )) s; the replays follow" | tee -a "$out/seeds.txt"
  for seed in "${done_seeds[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 0.5; done
    replay_seed "$seed" &
  done
fi
wait
echo "# seeds done in $(( $(date +%s) - t0 )) s" | tee -a "$out/seeds.txt"
[ "${#done_seeds[@]}" -gt 0 ] || { echo "h200-stadium: no seed was run" >&2; exit 1; }
lastrun=${done_seeds[-1]}

: > "$out/summary.txt"
for spec in $engines; do
  ename=${spec%%:*} ekeys=${spec#*:}
  echo "== engine $ename (${ekeys:-as config/stereod.conf})" | tee "$out/$ename.txt"
  jsons=()
  for seed in "${done_seeds[@]}"; do
    grep -h '^# summary: players\|^# seed .*failed\|^# stadium\|^# builder\|^# [0-9]* lines scored' "$base/run-$ename/$seed.txt" |
      tee -a "$out/$ename.txt"
    [ -f "$base/run-$ename/$seed.json" ] && jsons+=("$base/run-$ename/$seed.json")
    grep -q 'failed' "$base/run-$ename/$seed.txt" && tail -n 8 "$base/run-$ename/$seed.txt" |
      sed 's/^/#   /' | tee -a "$out/$ename.txt"
  done
  if [ "${#jsons[@]}" -gt 0 ]; then
    python3 "$base/root/bench/stadium-score.py" --aggregate "${jsons[@]}" \
      --label "$ename: seeds $first-$lastrun (${pairs:-drawn} pairs, ${#jsons[@]} scored, scale $scale, $frames frames)" |
      tee -a "$out/$ename.txt" | grep '^# summary' >> "$out/summary.txt"
    for vspec in ${STADIUM_VARIANTS:-}; do
      vname=${vspec%%:*}
      vj=()
      for j in "${jsons[@]}"; do [ -f "$j.$vname" ] && vj+=("$j.$vname"); done
      [ "${#vj[@]}" -gt 0 ] || continue
      echo "# variant $vname: ${vspec#*:}" | tee -a "$out/$ename.txt"
      python3 "$base/root/bench/stadium-score.py" --aggregate "${vj[@]}" \
        --label "$ename + $vname: seeds $first-$lastrun (${pairs:-drawn} pairs, ${#vj[@]} scored)" |
        tee -a "$out/$ename.txt" | grep '^# summary' >> "$out/summary.txt"
    done
  fi
done
# H200_KEEP=1: every seed's JSON lines and logs (each variant's too) and the clip's ground truth
# and geometry come back in $OUT/keep.tar.gz (ENGINE/SEED/, ENGINE/SEED/clip/), for
# bench/stadium-score.py or an analysis of the misses and false detections (tuning
# seeds only); one file, as the device tool brings back no deep folders
if [ "${H200_KEEP:-0}" = 1 ]; then
  keep=$base/keep
  for spec in $engines; do
    ename=${spec%%:*}
    for seed in "${done_seeds[@]}"; do
      k=$keep/$ename/$seed
      mkdir -p "$k/clip"
      cp "$base/run-$ename/$seed"/lines*.jsonl "$k/" 2>/dev/null
      cp "$base/run-$ename/$seed"/*.log "$k/" 2>/dev/null
      cp "$base/run-$ename/$seed.txt" "$k/bench.txt" 2>/dev/null
      cp "$base/clips/$seed"/{players.csv,ball.csv,stadium.conf} "$k/clip/" 2>/dev/null
    done
  done
  tar -C "$keep" -czf "$out/keep.tar.gz" .
fi
cat "$out/summary.txt"
