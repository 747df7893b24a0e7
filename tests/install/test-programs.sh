#!/bin/sh
# test-programs.sh: every program `meson install` installs, as an operator meets it:
#  - `NAME --version` exits 0 and prints "NAME VERSION" (the project's version);
#  - `NAME --no-such-option` exits 64 (EX_USAGE) with one line on stderr, "NAME: ...";
#  - its manual page NAME.1 is installed in mandir/man1, a roff page titled NAME(1) that
#    names every long option NAME --help lists (so that the page and the program agree).
#  - each configuration's page PAGE.5 names every key its commented example sets.
#   test-programs.sh MESON BUILD_DIR BINDIR MANDIR VERSION [PAGE=EXAMPLE.conf]...
set -u
# What the programs say and how they exit is checked here, not their memory: under
# -Db_sanitize=address, stereod's GStreamer initialisation (never deinitialised) is a
# leak report at every exit, which would replace its output and status.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
meson=$1 build=$2 bindir=$3 mandir=$4 version=$5
shift 5
dest=$(mktemp -d "${TMPDIR:-/tmp}/stereod-programs-XXXXXX") || exit 1
trap 'rm -rf "$dest"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

if ! "$meson" install -C "$build" --destdir "$dest" --no-rebuild --quiet >"$dest/log" 2>&1; then
  cat "$dest/log"
  echo "FAIL: meson install --destdir"
  exit 1
fi
bin=$dest$bindir man=$dest$mandir
programs=0
for prog in "$bin"/stereod*; do
  name=$(basename "$prog")
  programs=$((programs + 1))
  out=$(env -u LD_LIBRARY_PATH "$prog" --version 2>"$dest/err")
  st=$?
  [ "$st" = 0 ] || fail "$name --version: exit status $st ($(cat "$dest/err"))"
  [ "$out" = "$name $version" ] || fail "$name --version printed '$out', not '$name $version'"
  env -u LD_LIBRARY_PATH "$prog" --no-such-option >"$dest/out" 2>"$dest/err"
  st=$?
  [ "$st" = 64 ] || fail "$name --no-such-option: exit status $st, not 64"
  [ "$(wc -l <"$dest/err")" = 1 ] || fail "$name --no-such-option: $(wc -l <"$dest/err") lines on stderr: $(cat "$dest/err")"
  case $(cat "$dest/err") in
    "$name: "*) ;;
    *) fail "$name --no-such-option: '$(cat "$dest/err")' does not start with '$name: '" ;;
  esac
  page=$man/man1/$name.1
  if [ ! -f "$page" ]; then
    fail "no manual page $mandir/man1/$name.1"
    continue
  fi
  head -n 20 "$page" | grep -q "^\.TH \"$name\" \"1\"" || fail "$name.1 is not titled $name(1)"
  # the long options of --help (GLib's and argparse's layouts), each named in the page
  options=$(env -u LD_LIBRARY_PATH "$prog" --help 2>/dev/null |
    grep -oE '(^|[ ,])--[a-z][a-z0-9-]*' | sed 's/^[ ,]*//' | sort -u |
    grep -vE '^--(help|help-all|help-gst)$')
  for opt in $options; do
    grep -qF -- "$opt" "$page" || fail "$name.1 does not describe $opt"
  done
  echo "ok $name: --version, usage exit 64, $name.1 ($(echo "$options" | wc -w) options)"
done
[ "$programs" -ge 9 ] || fail "only $programs programs installed"
for spec in "$@"; do
  name=${spec%%=*} example=${spec#*=}
  page=$man/man5/$name.5
  if [ ! -f "$page" ]; then
    fail "no manual page $mandir/man5/$name.5"
    continue
  fi
  keys=$(sed -n 's/^#\{0,1\}\([a-z_][a-z0-9_]*\)=.*/\1/p' "$example" | sort -u)
  for key in $keys; do
    grep -qF -- "\\fB$key\\fR" "$page" || fail "$name.5 does not describe the key $key"
  done
  echo "ok $name.5: $(echo "$keys" | wc -w) keys of $(basename "$example")"
done
[ "$failures" = 0 ] || exit 1
echo "ok: $programs programs"
