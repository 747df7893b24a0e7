#!/usr/bin/env python3
"""Pure-Python reader of stereod's shared-memory rings.

The layout and the protocol are specified byte for byte in include/stereod/ring.h;
this module follows them with the standard library only (mmap, struct, ctypes for the
futex wait). Planes come back as numpy arrays (height x width, little-endian dtypes)
when numpy can be imported, otherwise as array.array objects holding width * height
values row by row. Set STEREOD_CLIENT_NO_NUMPY=1 to force the latter.

    import stereod_client
    with stereod_client.Client("north-1") as ring:
        counter = 0
        while True:
            counter = ring.wait(counter, timeout=1.0)
            frame = ring.read_latest()
            counter = frame.counter
            print(frame.frame_number, frame.disparity_px()[240][320])

Command line: python3 stereod_client.py PAIR [--count N] [--timeout S]

Memory ordering: the seqlock check relies on loads not being reordered around the two
reads of the slot sequence, which holds on x86-64 (TSO). On weakly ordered CPUs use
the C library (libstereod-client), which has the fences.
"""

import array
import ctypes
import errno
import math
import mmap
import os
import platform
import struct
import sys
import time

if os.environ.get("STEREOD_CLIENT_NO_NUMPY", "") not in ("", "0"):
    np = None
else:
    try:
        import numpy as np
    except ImportError:
        np = None

MAGIC = b"STEREOD1"
VERSION = 1
SHM_DIR = "/dev/shm"
PREFIX = "stereod."
MAX_SLOTS = 64
READ_ATTEMPTS = 16

PLANE_DISPARITY, PLANE_DEPTH, PLANE_CONFIDENCE, PLANE_FLOAT32 = range(4)
PLANE_NAMES = ("disparity", "depth", "confidence", "float32")
# struct / array / numpy type codes and element sizes, by plane kind.
_PLANE_TYPES = (("h", "<i2", 2), ("H", "<u2", 2), ("B", "u1", 1), ("f", "<f4", 4))
DISPARITY_INVALID = -32768
FLAG_DISCONT = 1 << 0
FLAG_DEGRADED = 1 << 1

# Header offsets (ring.h, HEADER table).
OFF_VERSION, OFF_HEADER_SIZE, OFF_SLOT_COUNT, OFF_SLOT_SIZE = 8, 12, 16, 20
OFF_TOTAL_SIZE, OFF_WIDTH, OFF_HEIGHT, OFF_FORMATS = 24, 32, 36, 40
OFF_WRITER_PID, OFF_CREATED_NS, OFF_CLOSED, OFF_NAME = 44, 48, 56, 64
OFF_PLANES, OFF_DISPARITY_SCALE, OFF_CALIBRATION, OFF_PRODUCER = 128, 192, 256, 432
OFF_COUNTER, OFF_FUTEX = 512, 520
HEADER_BYTES = 576
SLOT_HEADER_BYTES = 64


class RingProtocolError(OSError):
    """The object is not a ring of a layout version this module reads (EPROTO)."""


class RingClosed(EOFError):
    """The writer closed the ring and no newer frame is left."""


class RingStale(OSError):
    """The pair name now refers to another ring (the writer restarted): reopen."""


class TornReadError(BlockingIOError):
    """Every copy attempt was overwritten by the writer (EAGAIN)."""


def _valid_name(name):
    if not name or len(name) > 63 or name[0] == ".":
        return False
    return all(c.isascii() and (c.isalnum() or c in "._-") for c in name)


