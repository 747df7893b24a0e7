"""Where meson installs stereod_client.py (client/meson.build), relative to the prefix.

    install_dir.py PREFIX MESON_DIR

MESON_DIR is meson's python.get_install_dir() (absolute or relative to PREFIX). It is
printed back when PREFIX/MESON_DIR is on this interpreter's sys.path; otherwise this
interpreter's purelib when that lies under PREFIX (Debian's meson says
lib/python3/dist-packages for every prefix, but /usr/local/lib/python3/dist-packages is
not on Debian's sys.path; /usr/local/lib/python3.X/dist-packages is); otherwise MESON_DIR.
"""
import os
import sys
import sysconfig


def main():
    prefix, meson_dir = sys.argv[1], sys.argv[2]
    chosen = os.path.normpath(os.path.join(prefix, meson_dir))
    on_path = {os.path.normpath(p) for p in sys.path if p}
    if chosen not in on_path:
        purelib = os.path.normpath(sysconfig.get_paths()["purelib"])
        if purelib in on_path and purelib.startswith(os.path.normpath(prefix) + os.sep):
            chosen = purelib
    print(os.path.relpath(chosen, prefix))


main()
