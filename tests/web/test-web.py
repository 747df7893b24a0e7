#!/usr/bin/env python3
"""stereod-web end to end against web-test-writer (two pairs' rings, a height-map ring and
the players' JSON socket, published at 5 Hz), no GPU:

 1. the command line: --version, bad options and --listen (64), a bad configuration (78,
    naming file, group and key), --check-config;
 2. the page: HTML that loads nothing from elsewhere; /api/config; 404, 405, 400;
 3. MJPEG streams of every view: JPEG parts with counters that only go up, at most at the
    rate asked for (and max_rate), at least a few of them; a snapshot;
 4. the events: config first, then stats and players; every players line is a line the
    height map's socket served (the same text, read from the socket directly);
 5. the statistics: both pairs publishing, the scales taken from the first frame, why
    there is no left image;
 6. a stalled client (a socket with a 4 KiB receive buffer that never reads, asking for
    big noisy pictures at max_rate): disconnected after stall_s, counted; meanwhile a
    reading client keeps getting new frames close behind the ring's counter, the server's
    memory stays bounded and its CPU time low (a busy loop on the stalled socket would
    show), and after it the server still serves;
 7. max_clients: the next stream is refused with 503; SIGTERM: exit 0.

  test-web.py STEREOD_WEB WEB_TEST_WRITER
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webclient as wc  # noqa: E402

web, writer = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="stereod-web-test-")
tag = "tw%d" % os.getpid()
west, east, hm = tag + "w", tag + "e", tag + "hm"
sock = os.path.join(tmp, "players.sock")
procs = []


def fail(msg):
    print("FAIL: %s" % msg)
    for name in ("web.err", "writer.err"):
        path = os.path.join(tmp, name)
        if os.path.exists(path):
            print("--- %s" % name)
            print("".join(open(path).readlines()[-40:]))
    raise SystemExit(1)


def run(args, **kw):
    return subprocess.run([web] + args, capture_output=True, text=True, timeout=60, **kw)


def conf(extra="", pairs=None):
    text = """[web]
