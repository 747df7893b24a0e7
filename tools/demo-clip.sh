# demo-clip.sh: sourced by tools/stereod-demo.sh and bench/demo-velocity.sh.
#
#   demo_clip NAME BUILD SIM_CONF
#
# Sets `clip` (the folder of SIM_CONF's [output] dir=) and `clip_frames` (its frames=),
# and renders the clip there with BUILD's stereod-sim when it is missing, incomplete or
# drawn from another SIM_CONF (a copy of it is kept beside the clip). NAME prefixes the
# line that says so.
demo_clip() {
  local name=$1 build=$2 sim_conf=$3
  clip=$(sed -n 's/^dir=//p' "$sim_conf" | head -n 1)
  clip_frames=$(sed -n 's/^frames=//p' "$sim_conf" | head -n 1)
  local last
  last=$(printf '%06d' $((clip_frames - 1)))
  if [ ! -f "$clip/players.csv" ] || [ ! -f "$clip/east/right/$last.jpg" ] ||
     ! cmp -s "$sim_conf" "$clip/sim.conf"; then
    echo "$name: rendering the stadium clip into $clip ($clip_frames frames per camera)"
    "$build/tools/stereod-sim" --config "$sim_conf" --quiet
    cp "$sim_conf" "$clip/sim.conf"
  fi
}
