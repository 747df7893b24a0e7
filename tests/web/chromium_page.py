"""Headless Chromium driven through the DevTools protocol on a pipe, and a PNG reader:
what the page tests of stereod-web need to load the page, wait for what its script
shows, take a screenshot and look at its pixels (standard library only).

  page = Page(chromium, width, height)     starts the browser (--remote-debugging-pipe)
  page.navigate(url)
  value = page.wait(js, timeout)           until the expression is truthy; its value
  png = page.screenshot()                  PNG bytes
  page.close()
  w, h, rgb = read_png(png)                rgb: bytes, 3 per pixel, rows top to bottom

Chromium runs with --no-sandbox when we are root (it refuses to start otherwise), and
with --no-proxy-server: the page is on this machine whatever http_proxy says.
"""
import base64
import json
import os
import struct
import subprocess
import tempfile
import time
import zlib


class BrowserError(Exception):
    pass


class Page:
    def __init__(self, chromium, width, height, log=None):
        self.profile = tempfile.mkdtemp(prefix="stereod-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        args = [chromium, "--headless", "--disable-gpu", "--no-proxy-server",
                "--remote-debugging-pipe", "--no-first-run", "--no-default-browser-check",
                "--user-data-dir=" + self.profile, "--window-size=%d,%d" % (width, height),
                "--hide-scrollbars", "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")

        def fds():
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        self.proc = subprocess.Popen(args, preexec_fn=fds, pass_fds=(3, 4),
                                     stdout=log or subprocess.DEVNULL,
                                     stderr=log or subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._id = 0
        self.session = None
        targets = self.call("Target.getTargets")["targetInfos"]
        pages = [t for t in targets if t["type"] == "page"]
        if pages:
            target = pages[0]["targetId"]
        else:
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def _send(self, msg):
        data = json.dumps(msg).encode() + b"\0"
        while data:
            n = os.write(self._to_child, data)
            data = data[n:]

    def _receive(self, deadline):
        while b"\0" not in self._buf:
            if time.time() > deadline:
                raise BrowserError("no answer from chromium")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise BrowserError("chromium closed its pipe (exit status %s)" %
                                   self.proc.poll())
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, timeout=60):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        self._send(msg)
        deadline = time.time() + timeout
        while True:
            answer = self._receive(deadline)
            if answer.get("id") == self._id:
                if "error" in answer:
                    raise BrowserError("%s: %s" % (method, answer["error"]))
                return answer.get("result", {})

    def navigate(self, url):
        self.call("Page.navigate", {"url": url})

    def evaluate(self, js):
        r = self.call("Runtime.evaluate", {"expression": js, "returnByValue": True})
        if "exceptionDetails" in r:
            raise BrowserError("script: %s" % r["exceptionDetails"].get("text"))
        return r["result"].get("value")

    def wait(self, js, timeout):
        deadline = time.time() + timeout
        while True:
            value = self.evaluate(js)
            if value:
                return value
            if time.time() > deadline:
                return None
            time.sleep(0.25)

    def screenshot(self):
        return base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"])

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        subprocess.run(["rm", "-rf", self.profile])


def read_png(data):
    """8-bit RGB or RGBA, not interlaced (what Chromium writes) -> (w, h, rgb bytes)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError("PNG type %d/%d/%d not read here" % (depth, ctype, interlace))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = w * bpp
    out = bytearray(w * h * 3)
    prev = bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        if bpp == 3:
            out[y * w * 3:(y + 1) * w * 3] = line
        else:
            o = y * w * 3
            for x in range(w):
                out[o + 3 * x:o + 3 * x + 3] = line[4 * x:4 * x + 3]
        prev = line
    return w, h, bytes(out)