listen=127.0.0.1:0
rate=2
max_rate=5
stall_s=2
max_clients=6
quality=100
max_width=1280
heightmap_socket=%s
heightmap_ring=%s
%s
[pair west]
ring=%s
[pair east]
ring=%s
color=depth
""" % (sock, hm, extra, west, east)
    path = os.path.join(tmp, "web.conf")
    with open(path, "w") as f:
        f.write(text)
    return path


def start_writer(*args):
    out = open(os.path.join(tmp, "writer.out"), "w")
    err = open(os.path.join(tmp, "writer.err"), "w")
    p = subprocess.Popen([writer, "--pairs", "%s,%s" % (west, east), "--socket", sock,
                          "--heightmap-ring", hm, "--hz", "5"] + list(args),
                         stdout=out, stderr=err)
    procs.append(p)
    wc.wait_until("ready", lambda: "ready" in open(out.name).read(), 30,
                  lambda: p.poll() is None)
    return p


def start_web(config):
    err_path = os.path.join(tmp, "web.err")
    p = subprocess.Popen([web, "--config", config], stdout=subprocess.DEVNULL,
                         stderr=open(err_path, "w"))
    procs.append(p)
    url = []

    def served():
        m = re.search(r"serving (http://\S+/) ", open(err_path).read())
        if m:
            url.append(m.group(1))
        return bool(url)
    wc.wait_until("the serving line", served, 30, lambda: p.poll() is None)
    return p, url[0]


def log():
    return open(os.path.join(tmp, "web.err")).read()


def jpeg_ok(data):
    return data[:3] == b"\xff\xd8\xff" and data[-2:] == b"\xff\xd9"


try:
    # 1. the command line
    r = run(["--version"])
    assert r.returncode == 0 and re.fullmatch(r"stereod-web \S+\n", r.stdout), r
    for bad in (["--bogus"], ["extra"], ["--listen", "example.org:80"], ["--listen", "70000"]):
        r = run(bad)
        assert r.returncode == 64, (bad, r)
        assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith("stereod-web: "), r.stderr
    bad_conf = os.path.join(tmp, "bad.conf")
    with open(bad_conf, "w") as f:
        f.write("[web]\nrate=0\n[pair a]\n")
    r = run(["--config", bad_conf])
    assert r.returncode == 78, r
    assert r.stderr.startswith("stereod-web: %s: [web] rate: " % bad_conf), r.stderr
    config = conf()
    r = run(["--config", config, "--check-config"])
    assert r.returncode == 0 and "OK (2 pairs" in r.stdout, r
    r = run(["--config", config, "--check-config", "--listen", "8099"])
    assert "listening on 8099" in r.stdout, r

    start_writer("--noise", "--size", "1280x720")
    webp, url = start_web(config)
    alive = lambda: webp.poll() is None  # noqa: E731
    print("serving", url)

    # 2. the page and the small routes
    status, headers, page = wc.get(url)
    assert status == 200 and headers["Content-Type"].startswith("text/html"), status
    text = page.decode()
    assert "<canvas" in text and "EventSource" in text
    assert not re.search(r"https?://", text), "the page names another server"
    for m in re.finditer(r"""(?:src|href)\s*=\s*["']([^"']*)""", text):
        assert m.group(1).startswith(("/", "#", "data:")), "loads %s" % m.group(1)
    assert "<link" not in text and not re.search(r"<script[^>]*src", text)
    cfg = wc.get_json(url + "api/config")
    assert [p["name"] for p in cfg["pairs"]] == ["west", "east"], cfg
    assert cfg["heightmap"] and cfg["players"] and not cfg["left"]
    assert len(cfg["colormap"]) == 256 * 6
    assert wc.get(url + "nothing")[0] == 404
    assert wc.get(url + "api/config", method="POST")[0] == 405
    assert wc.get(url + "stream.mjpg?source=nobody&view=color")[0] == 400
    assert wc.get(url + "stream.mjpg?source=west&view=height")[0] == 400
    assert wc.get(url + "stream.mjpg?source=west&view=color&fps=0")[0] == 400
    assert wc.get(url + "snapshot.jpg?source=west")[0] == 400

    # 3. the streams: 4 s of each view at 2 frames/s, and one asking for more than max_rate
    streams = {
        "west/color": wc.Mjpeg(url + "stream.mjpg?source=west&view=color&fps=2"),
        "west/confidence": wc.Mjpeg(url + "stream.mjpg?source=west&view=confidence&fps=2"),
        "east/color": wc.Mjpeg(url + "stream.mjpg?source=east&view=color&fps=2"),
        "heightmap/height": wc.Mjpeg(url + "stream.mjpg?source=heightmap&view=height&fps=2"),
        "west/color@fast": wc.Mjpeg(url + "stream.mjpg?source=west&view=color&fps=50"),
    }
    for s in streams.values():
        s.start()
    wc.wait_until("3 frames on every stream",
                  lambda: all(len(s.frames) >= 3 for s in streams.values()), 60, alive)
    t0 = time.time()
    time.sleep(4)
    for name, s in streams.items():
        assert s.status == 200, (name, s.status)
        assert s.headers["content-type"].startswith("multipart/x-mixed-replace"), s.headers
        frames = list(s.frames)
        counters = [int(h["x-counter"]) for _, h, _ in frames]
        assert counters == sorted(set(counters)), (name, counters)
        assert all(jpeg_ok(j) for _, _, j in frames), name
        recent = [t for t, _, _ in frames if t >= t0]
        limit = 5 if name.endswith("@fast") else 2   # max_rate 5, asked 2
        assert len(recent) <= limit * 4 + 2, "%s: %d frames in 4 s at %d/s" % (name, len(recent),
                                                                              limit)
    for s in streams.values():
        s.stop()
    status, headers, snap = wc.get(url + "snapshot.jpg?source=east&view=confidence")
    assert status == 200 and headers["Content-Type"] == "image/jpeg" and jpeg_ok(snap)

    # 4. the events, beside a reader of the height map's socket itself
    import socket as so
    direct = so.socket(so.AF_UNIX, so.SOCK_STREAM)
    direct.connect(sock)
    direct.settimeout(10)
    events = wc.Events(url + "events")
    events.start()
    wc.wait_until("10 players events", lambda: len(events.of("players")) >= 10, 60, alive)
    lines = b""
    deadline = time.time() + 10
    while lines.count(b"\n") < 5 and time.time() < deadline:
        lines += direct.recv(65536)
    direct.close()
    served = {json.loads(l)["frame"]: l.decode() for l in lines.split(b"\n")[:-1]}
    names = [n for _, n, _ in events.events]
    assert names[0] == "config" and names[1] == "stats", names[:3]
    import base64
    pictures = events.of("picture")
    shown = {(p["source"], p["view"]) for p in pictures}
    assert shown == {("west", "color"), ("west", "confidence"), ("east", "color"),
                     ("east", "confidence"), ("heightmap", "height")}, shown
    for p in pictures:
        assert jpeg_ok(base64.b64decode(p["jpeg"])), (p["source"], p["view"])
    for key in shown:
        counters = [p["counter"] for p in pictures if (p["source"], p["view"]) == key]
        assert counters == sorted(set(counters)), (key, counters)
    players = [d for _, n, d in events.events if n == "players"]
    frames = [json.loads(d)["frame"] for d in players]
    assert frames == sorted(set(frames)), frames
    common = [f for f in frames if f in served]
    assert common, "no frame both in the events and on the socket: %s %s" % (frames, list(served))
    for d in players:
        line = json.loads(d)
        assert len(line["players"]) == 7 and line["pairs"] == [west, east], line
        if line["frame"] in served:
            assert d == served[line["frame"]], "the event differs from the socket's line"

    # 5. the statistics
    stats = events.of("stats")[-1]
    by = {p["name"]: p for p in stats["pairs"]}
    for name in ("west", "east"):
        p = by[name]
        assert p["state"] == "publishing" and p["ring"]["open"], p
        assert p["fps_out"] > 0 and p["source"] == "ring", p
        assert "left images need stereod's metrics address" in p["errors"]["left"], p
    assert by["west"]["scale"]["kind"] == "disparity" and by["west"]["scale"]["max"] >= 40
    assert by["east"]["scale"]["kind"] == "depth" and by["east"]["scale"]["far"] > by["east"]["scale"]["near"]
    assert stats["heightmap"]["connected"] and stats["heightmap"]["grid"]["width"] == 555
    events.stop()

    # 6. a stalled client beside a reading one
    reader = wc.Mjpeg(url + "stream.mjpg?source=west&view=color&fps=5")
    reader.start()
    wc.wait_until("a first frame", lambda: reader.frames, 30, alive)
    cpu0, rss0 = wc.proc_stat(webp.pid)
    t0 = time.time()
    stalled = wc.Mjpeg(url + "stream.mjpg?source=west&view=color&fps=5", rcvbuf=4096, read=False)
    stalled.start()
    wc.wait_until("the stalled client's disconnection",
                  lambda: "took nothing for" in log(), 120, alive)
    t1 = time.time()
    cpu1, rss1 = wc.proc_stat(webp.pid)
    during = [int(h["x-counter"]) for t, h, _ in reader.frames if t0 <= t <= t1]
    ring = wc.get_json(url + "api/stats")
    counter = {p["name"]: p["ring"]["counter"] for p in ring["pairs"]}["west"]
    last = int(reader.frames[-1][1]["x-counter"])
    print("stalled client dropped after %.1f s; the reader got %d frames meanwhile (ring at %d, "
          "reader at %d); server CPU %.2f s over %.1f s, RSS %.1f -> %.1f MiB" % (
              t1 - t0, len(during), counter, last, cpu1 - cpu0, t1 - t0, rss0, rss1))
    assert len(during) >= 3, "the reading client starved while the other one stalled"
    assert counter - last <= 20, "the reader fell %d frames behind the ring" % (counter - last)
    assert rss1 - rss0 < 64, "RSS grew by %.1f MiB with a stalled client" % (rss1 - rss0)
    assert cpu1 - cpu0 < 0.6 * (t1 - t0), "%.2f s of CPU in %.1f s" % (cpu1 - cpu0, t1 - t0)
    assert wc.get_json(url + "api/stats")["clients_dropped"] == 1
    stalled.sock.close()
    n = len(reader.frames)
    wc.wait_until("frames after the drop", lambda: len(reader.frames) >= n + 2, 30, alive)
    reader.stop()

    # 7. max_clients (6): six streams held, the seventh refused (once the clients above are
    #    gone: the server notices a closed stream within its 1 s check)
    wc.wait_until("no client left", lambda: wc.get_json(url + "api/stats")["clients"] == 0, 30,
                  alive)
    held = [wc.Mjpeg(url + "stream.mjpg?source=east&view=confidence&fps=1") for _ in range(6)]
    for h in held:
        h.start()
    wc.wait_until("six streams", lambda: all(h.status == 200 for h in held), 30, alive)
    assert wc.get(url + "stream.mjpg?source=east&view=color")[0] == 503
    assert wc.get(url + "events")[0] == 503
    assert wc.get(url + "api/stats")[0] == 200   # the small routes still answer
    for h in held:
        h.stop()

    webp.send_signal(signal.SIGTERM)
    assert webp.wait(30) == 0, "exit status %s after SIGTERM" % webp.returncode
    print("ok")
except (AssertionError, KeyError, ValueError, OSError) as e:
    import traceback
    traceback.print_exc()
    fail(e)
finally:
    for p in procs:   # SIGTERM first: the writer closes and removes its rings
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    subprocess.run(["rm", "-rf", tmp])
