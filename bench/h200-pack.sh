# h200-pack.sh: the `pack` step of the bench/h200-*.sh scripts, sourced by them (here,
# from the project root, after ninja -C build). Sets root (the project) and b (its build
# folder: H200_BUILD_DIR, default root/build), then
#   h200_pack PREPARE_ARGS...   runs ../shared/device/prepare.sh PREPARE_ARGS in the
#                               checkout the device tool carries (H200_PACK_ROOT, when
#                               packing from another worktree; default the project)
#                               and stays there;
#   h200_pack_size NAME         prints the size of what was packed.
root=$(git rev-parse --show-toplevel)
b=${H200_BUILD_DIR:-$root/build}
h200_pack() {
  cd "${H200_PACK_ROOT:-$root}"
  "$root/../shared/device/prepare.sh" "$@"
}
h200_pack_size() {
  du -sh .gpu | awk -v n="$1" '{print n ": .gpu is " $1 " (the device tool carries 64 MiB)"}'
}