class _Futex:
    """FUTEX_WAIT on the ring's futex word through a second, read-only mapping of the
    header page (futexes on shared mappings are keyed by file and offset, so this waits
    on the same word the writer wakes). None when the platform gives no way to call it."""

    _SYS_FUTEX = {"x86_64": 202, "amd64": 202, "aarch64": 98, "arm64": 98, "riscv64": 98,
                  "i386": 240, "i686": 240, "armv7l": 240, "ppc64le": 221}

    class _Timespec(ctypes.Structure):
        _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]

    @classmethod
    def create(cls, fd):
        nr = cls._SYS_FUTEX.get(platform.machine())
        if nr is None or not sys.platform.startswith("linux"):
            return None
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.mmap.restype = ctypes.c_void_p
            libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                  ctypes.c_int, ctypes.c_int, ctypes.c_long)
            libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
            libc.syscall.restype = ctypes.c_long
        except (OSError, AttributeError):
            return None
        addr = libc.mmap(None, mmap.PAGESIZE, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if addr is None or addr == ctypes.c_void_p(-1).value:
            return None
        return cls(libc, nr, addr)

    def __init__(self, libc, nr, addr):
        self._libc, self._nr, self._addr = libc, nr, addr

    def wait(self, expected, timeout):
        """Sleeps while the word equals `expected`, at most `timeout` s (None = forever).
        Returns on wake, value change, timeout or signal: the caller re-checks."""
        ts = None
        if timeout is not None:
            ns = max(0, int(timeout * 1e9))
            ts = ctypes.byref(self._Timespec(ns // 1000000000, ns % 1000000000))
        FUTEX_WAIT = 0
        self._libc.syscall(ctypes.c_long(self._nr), ctypes.c_void_p(self._addr + OFF_FUTEX),
                           ctypes.c_int(FUTEX_WAIT), ctypes.c_uint(expected), ts,
                           ctypes.c_void_p(None), ctypes.c_int(0))

    def close(self):
        if self._addr is not None:
            self._libc.munmap(ctypes.c_void_p(self._addr), mmap.PAGESIZE)
            self._addr = None


class Frame:
    """One frame copied out of the ring. Planes absent from the ring are None."""

    __slots__ = ("counter", "frame_number", "capture_ns", "publish_ns", "flags", "width",
                 "height", "disparity_scale", "calibration", "disparity", "depth",
                 "confidence", "float32")

    def disparity_px(self):
        """Disparity in px with NaN for invalid pixels: a float32 numpy array, or a
        list of rows of floats without numpy. None when the ring has no disparity."""
        if self.disparity is None:
            return None
        if np is not None:
            out = self.disparity.astype(np.float32) * np.float32(self.disparity_scale)
            out[self.disparity == DISPARITY_INVALID] = np.nan
            return out
        w, s = self.width, self.disparity_scale
        return [[math.nan if v == DISPARITY_INVALID else v * s
                 for v in self.disparity[y * w:(y + 1) * w]] for y in range(self.height)]


class Client:
    """A read-only mapping of /dev/shm/stereod.<pair>. Not thread safe."""

    def __init__(self, pair):
        if not _valid_name(pair):
            raise ValueError("bad pair name %r" % (pair,))
        self.path = os.path.join(SHM_DIR, PREFIX + pair)
        self._mm = None
        self._futex = None
        fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        try:
            st = os.fstat(fd)
            if st.st_size < HEADER_BYTES:
                raise RingProtocolError(errno.EPROTO, "too small for a ring header", self.path)
            self._ino = (st.st_dev, st.st_ino)
            self._mm = mmap.mmap(fd, st.st_size, mmap.MAP_SHARED, mmap.PROT_READ)
            self._validate(st.st_size)
            self._futex = _Futex.create(fd)
        except BaseException:
            self.close()
            raise
        finally:
            os.close(fd)
        self.torn = 0          # copies rejected by the seqlock and retried
        self.reads = 0

    def _u32(self, off):
        return struct.unpack_from("<I", self._mm, off)[0]

    def _u64(self, off):
        return struct.unpack_from("<Q", self._mm, off)[0]

    def _validate(self, object_size):
        mm = self._mm
        def bad(what):
            return RingProtocolError(errno.EPROTO, "not a stereod ring: " + what, self.path)
        if mm[0:8] != MAGIC:
            raise bad("magic")
        if self._u32(OFF_VERSION) != VERSION:
            raise bad("layout version %d" % self._u32(OFF_VERSION))
        self.header_size = self._u32(OFF_HEADER_SIZE)
        self.slot_count = self._u32(OFF_SLOT_COUNT)
        self.slot_size = self._u32(OFF_SLOT_SIZE)
        total = self._u64(OFF_TOTAL_SIZE)
        if self.header_size < HEADER_BYTES or self.header_size % 4096:
            raise bad("header_size")
        if not 1 <= self.slot_count <= MAX_SLOTS:
            raise bad("slot_count")
        if self.slot_size < SLOT_HEADER_BYTES or self.slot_size % 4096:
            raise bad("slot_size")
        if total != self.header_size + self.slot_count * self.slot_size or total > object_size:
            raise bad("total_size")
        self.width, self.height, self.formats = struct.unpack_from("<III", mm, OFF_WIDTH)
        self.writer_pid, self.created_ns = struct.unpack_from("<iQ", mm, OFF_WRITER_PID)
        if self.width == 0 or self.height == 0 or self.formats == 0 or self.formats & ~0xF:
            raise bad("size or formats")
        self.name = bytes(mm[OFF_NAME:OFF_NAME + 64]).split(b"\0", 1)[0].decode()
        self.disparity_scale = struct.unpack_from("<d", mm, OFF_DISPARITY_SCALE)[0]
        if not self.disparity_scale > 0:
            raise bad("disparity_scale")
        cal = struct.unpack_from("<22d", mm, OFF_CALIBRATION)
        self.calibration = {"fx": cal[0], "fy": cal[1], "cx": cal[2], "cy": cal[3],
                            "baseline": cal[4], "doffs": cal[5],
                            "q": [list(cal[6 + 4 * r:10 + 4 * r]) for r in range(4)]}
        self.producer = struct.unpack_from("<8d", mm, OFF_PRODUCER)
        self.planes = {}       # kind -> (offset, stride, size)
        self.copy_size = SLOT_HEADER_BYTES
        for kind in range(4):
            offset, stride, size = struct.unpack_from("<III", mm, OFF_PLANES + 16 * kind)
            if not self.formats & (1 << kind):
                if offset or size:
                    raise bad("absent plane %s" % PLANE_NAMES[kind])
                continue
            es = _PLANE_TYPES[kind][2]
            if (offset < SLOT_HEADER_BYTES or offset % 64 or stride < self.width * es
                    or stride % es or size != stride * self.height
                    or offset + size > self.slot_size):
                raise bad("plane %s" % PLANE_NAMES[kind])
            self.planes[kind] = (offset, stride, size)
            self.copy_size = max(self.copy_size, offset + size)

    def close(self):
        if self._futex is not None:
            self._futex.close()
            self._futex = None
        if self._mm is not None:
            self._mm.close()
            self._mm = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def counter(self):
        """Frames published so far."""
        return self._u64(OFF_COUNTER)

    @property
    def closed(self):
        """True once the writer closed the ring."""
        return self._u32(OFF_CLOSED) != 0

    def _stale(self):
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return False
        return (st.st_dev, st.st_ino) != self._ino

    def wait(self, last_counter=0, timeout=None):
        """Waits until the publish counter differs from `last_counter` and returns it.
        timeout in s (None = forever, 0 = only check). Raises TimeoutError, RingClosed
        (writer closed, nothing newer) or RingStale (name taken by a new ring)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            word = self._u32(OFF_FUTEX)    # before the counter: see ring.h, waiting
            now = self.counter
            if now != last_counter:
                return now
            if self.closed:
                raise RingClosed("ring %s closed by its writer" % self.name)
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                if self._stale():
                    raise RingStale(errno.ESTALE, "ring replaced", self.path)
                raise TimeoutError(errno.ETIMEDOUT, "no new frame", self.path)
            if self._futex is not None:
                self._futex.wait(word, remaining)
            else:
                time.sleep(0.001 if remaining is None else min(0.001, remaining))

    def read_latest(self):
        """Copies the newest complete frame (seqlock-checked). Returns a Frame, or None
        when nothing was published yet; raises TornReadError when every attempt was
        overwritten."""
        mm = self._mm
        for _ in range(READ_ATTEMPTS):
            counter = self.counter
            if counter == 0:
                return None
            base = self.header_size + ((counter - 1) % self.slot_count) * self.slot_size
            s1 = self._u64(base)
            if s1 & 1:
                self.torn += 1
                continue
            data = mm[base:base + self.copy_size]
            if self._u64(base) != s1:
                self.torn += 1
                continue
            frame = self._frame(data)
            if frame.counter == 0:
                self.torn += 1
                continue
            self.reads += 1
            return frame
        raise TornReadError(errno.EAGAIN, "every copy was overwritten by the writer")

    def _frame(self, data):
        f = Frame()
        (f.counter, f.frame_number, f.capture_ns, f.publish_ns,
         f.flags) = struct.unpack_from("<QQQQI", data, 8)
        f.width, f.height = self.width, self.height
        f.disparity_scale, f.calibration = self.disparity_scale, self.calibration
        for kind in range(4):
            setattr(f, PLANE_NAMES[kind], self._plane(data, kind))
        return f

    def _plane(self, data, kind):
        if kind not in self.planes:
            return None
        offset, stride, size = self.planes[kind]
        code, dtype, es = _PLANE_TYPES[kind]
        w, h = self.width, self.height
        if np is not None:
            a = np.frombuffer(data, dtype=dtype, count=size // es, offset=offset)
            return a.reshape(h, stride // es)[:, :w]
        a = array.array(code)
        if stride == w * es:
            a.frombytes(data[offset:offset + size])
        else:
            for y in range(h):
                row = offset + y * stride
                a.frombytes(data[row:row + w * es])
        if sys.byteorder != "little" and es > 1:
            a.byteswap()
        return a


def _main(argv):
    import argparse
    ap = argparse.ArgumentParser(description="Print the frames of a stereod ring.")
    ap.add_argument("pair")
    ap.add_argument("--count", type=int, default=0, help="stop after N frames (0 = never)")
    ap.add_argument("--timeout", type=float, default=5.0, help="s to wait for a frame")
    args = ap.parse_args(argv)
    with Client(args.pair) as ring:
        print("ring %s: %dx%d formats=0x%x slots=%d writer=%d scale=%g numpy=%s"
              % (ring.name, ring.width, ring.height, ring.formats, ring.slot_count,
                 ring.writer_pid, ring.disparity_scale, np is not None))
        last, n, t0 = 0, 0, time.monotonic()
        while args.count == 0 or n < args.count:
            try:
                ring.wait(last, args.timeout)
            except RingClosed:
                print("closed")
                break
            try:
                f = ring.read_latest()
            except TornReadError:
                print("every copy overwritten, reader too slow")
                continue
            skipped = f.counter - last - 1 if last else 0
            last, n = f.counter, n + 1
            print("counter=%d frame=%d capture_ns=%d publish_ns=%d latency_ms=%.3f "
                  "skipped=%d flags=0x%x" % (f.counter, f.frame_number, f.capture_ns,
                                              f.publish_ns, (f.publish_ns - f.capture_ns) / 1e6,
                                              skipped, f.flags))
        dt = time.monotonic() - t0
        if n > 1 and dt > 0:
            print("%d frames in %.3f s: %.1f frames/s, %d torn copies retried"
                  % (n, dt, n / dt, ring.torn))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(_main(sys.argv[1:]))
    except (OSError, EOFError, ValueError) as e:
        print("stereod_client: %s" % e, file=sys.stderr)
        sys.exit(1)
