"""Clients of stereod-web for its tests (standard library only): plain GETs, an MJPEG
reader and a Server-Sent Events reader that parse the stream themselves (chunked
transfer coding, multipart parts with their headers, events), each on a thread.
Never through a proxy: the server is on this machine whatever http_proxy says."""
import json
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def get(url, method="GET", timeout=10):
    """(status, headers, body) of a request; HTTP errors are answers too."""
    req = urllib.request.Request(url, method=method)
    try:
        with _opener.open(req, timeout=timeout) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def get_json(url):
    status, _, body = get(url)
    assert status == 200, "%s: HTTP %d" % (url, status)
    return json.loads(body)


class _Stream(threading.Thread):
    """A GET whose chunked body is read on a thread; subclasses parse the bytes."""

    def __init__(self, url, rcvbuf=None, read=True):
        super().__init__(daemon=True)
        u = urllib.parse.urlsplit(url)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.connect((u.hostname, u.port))
        path = u.path + ("?" + u.query if u.query else "")
        self.sock.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (path, u.netloc)).encode())
        self.status = None
        self.headers = {}
        self.error = None
        self.stopped = False
        self.closed_by_server = False
        self._read = read
        self._raw = b""
        self._body = b""

    def _recv(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError
        self._raw += data

    def _line(self):
        while b"\r\n" not in self._raw:
            self._recv()
        line, self._raw = self._raw.split(b"\r\n", 1)
        return line.decode("latin-1")

    def run(self):
        try:
            status = self._line()
            self.status = int(status.split()[1])
            while True:
                line = self._line()
                if not line:
                    break
                k, v = line.split(":", 1)
                self.headers[k.strip().lower()] = v.strip()
            if not self._read:
                return
            chunked = self.headers.get("transfer-encoding", "").lower() == "chunked"
            while not self.stopped:
                if chunked:
                    size = int(self._line().split(";")[0], 16)
                    if size == 0:
                        break
                    while len(self._raw) < size + 2:
                        self._recv()
                    self._body += self._raw[:size]
                    self._raw = self._raw[size + 2:]
                else:
                    self._recv()
                    self._body += self._raw
                    self._raw = b""
                self.parse()
        except EOFError:
            self.closed_by_server = True
        except OSError as e:
            if not self.stopped:
                self.error = e
                self.closed_by_server = True

    def stop(self):
        self.stopped = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self.join(10)


class Mjpeg(_Stream):
    """frames: [(time, headers dict, jpeg bytes)]"""

    def __init__(self, url, rcvbuf=None, read=True):
        super().__init__(url, rcvbuf, read)
        self.frames = []

    def parse(self):
        while True:
            head_end = self._body.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = self._body[:head_end].decode("latin-1").split("\r\n")
            if not head[0].startswith("--"):
                raise AssertionError("not a multipart boundary: %r" % head[0])
            h = {}
            for line in head[1:]:
                k, v = line.split(":", 1)
                h[k.strip().lower()] = v.strip()
            n = int(h["content-length"])
            if len(self._body) < head_end + 4 + n + 2:
                return
            jpeg = self._body[head_end + 4:head_end + 4 + n]
            if self._body[head_end + 4 + n:head_end + 6 + n] != b"\r\n":
                raise AssertionError("a part does not end with CRLF")
            self._body = self._body[head_end + 6 + n:]
            self.frames.append((time.time(), h, jpeg))


class Events(_Stream):
    """events: [(time, event name, data string)]"""

    def __init__(self, url):
        super().__init__(url)
        self.events = []

    def parse(self):
        while b"\n\n" in self._body:
            block, self._body = self._body.split(b"\n\n", 1)
            name, data = "message", []
            for line in block.decode("utf-8").split("\n"):
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    data.append(line[6:])
            self.events.append((time.time(), name, "\n".join(data)))

    def of(self, name):
        return [json.loads(d) for _, n, d in self.events if n == name]


def wait_until(what, predicate, timeout, alive=None):
    deadline = time.time() + timeout
    while not predicate():
        if alive and not alive():
            raise AssertionError("the program ended while waiting for %s" % what)
        if time.time() > deadline:
            raise AssertionError("no %s within %d s" % (what, timeout))
        time.sleep(0.1)


def proc_stat(pid):
    """(CPU seconds used, resident MiB) of a process."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    import os
    hz = os.sysconf("SC_CLK_TCK")
    with open("/proc/%d/status" % pid) as f:
        rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    return ticks / hz, rss / 1024.0
