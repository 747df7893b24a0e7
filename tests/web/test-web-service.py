#!/usr/bin/env python3
"""The whole operator's view on a real pipeline: a stereod-sim clip (two 480x270 pairs,
22 players, played at 1 frame/s so that llvmpipe keeps up) through stereod (GStreamer,
the GPU filter, the rings) with [daemon] metrics=, stereod-heightmap with its socket,
ring and metrics=, and stereod-web scraping both; then:

  1. stereod's /metrics, twice, two published frames apart, read strictly (promcheck.py): every family of
     daemon/metrics.h with its type, both pairs in every per-pair family, the state gauge
     at running, and the counters of frames captured, paired, submitted and published and
     the latency and GPU histograms moving while frames flow;
  2. the page in headless Chromium: every picture there (the left cameras too: stereod
     serves them), both pairs' states from stereod's metrics; a screenshot whose disparity
     panels and height map are not blank and whose pitch shows as many player markers as
     the JSON line the page drew has players, that line being the builder's own for that
     fused frame (its --json output); the players move from line to line;
  3. the statistics from the metrics: frames per second out, latency, fused frames.
The screenshot is written to OUT.png. Needs EGL (llvmpipe will do) and chromium: skipped
(77) without them, unless STEREOD_REQUIRE_GPU=1.

  test-web-service.py STEREOD STEREOD_HEIGHTMAP STEREOD_SIM STEREOD_WEB PROMCHECK OUT
"""
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chromium_page as cp  # noqa: E402
import pagecheck as pc  # noqa: E402
import webclient as wc  # noqa: E402

stereod, heightmap, sim, web, promcheck_path, out = sys.argv[1:7]
spec = importlib.util.spec_from_file_location("promcheck", promcheck_path)
prom = importlib.util.module_from_spec(spec)
spec.loader.exec_module(prom)
require = os.environ.get("STEREOD_REQUIRE_GPU") == "1"
chromium = shutil.which("chromium") or shutil.which("chromium-browser")
if not chromium:
    print(("FAIL" if require else "SKIP") + ": no chromium")
    sys.exit(1 if require else 77)

tmp = tempfile.mkdtemp(prefix="stereod-web-service-")
tag = "ws%d" % os.getpid()
west, east, hmring = tag + "w", tag + "e", tag + "hm"
procs = {}
page = None


def log(name):
    path = os.path.join(tmp, name + ".log")
    return open(path).read() if os.path.exists(path) else ""


def fail(msg):
    print("FAIL: %s" % msg)
    for name in ("stereod", "heightmap", "web"):
        print("--- %s:\n%s" % (name, "".join(log(name).splitlines(True)[-25:])))
    raise SystemExit(1)


def start(name, args, stdout=None):
    p = subprocess.Popen(args, stdout=stdout or subprocess.DEVNULL,
                         stderr=open(os.path.join(tmp, name + ".log"), "w"))
    procs[name] = p
    return p


def url_in_log(name, pattern, timeout):
    found = []

    def seen():
        m = re.search(pattern, log(name))
        if m:
            found.append(m.group(1))
        return bool(found)
    wc.wait_until("%s's address" % name, seen, timeout, lambda: procs[name].poll() is None)
    return found[0]


