# offline-service.sh: sourced by the benchmarks that run the whole service path on
# recorded frames (bench/stadium-bench.sh, bench/demo-velocity.sh).
#
#   offline_service NAME BUILD STEREOD_CONF HEIGHTMAP_CONF WORK TIMEOUT_S
#
# Starts stereod-heightmap --json on HEIGHTMAP_CONF (lines into WORK/lines.jsonl, its log
# WORK/heightmap.log), plays STEREOD_CONF through stereod --offline (WORK/stereod.log, at
# most TIMEOUT_S seconds), waits until the builder has fused what is still in the rings
# (its output stopped growing for 2 s) and stops it. Sets `published` to stereod's end
# line. Returns stereod's exit status when it failed (its last lines on stderr, prefixed
# with NAME), 1 when the builder failed, else 0. The caller's EXIT trap should kill
# $hm_pid when it is set (the builder while it runs).
# OFFLINE_HM_VARIANTS="A B ...": one more builder per name N on WORK/heightmap-N.conf
# (made by the caller: its own ring), reading the same rings, its lines into
# WORK/lines-N.jsonl (log WORK/heightmap-N.log): settings compared on one replay. Their
# pids are in hm_variant_pids (the caller's EXIT trap should kill them too).
offline_service() {
  local name=$1 build=$2 st_conf=$3 hm_conf=$4 work=$5 timeout_s=$6
  "$build/heightmap/stereod-heightmap" --config "$hm_conf" --json \
    > "$work/lines.jsonl" 2> "$work/heightmap.log" &
  hm_pid=$!
  hm_variant_pids=()
  local v
  for v in ${OFFLINE_HM_VARIANTS:-}; do
    "$build/heightmap/stereod-heightmap" --config "$work/heightmap-$v.conf" --json \
      > "$work/lines-$v.jsonl" 2> "$work/heightmap-$v.log" &
    hm_variant_pids+=($!)
  done
  local status=0
  timeout "$timeout_s" "$build/daemon/stereod" --offline --config "$st_conf" \
    > "$work/stereod.log" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    echo "$name: stereod --offline exit status $status" >&2
    tail -n 20 "$work/stereod.log" >&2
    return "$status"
  fi
  local last=-1 n
  for _ in $(seq 300); do
    n=$(wc -l < "$work/lines.jsonl")
    for v in ${OFFLINE_HM_VARIANTS:-}; do
      n=$((n + $(wc -l < "$work/lines-$v.jsonl")))
    done
    [ "$n" -eq "$last" ] && break
    last=$n
    sleep 2
  done
  local vp vfailed=0
  for vp in "${hm_variant_pids[@]}"; do
    kill -TERM "$vp"
    wait "$vp" || vfailed=1
  done
  hm_variant_pids=()
  if [ "$vfailed" -ne 0 ]; then
    echo "$name: a variant's stereod-heightmap failed" >&2
  fi
  kill -TERM "$hm_pid"
  if ! wait "$hm_pid"; then
    hm_pid=
    echo "$name: stereod-heightmap failed" >&2
    tail -n 20 "$work/heightmap.log" >&2
    return 1
  fi
  hm_pid=
  published=$(grep -o "offline: every stream ended.*" "$work/stereod.log" | head -n 1 || true)
  return 0
}
