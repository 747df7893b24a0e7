#!/bin/sh
# test-install.sh: `meson install --destdir` into a scratch folder, then what an operator
# meets after installing (issue 12):
#  - every installed program that links libstereod-client runs without LD_LIBRARY_PATH
#    (its RUNPATH is $ORIGIN-relative, so it finds the library of the same install, also
#    in a DESTDIR) and finds that copy, not another one;
#  - the Python reader imports from the install's module folder, and that folder is on
#    the system Python's sys.path for the configured prefix (checked for /usr and
#    /usr/local, the system prefixes);
#  - the installed stereod.conf and heightmap.conf pass --check-config as they stand
#    (stereod's says what tilt of each pose its ground_margin allows)
#    (stereod.conf names its calibrations relative to itself: calib/demo-*.conf are
#    installed beside it, so nothing is rewritten);
#  - the unit file's ExecStart names the installed stereod.
#   test-install.sh MESON BUILD_DIR PREFIX BINDIR LIBDIR SYSCONFDIR PYTHON PYTHON_DIR UNIT_DIR
# (directories absolute, as they are on the target system)
set -u
meson=$1 build=$2 prefix=$3 bindir=$4 libdir=$5 sysconfdir=$6 python=$7 pydir=$8 unitdir=$9
dest=$(mktemp -d "${TMPDIR:-/tmp}/stereod-install-XXXXXX") || exit 1
trap 'rm -rf "$dest"' EXIT
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

if ! "$meson" install -C "$build" --destdir "$dest" --no-rebuild --quiet >"$dest.log" 2>&1; then
  cat "$dest.log"
  rm -f "$dest.log"
  echo "FAIL: meson install --destdir"
  exit 1
fi
rm -f "$dest.log"
D=$dest

# RUNPATH of every installed ELF program that needs libstereod-client.
linked=0
for prog in "$D$bindir"/*; do
  readelf -d "$prog" >"$dest/dyn" 2>/dev/null || continue   # scripts
  grep -q 'NEEDED.*\[libstereod-client\.so\.0\]' "$dest/dyn" || continue
  linked=$((linked + 1))
  name=$(basename "$prog")
  grep -q 'RUNPATH.*\$ORIGIN' "$dest/dyn" || fail "$name: no \$ORIGIN RUNPATH: $(grep -E 'R(UN)?PATH' "$dest/dyn")"
  where=$(env -u LD_LIBRARY_PATH ldd "$prog" | sed -n 's/.*libstereod-client\.so\.0 => \([^ ]*\).*/\1/p')
  real=$(readlink -f "$where" 2>/dev/null)
  if [ -n "$where" ] && [ "$real" = "$(readlink -f "$D$libdir/libstereod-client.so.0")" ]; then
    echo "ok $name finds $where"
  else
    fail "$name resolves libstereod-client.so.0 to '$where', not the copy in $D$libdir"
  fi
done
[ "$linked" -ge 2 ] || fail "expected stereod-dump and stereod-heightmap to link libstereod-client, found $linked"

out=$(env -u LD_LIBRARY_PATH "$D$bindir/stereod-dump" --version 2>&1) ||
  fail "stereod-dump --version: $out"
case $out in
  "stereod-dump "[0-9]*) echo "ok $out" ;;
  *) fail "stereod-dump --version printed '$out'" ;;
esac

# The Python reader.
[ -f "$D$pydir/stereod_client.py" ] || fail "no $pydir/stereod_client.py installed"
got=$(cd / && env -u LD_LIBRARY_PATH PYTHONPATH="$D$pydir" "$python" -c \
  'import stereod_client; print(stereod_client.__file__)' 2>&1) || fail "import: $got"
[ "$got" = "$D$pydir/stereod_client.py" ] || fail "imported '$got', not the installed module"
echo "ok python imports $got"
case $prefix in
  /usr | /usr/local)
    on_path=$("$python" -c 'import sys; print(sys.argv[1] in sys.path)' "$pydir")
    [ "$on_path" = True ] || fail "$pydir is not on $python's sys.path"
    echo "ok $pydir is on $python's sys.path" ;;
  *) echo "prefix $prefix: not a system prefix, sys.path not checked" ;;
esac

# The installed configurations, as they stand.
for conf in "$D$sysconfdir/stereod/stereod.conf"; do
  out=$(env -u LD_LIBRARY_PATH "$D$bindir/stereod" --check-config --config "$conf" 2>&1) ||
    fail "stereod --check-config $conf: $out"
  # the demo's pose: f 1050 px, B 3 m, 16 m up: 3.4 px a degree of tilt
  echo "$out" | grep -q "\[pair west\] ground margin 1.00 px: the pose may be tilted by 0.29 degrees" ||
    fail "stereod --check-config $conf: no ground_margin note: $out"
  echo "ok $out"
done
if [ -x "$D$bindir/stereod-heightmap" ]; then
  conf=$D$sysconfdir/stereod/heightmap.conf
  out=$(env -u LD_LIBRARY_PATH "$D$bindir/stereod-heightmap" --check-config --config "$conf" 2>&1) ||
    fail "stereod-heightmap --check-config $conf: $out"
  echo "ok $out"
fi

# The unit starts the installed daemon.
exec_start=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$D$unitdir/stereod.service")
[ "$exec_start" = "$bindir/stereod" ] || fail "stereod.service: ExecStart=$exec_start"
[ -x "$D$exec_start" ] || fail "stereod.service: $exec_start is not installed"

if [ "$failures" != 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all passed"
