#!/usr/bin/env python3
"""stereod-web's page in headless Chromium (Debian's chromium package), against
web-test-writer (two pairs, the height map's ring and 7 players on its socket):

  - the page comes up with every picture, the statistics and the players;
  - a screenshot whose disparity and depth panels are not blank (mostly lit, many
    colours), whose height map panel shows the colour map's colours (the players' discs),
    and whose pitch shows as many magenta player markers as the page says there are
    players, which is the number of players of the JSON line it drew (the same line the
    height map's socket served for that frame: read here too) and of the writer;
  - both pairs' states shown;
  - the rate field: fewer pictures per second when set lower (the streams restart).

The screenshot is written to OUT.png (and the page's state to OUT.json).
Skipped (77) when chromium is not installed, unless STEREOD_REQUIRE_GPU=1 (CI: .ci/install
installs it).

  test-web-page.py STEREOD_WEB WEB_TEST_WRITER OUT
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chromium_page as cp  # noqa: E402
import pagecheck as pc  # noqa: E402
import webclient as wc  # noqa: E402

web, writer, out = sys.argv[1], sys.argv[2], sys.argv[3]
chromium = shutil.which("chromium") or shutil.which("chromium-browser")
if not chromium:
    if os.environ.get("STEREOD_REQUIRE_GPU") == "1":
        print("FAIL: no chromium (install it: .ci/install)")
        sys.exit(1)
    print("SKIP: no chromium; set STEREOD_REQUIRE_GPU=1 to fail instead")
    sys.exit(77)

tmp = tempfile.mkdtemp(prefix="stereod-web-page-")
tag = "tp%d" % os.getpid()
west, east, hm = tag + "w", tag + "e", tag + "hm"
sock = os.path.join(tmp, "players.sock")
procs = []
page = None


def fail(msg):
    print("FAIL: %s" % msg)
    path = os.path.join(tmp, "web.err")
    if os.path.exists(path):
        print("--- stereod-web:\n" + "".join(open(path).readlines()[-30:]))
    raise SystemExit(1)


try:
    wout = os.path.join(tmp, "writer.out")
    wp = subprocess.Popen([writer, "--pairs", "%s,%s" % (west, east), "--socket", sock,
                           "--heightmap-ring", hm, "--hz", "5", "--size", "640x360",
                           "--players", "7"], stdout=open(wout, "w"), stderr=subprocess.STDOUT)
    procs.append(wp)
    wc.wait_until("the writer", lambda: "ready" in open(wout).read(), 30,
                  lambda: wp.poll() is None)
    conf = os.path.join(tmp, "web.conf")
    with open(conf, "w") as f:
        f.write("[web]\nlisten=127.0.0.1:0\nrate=2\nheightmap_socket=%s\nheightmap_ring=%s\n"
                "[pair west]\nring=%s\n[pair east]\nring=%s\ncolor=depth\n" %
                (sock, hm, west, east))
    err = os.path.join(tmp, "web.err")
    webp = subprocess.Popen([web, "--config", conf], stderr=open(err, "w"))
    procs.append(webp)
    url = []
    wc.wait_until("stereod-web", lambda: url.extend(re.findall(r"serving (http://\S+/) ",
                                                               open(err).read())) or url, 30,
                  lambda: webp.poll() is None)
    url = url[0]
    # the height map's lines, read beside the page
    direct = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    direct.connect(sock)
    direct.setblocking(False)
    lines = {}
    buf = b""

    def read_socket():
        global buf
        try:
            while True:
                chunk = direct.recv(1 << 16)
                if not chunk:
                    break
                buf += chunk
        except BlockingIOError:
            pass
        *done, buf = buf.split(b"\n")
        for l in done:
            j = json.loads(l)
            lines[j["frame"]] = j

    page = cp.Page(chromium, 1280, 1500)
    page.navigate(url)
    t0 = time.time()
    if not page.wait(pc.READY_JS, 90):
        fail("the page did not show everything within 90 s: %s" % page.evaluate(pc.STATE_JS))
    print("page ready in %.1f s" % (time.time() - t0))
    time.sleep(1.5)   # a few more players lines: trails, and the canvas drawn at its size
    # the state before and after the shot agree on the frame shown, or we take another
    png, before = pc.steady_screenshot(page)
    if png is None:
        fail("the players line changed during every screenshot")
    read_socket()
    with open(out + ".png", "wb") as f:
        f.write(png)
    with open(out + ".json", "w") as f:
        json.dump(before, f, indent=1)
    print("screenshot: %s.png" % out)
    w, h, rgb = cp.read_png(png)
    pic = pc.Picture(w, h, rgb)

    st = before
    for name in ("view-west-color", "view-east-color", "view-west-confidence"):
        lit, colours = pc.colour_stats(pic, st["views"][name]["box"])
        print("%s: %.0f %% lit, %d colours" % (name, 100 * lit, colours))
        assert st["views"][name]["loaded"], name
        assert lit > 0.6, "%s is mostly black (%.0f %% lit)" % (name, 100 * lit)
        if name.endswith("color"):
            assert colours >= 12, "%s has %d colours: blank" % (name, colours)
    coloured = pc.coloured_pixels(pic, st["heights"])
    blobs = pc.magenta_blobs(pic, st["pitch"])
    shown = int(st["count"])
    drawn = st["players"]
    print("height map: %d coloured pixels; %d markers %s; the page says %d players of fused "
          "frame %s (pairs %s)" % (coloured, len(blobs), blobs, shown, st["frame"], st["pairs"]))
    assert coloured > 100, "the height map panel shows no heights"
    assert str(drawn["frame"]) == st["frame"]
    assert shown == len(drawn["players"]) == 7, (shown, len(drawn["players"]))
    assert len(blobs) == shown, "%d markers for %d players" % (len(blobs), shown)
    frame = drawn["frame"]
    if frame in lines:
        assert pc.same_line(lines[frame], drawn), "the page drew another line than the socket served"
    else:
        assert lines and min(lines) > frame, "frame %d never came from the socket" % frame
    assert st["pairs"] == "%s, %s" % (west, east), st["pairs"]
    assert st["states"] == ["publishing", "publishing"], st["states"]

    # the players move: a later line puts them elsewhere
    later = page.wait("window.stereodWeb.players.frame > %d && JSON.stringify("
                      "window.stereodWeb.players)" % (frame + 2), 30)
    assert later, "no newer players line"
    later = json.loads(later)
    moved = [a for a, b in zip(drawn["players"], later["players"])
             if abs(a["x"] - b["x"]) + abs(a["y"] - b["y"]) > 0.05]
    assert len(moved) == 7, "players did not move"

    # pictures keep coming; then the rate field at 0.5 pictures/s: the stream restarts at
    # that rate (at most 0.5 a second, plus the one sent at once)
    n0 = page.evaluate("window.stereodWeb.frames['west/color']")
    assert page.wait("window.stereodWeb.frames['west/color'] >= %d" % (n0 + 2), 30), \
        "no new pictures"
    page.evaluate("document.getElementById('rate').value = 0.5;"
                  "document.getElementById('rate').dispatchEvent(new Event('change'))")
    assert page.wait("window.stereodWeb.fps === 0.5", 10), "the rate did not change"
    time.sleep(1)
    n1 = page.evaluate("window.stereodWeb.frames['west/color']")
    time.sleep(6)
    n2 = page.evaluate("window.stereodWeb.frames['west/color']")
    print("pictures of west/color in 6 s at 0.5/s: %d" % (n2 - n1))
    assert 1 <= n2 - n1 <= 4, "%d pictures in 6 s at 0.5 a second" % (n2 - n1)
    print("ok")
except (AssertionError, KeyError, ValueError, OSError, cp.BrowserError) as e:
    import traceback
    traceback.print_exc()
    fail(e)
finally:
    if page:
        page.close()
    for p in procs:   # SIGTERM first: the writer closes and removes its rings
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    subprocess.run(["rm", "-rf", tmp])