try:
    with open(os.path.join(tmp, "sim.conf"), "w") as f:
        f.write("[output]\nframes=40\nfps=25\nformat=jpg\nseed=3\n[scene]\nplayers=22\n")
        for name, x in ((west, -26), (east, 26)):
            f.write("[pair %s]\nposition=%d,-52,16\nlook_at=%d,-8,0\nbaseline=3\nfocal=525\n"
                    "width=480\nheight=270\nnoise=1.5\n" % (name, x, x))
    subprocess.run([sim, "--config", os.path.join(tmp, "sim.conf"), "--out",
                    os.path.join(tmp, "clip"), "--quiet"], check=True, timeout=1200)
    clip = os.path.join(tmp, "clip")
    with open(os.path.join(tmp, "stereod.conf"), "w") as f:
        f.write("[daemon]\nstats_interval=2\nmetrics=127.0.0.1:0\n")
        for name in (west, east):
            f.write("""[pair %(n)s]
left=imagesequencesrc location=%(c)s/%(n)s/left/%%06d.jpg framerate=1/1 ! identity sync=true
right=imagesequencesrc location=%(c)s/%(n)s/right/%%06d.jpg framerate=1/1 ! identity sync=true
width=480
height=270
fps=1
calibration=%(c)s/%(n)s/calib.conf
outputs=disparity;depth;confidence
noise_floor=2
reconnect_min_ms=200
reconnect_max_ms=1000
""" % {"n": name, "c": clip})
    start("stereod", [stereod, "--config", os.path.join(tmp, "stereod.conf")])
    smetrics = url_in_log("stereod", r"metrics on (http://\S+/metrics)", 120)
    sock = os.path.join(tmp, "players.sock")
    with open(os.path.join(tmp, "heightmap.conf"), "w") as f:
        f.write("[heightmap]\ntolerance_ms=300\nwait_ms=500\nstale_ms=2500\nsocket=%s\n"
                "ring=%s\nmetrics=127.0.0.1:0\n[pair %s]\n[pair %s]\n" % (sock, hmring, west,
                                                                          east))
    lines_path = os.path.join(tmp, "players.jsonl")
    hp = start("heightmap", [heightmap, "--config", os.path.join(tmp, "heightmap.conf"),
                             "--json"], stdout=open(lines_path, "w"))
    hmetrics = url_in_log("heightmap", r"metrics on (http://\S+/metrics)", 120)
    strip = lambda u: u[len("http://"):-len("/metrics")]  # noqa: E731
    with open(os.path.join(tmp, "web.conf"), "w") as f:
        f.write("[web]\nlisten=127.0.0.1:0\nstereod=%s\nheightmap=%s\nheightmap_socket=%s\n"
                "heightmap_ring=%s\n[pair west]\nring=%s\n[pair east]\nring=%s\ncolor=depth\n"
                % (strip(smetrics), strip(hmetrics), sock, hmring, west, east))
    start("web", [web, "--config", os.path.join(tmp, "web.conf")])
    url = url_in_log("web", r"serving (http://\S+/) ", 30)
    print("stereod %s, heightmap %s, page %s" % (smetrics, hmetrics, url))

    # 1. stereod's metrics while frames flow
    def scrape():
        return prom.parse(prom.scrape(smetrics))
    wc.wait_until("published frames of both pairs", lambda: min(
        scrape()["stereod_frames_published_total"].series().values()) >= 2, 240,
        lambda: procs["stereod"].poll() is None)
    first = scrape()
    # the second scrape once both pairs published again (a frame takes seconds on a busy
    # llvmpipe): every counter of the flow must have moved by then
    published = lambda f: f["stereod_frames_published_total"].series()  # noqa: E731
    wc.wait_until("two more frames of both pairs", lambda: all(
        v >= published(first)[k] + 2 for k, v in published(scrape()).items()), 240,
        lambda: procs["stereod"].poll() is None)
    second = scrape()
    prom.compare(first, second)
    families = {
        "stereod_build_info": "gauge", "stereod_camera_frames_total": "counter",
        "stereod_camera_frames_corrupt_total": "counter",
        "stereod_frames_paired_total": "counter", "stereod_frames_submitted_total": "counter",
        "stereod_frames_published_total": "counter", "stereod_frames_dropped_total": "counter",
        "stereod_reconnects_total": "counter", "stereod_stalls_total": "counter",
        "stereod_pair_state": "gauge", "stereod_frames_per_second": "gauge",
        "stereod_capture_to_publish_seconds": "histogram", "stereod_gpu_seconds": "histogram",
    }
    for name, type_ in families.items():
        assert name in second and second[name].type == type_, (name, second.get(name))
        if name != "stereod_build_info":
            pairs = {dict(l)["pair"] for l in second[name].series()}
            assert pairs == {west, east}, (name, pairs)
    for name in ("stereod_camera_frames_total", "stereod_frames_paired_total",
                 "stereod_frames_submitted_total", "stereod_frames_published_total",
                 "stereod_capture_to_publish_seconds", "stereod_gpu_seconds"):
        for labels, v in second[name].series().items():
            b = first[name].series()[labels]
            now, before = (v[2], b[2]) if second[name].type == "histogram" else (v, b)
            assert now > before, "%s%s did not move: %s -> %s" % (name, labels, before, now)
    states = {dict(l)["pair"]: dict(l)["state"]
              for l, v in second["stereod_pair_state"].series().items() if v == 1}
    assert states == {west: "running", east: "running"}, states
    print("stereod metrics: %d families, published %s" % (
        len(second), {dict(l)["pair"]: v for l, v in
                      second["stereod_frames_published_total"].series().items()}))

    # a second stereod on the same metrics port: refused at start, status 78 (restarting
    # would not help), one line saying why; the first one goes on serving
    port = smetrics.rsplit(":", 1)[1].split("/")[0]
    with open(os.path.join(tmp, "second.conf"), "w") as f:
        f.write(open(os.path.join(tmp, "stereod.conf")).read()
                .replace("metrics=127.0.0.1:0", "metrics=127.0.0.1:" + port)
                .replace("[pair %s]" % west, "[pair %sx]" % west)
                .replace("[pair %s]" % east, "[pair %sx]" % east))
    r = subprocess.run([stereod, "--config", os.path.join(tmp, "second.conf")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 78, (r.returncode, r.stderr[-500:])
    assert "cannot listen on 127.0.0.1:%s" % port in r.stderr, r.stderr[-500:]
    prom.parse(prom.scrape(smetrics))

    # 2. the page
    page = cp.Page(chromium, 1280, 1500)
    page.navigate(url)
    if not page.wait(pc.READY_JS, 180):
        fail("the page did not show everything within 180 s: %s" % page.evaluate(pc.STATE_JS))
    wc.wait_until("states from stereod", lambda: pc.state(page)["states"] == ["running", "running"],
                  30)
    page.wait("window.stereodWeb.players && window.stereodWeb.players.players.length > 3", 60)
    png, before = pc.steady_screenshot(page)
    if png is None:
        fail("the players line changed during every screenshot")
    with open(out + ".png", "wb") as f:
        f.write(png)
    print("screenshot: %s.png" % out)
    pic = pc.Picture(*cp.read_png(png))
    st = before
    for name in ("view-west-color", "view-east-color", "view-west-left"):
        lit, colours = pc.colour_stats(pic, st["views"][name]["box"])
        print("%s: %.0f %% lit, %d colours" % (name, 100 * lit, colours))
        assert lit > 0.3, "%s is mostly black" % name
        assert colours >= 12, "%s is blank (%d colours)" % (name, colours)
    coloured = pc.coloured_pixels(pic, st["heights"])
    blobs = pc.magenta_blobs(pic, st["pitch"])
    drawn = st["players"]
    lines = {}
    for l in open(lines_path):
        if l.strip():
            j = json.loads(l)
            lines[j["frame"]] = j
    print("height map: %d coloured pixels, %d markers; fused frame %s with %s players "
          "(pairs %s)" % (coloured, len(blobs), st["frame"], st["count"], st["pairs"]))
    assert coloured > 50, "the height map shows no heights"
    assert int(st["count"]) == len(drawn["players"])
    assert drawn["frame"] in lines, "the page drew a frame the builder did not print"
    assert pc.same_line(lines[drawn["frame"]], drawn), \
        "the page drew another line than the builder's: %s\n%s" % (drawn, lines[drawn["frame"]])
    # markers closer than their size merge into one blob: never more blobs than players,
    # and as many when the players are apart
    apart = all(((a["x"] - b["x"]) ** 2 + (a["y"] - b["y"]) ** 2) ** 0.5 > 2.5
                for i, a in enumerate(drawn["players"]) for b in drawn["players"][i + 1:])
    assert len(blobs) <= len(drawn["players"]), (len(blobs), len(drawn["players"]))
    if apart:
        assert len(blobs) == len(drawn["players"]), (len(blobs), len(drawn["players"]))
    later = page.wait("window.stereodWeb.players.frame > %d && JSON.stringify("
                      "window.stereodWeb.players)" % (drawn["frame"] + 1), 60)
    assert later, "no later players line"
    later = json.loads(later)
    # moving players: the later line's positions are not the earlier ones (ids may change
    # when a busy llvmpipe makes the builder fuse one pair at a time)
    where = lambda l: sorted((round(p["x"], 2), round(p["y"], 2)) for p in l["players"])  # noqa
    assert where(later) != where(drawn), "the players stood still from fused frame %d to %d" % (
        drawn["frame"], later["frame"])

    # 3. the statistics, from the metrics (rates and latencies over the last 10 s: a frame
    #    may take seconds on a busy llvmpipe, so until both pairs published in the window)
    #    one snapshot in which every rate of both pairs moved: on a busy llvmpipe a pair
    #    may publish a frame in one window and submit none (seconds of GPU per frame)
    snapshot = {}
    def flowing():
        s = pc.state(page)["stats"]
        snapshot["stats"] = s
        return all(p["fps_out"] and p["latency_p50_ms"] and p["fps_in"] and p["camera_fps"]
                   and p["gpu_ms"] for p in s["pairs"])
    wc.wait_until("rates and latencies of both pairs", flowing, 240)
    stats = snapshot["stats"]
    for p in stats["pairs"]:
        assert p["source"] == "stereod" and p["state"] == "running", p
        assert p["fps_in"] > 0 and p["camera_fps"] > 0 and p["gpu_ms"] > 0, p
    assert stats["heightmap"]["fused_rate"] is not None, stats["heightmap"]
    print("ok")
except (AssertionError, KeyError, ValueError, OSError, cp.BrowserError,
        subprocess.CalledProcessError, prom.FormatError) as e:
    import traceback
    traceback.print_exc()
    fail(e)
finally:
    if page:
        page.close()
    for p in procs.values():
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    subprocess.run(["rm", "-rf", tmp])
