#!/usr/bin/env python3
"""Pure-Python reader of stereod's shared-memory rings.

The layout and the protocol are specified byte for byte in include/stereod/ring.h;
this module follows them with the standard library only (os.pread, struct, ctypes for
the futex wait and inotify). Planes come back as numpy arrays (height x width,
little-endian dtypes) when numpy can be imported, otherwise as array.array objects
holding width * height values row by row. Set STEREOD_CLIENT_NO_NUMPY=1 to force the
latter.

    import stereod_client
    with stereod_client.Client("north-1") as ring:
        counter = 0
        while True:
            frame = ring.read_next(counter, timeout=1.0)
            counter = frame.counter
            print(frame.frame_number, frame.disparity_px()[240][320])

Command line: python3 stereod_client.py PAIR [--count N] [--timeout S] [--follow]
[--dir DIR]; STEREOD_RING_OWNER=any|UID|USER names whose rings it accepts.

Where rings are (ring.h, OBJECT): $STEREOD_RING_DIR, else /run/stereod when it is a
directory, else /dev/shm; the object is DIR/stereod.<pair>.

What it trusts: the owner of the object is checked at open (by default the reader's
uid, root or the system user "stereod"); the header is read once, checked against the
limits of ring.h (READER LIMITS) and the object's size, and never read again for the
layout. The object is never accessed through a mapping: every read is an os.pread after
an os.fstat, so a writer that truncates the object gets RingTruncatedError, not SIGBUS.
64-bit fields come in by pread(2), which the kernel copies without a promise of
atomicity; a value torn by a concurrent update fails the slot checks (seqlock, frame
counter) and is retried, and read_next never returns a frame older than the one it was
given.
"""

import array
import ctypes
import errno
import math
import mmap
import os
import platform
import pwd
import select
import stat
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
RUN_DIR = "/run/stereod"
DIR_ENV = "STEREOD_RING_DIR"
OWNER_ENV = "STEREOD_RING_OWNER"
PREFIX = "stereod."
MAX_SLOTS = 64
MAX_DIM = 16384
MAX_HEADER_SIZE = 65536
MAX_TOTAL_SIZE = 1 << 36
PAGE = 4096
READ_ATTEMPTS = 16
SLICE_S = 1.0                 # look at the object again at least this often
BACKOFF_MIN_S, BACKOFF_MAX_S = 0.001, 0.1

(PLANE_DISPARITY, PLANE_DEPTH, PLANE_CONFIDENCE, PLANE_FLOAT32, PLANE_FLOW_U,
 PLANE_FLOW_V) = range(6)
PLANE_COUNT = 6
PLANE_NAMES = ("disparity", "depth", "confidence", "float32", "flow_u", "flow_v")
FORMAT_FLOW = (1 << PLANE_FLOW_U) | (1 << PLANE_FLOW_V)
# struct / array / numpy type codes and element sizes, by plane kind.
_PLANE_TYPES = (("h", "<i2", 2), ("H", "<u2", 2), ("B", "u1", 1), ("f", "<f4", 4),
                ("h", "<i2", 2), ("h", "<i2", 2))
DISPARITY_INVALID = -32768
FLOW_UNKNOWN = -32768
FLOW_SCALE = 1.0 / 32.0       # px per unit of flow_u and flow_v
FLAG_DISCONT = 1 << 0
FLAG_DEGRADED = 1 << 1

# Header offsets (ring.h, HEADER table).
OFF_VERSION, OFF_HEADER_SIZE, OFF_SLOT_COUNT, OFF_SLOT_SIZE = 8, 12, 16, 20
OFF_TOTAL_SIZE, OFF_WIDTH, OFF_HEIGHT, OFF_FORMATS = 24, 32, 36, 40
OFF_WRITER_PID, OFF_CREATED_NS, OFF_CLOSED, OFF_NAME = 44, 48, 56, 64
OFF_PLANES, OFF_DISPARITY_SCALE, OFF_CALIBRATION, OFF_PRODUCER = 128, 192, 256, 432
OFF_FLOW_PLANES = 200         # the descriptors of kinds 4 and 5


def _plane_descriptor_offset(kind):
    return OFF_PLANES + 16 * kind if kind < 4 else OFF_FLOW_PLANES + 16 * (kind - 4)
OFF_COUNTER, OFF_FUTEX = 512, 520
HEADER_BYTES = 576
SLOT_HEADER_BYTES = 64


class RingProtocolError(OSError):
    """Not a ring this module reads, or one breaking the limits of ring.h, or its header
    changed after it was opened (EPROTO)."""


class RingOwnerError(PermissionError):
    """The ring's owner is not a trusted writer (EPERM): see the owner argument."""


class RingTruncatedError(OSError):
    """The ring object shrank under the reader (EIO)."""


class RingIncompleteError(OSError):
    """The writer never completed the newest slot before the timeout (EBADMSG)."""


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


def ring_dir():
    """The ring directory: $STEREOD_RING_DIR, else /run/stereod if it is a directory,
    else /dev/shm (the rule of ring.h, shared with the C writer and readers)."""
    env = os.environ.get(DIR_ENV, "")
    if env:
        return env
    if os.path.isdir(RUN_DIR):
        return RUN_DIR
    return SHM_DIR


def ring_path(pair, dir=None):
    return os.path.join(dir if dir is not None else ring_dir(), PREFIX + pair)


def parse_owner(spec):
    """None/""/"default" -> None (the default rule), "any", or a uid (int) from a number
    or a user name (KeyError when there is no such user)."""
    if spec is None or spec in ("", "default"):
        return None
    if isinstance(spec, int):
        return spec
    if spec == "any":
        return "any"
    if spec.isdigit():
        return int(spec)
    return pwd.getpwnam(spec).pw_uid


def _owner_trusted(owner, uid):
    if owner == "any":
        return True
    if owner is not None:
        return uid == owner
    if uid in (os.geteuid(), 0):
        return True
    try:
        return pwd.getpwnam("stereod").pw_uid == uid
    except KeyError:
        return False


def _round_up(v, to):
    return (v + to - 1) // to * to


class _Libc:
    """ctypes access to futex(2) and inotify(7); None where the platform has neither."""

    _SYS_FUTEX = {"x86_64": 202, "amd64": 202, "aarch64": 98, "arm64": 98, "riscv64": 98,
                  "i386": 240, "i686": 240, "armv7l": 240, "ppc64le": 221}
    _lib = False

    class Timespec(ctypes.Structure):
        _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]

    @classmethod
    def get(cls):
        if cls._lib is False:
            cls._lib = None
            if sys.platform.startswith("linux"):
                try:
                    libc = ctypes.CDLL(None, use_errno=True)
                    libc.mmap.restype = ctypes.c_void_p
                    libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                          ctypes.c_int, ctypes.c_int, ctypes.c_long)
                    libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
                    libc.syscall.restype = ctypes.c_long
                    libc.inotify_init1.argtypes = (ctypes.c_int,)
                    libc.inotify_add_watch.argtypes = (ctypes.c_int, ctypes.c_char_p,
                                                       ctypes.c_uint32)
                    cls._lib = libc
                except (OSError, AttributeError):
                    pass
        return cls._lib


class _Futex:
    """FUTEX_WAIT on the ring's futex word through a read-only mapping of the header page
    (futexes on shared mappings are keyed by file and offset, so this waits on the same
    word the writer wakes). Python never loads from this mapping: only the kernel reads
    the word, and on a truncated object it answers EFAULT instead of raising SIGBUS."""

    @classmethod
    def create(cls, fd):
        libc = _Libc.get()
        nr = _Libc._SYS_FUTEX.get(platform.machine())
        if libc is None or nr is None:
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
            ts = ctypes.byref(_Libc.Timespec(ns // 1000000000, ns % 1000000000))
        FUTEX_WAIT = 0
        self._libc.syscall(ctypes.c_long(self._nr), ctypes.c_void_p(self._addr + OFF_FUTEX),
                           ctypes.c_int(FUTEX_WAIT), ctypes.c_uint(expected), ts,
                           ctypes.c_void_p(None), ctypes.c_int(0))

    def close(self):
        if self._addr is not None:
            self._libc.munmap(ctypes.c_void_p(self._addr), mmap.PAGESIZE)
            self._addr = None


class _DirWatch:
    """inotify on the ring directory (IN_CREATE, IN_MOVED_TO), set up before looking for
    a name so that one created in between is not missed; short sleeps without inotify."""

    IN_CREATE, IN_MOVED_TO, IN_ONLYDIR = 0x100, 0x80, 0x01000000
    IN_NONBLOCK, IN_CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC

    def __init__(self, directory):
        self.dir, self.fd = directory, -1
        libc = _Libc.get()
        if libc is None:
            return
        fd = libc.inotify_init1(self.IN_NONBLOCK | self.IN_CLOEXEC)
        if fd < 0:
            return
        mask = self.IN_CREATE | self.IN_MOVED_TO | self.IN_ONLYDIR
        if libc.inotify_add_watch(fd, os.fsencode(directory), mask) < 0:
            os.close(fd)
            return
        self.fd = fd

    def wait(self, timeout):
        """Waits for an entry to appear, at most `timeout` s (None: about a second)."""
        limit = SLICE_S if self.fd >= 0 else 0.1
        t = limit if timeout is None else max(0.0, min(limit, timeout))
        if self.fd < 0:
            time.sleep(t)
            return
        p = select.poll()
        p.register(self.fd, select.POLLIN)
        if p.poll(int(math.ceil(t * 1000))):
            try:
                while os.read(self.fd, 4096):
                    pass
            except BlockingIOError:
                pass

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class Frame:
    """One frame copied out of the ring. Planes absent from the ring are None."""

    __slots__ = ("counter", "frame_number", "capture_ns", "publish_ns", "flags", "width",
                 "height", "disparity_scale", "calibration", "disparity", "depth",
                 "confidence", "float32", "flow_u", "flow_v")

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

    def flow_px(self):
        """The optical flow (u, v) in px, NaN where unknown: two float32 numpy arrays,
        or two lists of rows of floats without numpy. None when the ring has no flow."""
        if self.flow_u is None or self.flow_v is None:
            return None
        if np is not None:
            out = []
            for plane in (self.flow_u, self.flow_v):
                a = plane.astype(np.float32) * np.float32(FLOW_SCALE)
                a[plane == FLOW_UNKNOWN] = np.nan
                out.append(a)
            return tuple(out)
        w = self.width
        return tuple([[math.nan if v == FLOW_UNKNOWN else v * FLOW_SCALE
                       for v in plane[y * w:(y + 1) * w]] for y in range(self.height)]
                     for plane in (self.flow_u, self.flow_v))


def depth_m(disparity_px, calibration):
    """Depth in metres of a disparity in px: fx * baseline / (d - doffs) (ring.h,
    CALIBRATION); NaN where d <= doffs or d is NaN."""
    d = disparity_px - calibration["doffs"]
    if not d > 0:
        return math.nan
    return calibration["fx"] * calibration["baseline"] / d


class _Ring:
    """One ring object opened read-only: fd, the validated header, the futex page."""

    def __init__(self, path, owner):
        self.path = path
        self.fd = -1
        self.futex = None
        try:
            self.fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as e:
            if e.errno != errno.ELOOP:
                raise
            raise RingOwnerError(errno.EPERM, "a symbolic link under the ring's name", path)
        try:
            st = os.fstat(self.fd)
            if not stat.S_ISREG(st.st_mode):
                raise RingProtocolError(errno.EPROTO, "not a regular file", path)
            if not _owner_trusted(owner, st.st_uid):
                raise RingOwnerError(errno.EPERM, "ring owned by uid %d, not a trusted writer "
                                     "(see %s)" % (st.st_uid, OWNER_ENV), path)
            self.uid, self.ino = st.st_uid, (st.st_dev, st.st_ino)
            head = os.pread(self.fd, HEADER_BYTES, 0)
            if len(head) < HEADER_BYTES:
                raise RingProtocolError(errno.EPROTO, "too small for a ring header", path)
            self._validate(head, st.st_size)
            self.fixed = head[:OFF_COUNTER]
            self.futex = _Futex.create(self.fd)
        except BaseException:
            self.close()
            raise

    def _validate(self, mm, object_size):
        def bad(what):
            return RingProtocolError(errno.EPROTO, "not a valid stereod ring: " + what, self.path)
        u32 = lambda off: struct.unpack_from("<I", mm, off)[0]
        if mm[0:8] != MAGIC:
            raise bad("magic")
        if u32(OFF_VERSION) != VERSION:
            raise bad("layout version %d" % u32(OFF_VERSION))
        self.header_size = u32(OFF_HEADER_SIZE)
        self.slot_count = u32(OFF_SLOT_COUNT)
        self.slot_size = u32(OFF_SLOT_SIZE)
        self.total_size = struct.unpack_from("<Q", mm, OFF_TOTAL_SIZE)[0]
        if (self.header_size < HEADER_BYTES or self.header_size % PAGE
                or self.header_size > MAX_HEADER_SIZE):
            raise bad("header_size")
        if not 1 <= self.slot_count <= MAX_SLOTS:
            raise bad("slot_count")
        if self.slot_size < SLOT_HEADER_BYTES or self.slot_size % PAGE:
            raise bad("slot_size")
        self.width, self.height, self.formats = struct.unpack_from("<III", mm, OFF_WIDTH)
        self.writer_pid, self.created_ns = struct.unpack_from("<iQ", mm, OFF_WRITER_PID)
        if not (1 <= self.width <= MAX_DIM and 1 <= self.height <= MAX_DIM):
            raise bad("size %dx%d" % (self.width, self.height))
        if self.formats == 0 or self.formats & ~((1 << PLANE_COUNT) - 1):
            raise bad("formats")
        if self.formats & FORMAT_FLOW not in (0, FORMAT_FLOW):
            raise bad("formats (flow_u without flow_v or the reverse)")
        raw_name = bytes(mm[OFF_NAME:OFF_NAME + 64])
        if b"\0" not in raw_name:
            raise bad("name")
        self.name = raw_name.split(b"\0", 1)[0].decode("ascii", "replace")
        self.disparity_scale = struct.unpack_from("<d", mm, OFF_DISPARITY_SCALE)[0]
        if not (self.disparity_scale > 0 and math.isfinite(self.disparity_scale)):
            raise bad("disparity_scale")
        cal = struct.unpack_from("<22d", mm, OFF_CALIBRATION)
        self.calibration = {"fx": cal[0], "fy": cal[1], "cx": cal[2], "cy": cal[3],
                            "baseline": cal[4], "doffs": cal[5],
                            "q": [list(cal[6 + 4 * r:10 + 4 * r]) for r in range(4)]}
        self.producer = struct.unpack_from("<8d", mm, OFF_PRODUCER)
        self.planes = {}       # kind -> (offset, stride, size)
        end = SLOT_HEADER_BYTES
        for kind in range(PLANE_COUNT):
            offset, stride, size = struct.unpack_from("<III", mm, _plane_descriptor_offset(kind))
            if not self.formats & (1 << kind):
                if offset or stride or size:
                    raise bad("absent plane %s" % PLANE_NAMES[kind])
                continue
            es = _PLANE_TYPES[kind][2]
            row = self.width * es
            if (offset < SLOT_HEADER_BYTES or offset % 64 or stride < row or stride % es
                    or stride > _round_up(row, PAGE) or size != stride * self.height
                    or offset + size > self.slot_size):
                raise bad("plane %s" % PLANE_NAMES[kind])
            self.planes[kind] = (offset, stride, size)
            end = max(end, offset + size)
        if self.slot_size > _round_up(end, PAGE) + PAGE:
            raise bad("slot_size beyond its planes")
        total = self.header_size + self.slot_count * self.slot_size
        if self.total_size != total or total > MAX_TOTAL_SIZE or total > object_size:
            raise bad("total_size")
        self.copy_size = end

    def close(self):
        if self.futex is not None:
            self.futex.close()
            self.futex = None
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def _truncated(self):
        return RingTruncatedError(errno.EIO, "the ring was truncated under the reader",
                                  self.path)

    def check_size(self):
        if os.fstat(self.fd).st_size < self.total_size:
            raise self._truncated()

    def pread(self, n, offset, into=None):
        """Exactly n bytes at offset (into a buffer when given), or RingTruncatedError."""
        if into is not None:
            got = os.preadv(self.fd, [into], offset)
            data = into
        else:
            data = os.pread(self.fd, n, offset)
            got = len(data)
        if got < n:
            raise self._truncated()
        return data

    def live(self):
        """(futex word, counter, closed), after checking size and the fixed header."""
        self.check_size()
        head = self.pread(HEADER_BYTES, 0)
        fixed = self.fixed
        if (head[:OFF_CLOSED] != fixed[:OFF_CLOSED]
                or head[OFF_CLOSED + 4:OFF_COUNTER] != fixed[OFF_CLOSED + 4:]):
            raise RingProtocolError(errno.EPROTO, "the ring's header changed after it was "
                                    "opened", self.path)
        counter, word = struct.unpack_from("<QI", head, OFF_COUNTER)
        closed = struct.unpack_from("<I", head, OFF_CLOSED)[0] != 0
        return word, counter, closed

    def name_moved(self):
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return False
        return (st.st_dev, st.st_ino) != self.ino


_OK, _NODATA, _ODD, _TORN, _INVALID = range(5)


class Client:
    """A reader of DIR/stereod.<pair>. Not thread safe.

    dir: the ring directory (None: the rule of ring.h, applied again at every reopen).
    owner: whose rings to accept: None (the reader's uid, root, or user "stereod"),
    "any", a uid, or a user name. follow: read_next() follows the pair's writer across
    restarts (see there)."""

    def __init__(self, pair, dir=None, owner=None, follow=False):
        if not _valid_name(pair):
            raise ValueError("bad pair name %r" % (pair,))
        self.pair, self._dir, self.follow = pair, dir, follow
        self._owner = parse_owner(owner)
        self._ring = None
        self._ring = _Ring(ring_path(pair, dir), self._owner)
        self._buf = None
        self._reset = False    # moved to a new ring, no frame of it returned yet
        self.generation = 1    # rings read
        self.torn = 0          # copies rejected (seqlock, odd seq, bad counter), retried
        self.reads = 0

    @classmethod
    def open_wait(cls, pair, timeout=None, dir=None, owner=None, follow=False):
        """Client(...), waiting up to `timeout` s (None = forever) for the name to appear.
        Raises TimeoutError when it did not."""
        deadline = None if timeout is None else time.monotonic() + timeout
        watch = _DirWatch(dir if dir is not None else ring_dir())
        try:
            while True:
                try:
                    return cls(pair, dir=dir, owner=owner, follow=follow)
                except FileNotFoundError:
                    pass
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise TimeoutError(errno.ETIMEDOUT, "no ring appeared",
                                       ring_path(pair, dir))
                watch.wait(remaining)
                here = dir if dir is not None else ring_dir()
                if here != watch.dir:
                    watch.close()
                    watch = _DirWatch(here)
        finally:
            watch.close()

    def __getattr__(self, attr):
        # Ring properties (name, width, height, formats, slot_count, writer_pid,
        # disparity_scale, calibration, producer, planes, path, ...), constant until the
        # client moves to another ring.
        ring = self.__dict__.get("_ring")
        if ring is None:
            raise AttributeError(attr)
        return getattr(ring, attr)

    def close(self):
        if self._ring is not None:
            self._ring.close()
            self._ring = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def counter(self):
        """Frames published so far."""
        return self._ring.live()[1]

    @property
    def closed(self):
        """True once the writer closed the ring."""
        return self._ring.live()[2]

    def writer_alive(self):
        """Whether the writer's pid still exists (one of another pid namespace counts)."""
        try:
            os.kill(self._ring.writer_pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return self._ring.writer_pid > 0

    def reopen(self):
        """Moves to the ring the name refers to now. True when it is another ring than
        before (counters restart with it: pass 0 to the next wait); False when the name
        is absent or still refers to the ring being read. Errors of the open propagate;
        the old ring stays in use then."""
        try:
            ring = _Ring(ring_path(self.pair, self._dir), self._owner)
        except FileNotFoundError:
            return False
        if ring.ino == self._ring.ino:
            ring.close()
            return False
        self._ring.close()
        self._ring, self._buf, self._reset = ring, None, True
        self.generation += 1
        return True

    def _wait(self, last, deadline):
        """Waits until the counter differs from `last`: (counter, futex word)."""
        ring = self._ring
        while True:
            word, now, closed = ring.live()
            if now != last:
                return now, word
            if closed:
                raise RingClosed("ring %s closed by its writer" % ring.name)
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                if ring.name_moved():
                    raise RingStale(errno.ESTALE, "ring replaced", ring.path)
                raise TimeoutError(errno.ETIMEDOUT, "no new frame", ring.path)
            t = SLICE_S if remaining is None else min(SLICE_S, remaining)
            if ring.futex is not None:
                ring.futex.wait(word, t)
            else:
                time.sleep(min(0.001, t))
            if ring.name_moved():
                raise RingStale(errno.ESTALE, "ring replaced", ring.path)

    def wait(self, last_counter=0, timeout=None):
        """Waits until the publish counter differs from `last_counter` and returns it.
        timeout in s (None = forever, 0 = only check). Raises TimeoutError, RingClosed
        (writer closed, nothing newer), RingStale (name taken by a new ring),
        RingTruncatedError, RingProtocolError."""
        deadline = None if timeout is None else time.monotonic() + timeout
        return self._wait(last_counter, deadline)[0]

    def _attempt(self, buf):
        ring = self._ring
        word, counter, _ = ring.live()
        if counter == 0:
            return _NODATA, counter, 0
        base = ring.header_size + ((counter - 1) % ring.slot_count) * ring.slot_size
        s1 = struct.unpack("<Q", ring.pread(8, base))[0]
        if s1 & 1:
            return _ODD, counter, s1
        ring.pread(ring.copy_size, base, into=buf)
        s2 = struct.unpack("<Q", ring.pread(8, base))[0]
        if s2 != s1:
            return _TORN, counter, s1
        got = struct.unpack_from("<Q", buf, 8)[0]
        if got < counter or (got - counter) % ring.slot_count:
            return _INVALID, counter, s1
        return _OK, counter, s1

    def _read(self):
        """read_latest's attempts: a Frame, None (nothing published), or raises."""
        ring = self._ring
        progress, first = False, None
        for attempt in range(READ_ATTEMPTS):
            if self._buf is None or len(self._buf) != ring.copy_size:
                self._buf = bytearray(ring.copy_size)
            res, counter, seq = self._attempt(self._buf)
            if res == _NODATA:
                return None
            if res == _OK:
                frame = self._frame(self._buf)
                self._buf = None   # the frame owns that buffer now
                self.reads += 1
                return frame
            self.torn += 1
            if res == _TORN or (first is not None and first != (counter, seq)):
                progress = True
            first = first or (counter, seq)
        if progress:
            raise TornReadError(errno.EAGAIN, "every copy was overwritten by the writer")
        raise RingIncompleteError(errno.EBADMSG, "the writer never completed the newest slot",
                                  ring.path)

    def read_latest(self):
        """Copies the newest complete frame (seqlock-checked), without waiting. Returns a
        Frame, or None when nothing was published yet; raises TornReadError when every
        attempt was overwritten, RingIncompleteError when the newest slot stayed
        incomplete or invalid over every attempt, RingTruncatedError, RingProtocolError."""
        return self._read()

    def _follow(self, deadline):
        here = self._dir if self._dir is not None else ring_dir()
        watch = _DirWatch(here)
        try:
            while not self.reopen():
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise TimeoutError(errno.ETIMEDOUT, "no new ring", self._ring.path)
                watch.wait(remaining)
                here = self._dir if self._dir is not None else ring_dir()
                if here != watch.dir:
                    watch.close()
                    watch = _DirWatch(here)
        finally:
            watch.close()

    def read_next(self, last_counter=0, timeout=None):
        """Waits for and copies the newest frame whose counter is beyond `last_counter`;
        never spins: a slot that does not validate is retried with a bounded back-off
        (futex wait, 1 ms doubling to 100 ms) until the deadline. timeout in s (None =
        forever, 0 = try once). Raises TimeoutError, RingIncompleteError (a new frame was
        announced but its slot never validated), TornReadError, RingClosed, RingStale,
        RingTruncatedError, RingProtocolError.

        With follow=True, a closed ring or a name that now refers to another ring makes
        it wait (inotify, same deadline) for the pair's next ring and go on with it; the
        first frame of the new ring is returned whatever last_counter is (counters restart
        with the new writer) and has FLAG_DISCONT set; self.generation counts rings."""
        deadline = None if timeout is None else time.monotonic() + timeout
        backoff, last = BACKOFF_MIN_S, last_counter
        while True:
            try:
                _, word = self._wait(0 if self._reset else last, deadline)
            except (RingClosed, RingStale):
                if not self.follow:
                    raise
                self._follow(deadline)
                continue
            err = None
            try:
                frame = self._read()
            except (RingIncompleteError, TornReadError) as e:
                frame, err = None, e
            if frame is None and err is None:
                last = 0     # the counter went back to 0: wait for it to move
                continue
            if frame is not None and (self._reset or frame.counter > last):
                if self._reset:
                    frame.flags |= FLAG_DISCONT
                self._reset = False
                return frame
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                if err is not None:
                    raise err
                raise TimeoutError(errno.ETIMEDOUT, "no new frame", self._ring.path)
            t = backoff if remaining is None else min(backoff, remaining)
            if self._ring.futex is not None:
                self._ring.futex.wait(word, t)
            else:
                time.sleep(t)
            backoff = min(backoff * 2, BACKOFF_MAX_S)

    def _frame(self, data):
        ring = self._ring
        f = Frame()
        (f.counter, f.frame_number, f.capture_ns, f.publish_ns,
         f.flags) = struct.unpack_from("<QQQQI", data, 8)
        f.width, f.height = ring.width, ring.height
        f.disparity_scale, f.calibration = ring.disparity_scale, ring.calibration
        for kind in range(PLANE_COUNT):
            setattr(f, PLANE_NAMES[kind], self._plane(data, kind))
        return f

    def _plane(self, data, kind):
        ring = self._ring
        if kind not in ring.planes:
            return None
        offset, stride, size = ring.planes[kind]
        code, dtype, es = _PLANE_TYPES[kind]
        w, h = ring.width, ring.height
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
    ap.add_argument("--timeout", type=float, default=None,
                    help="s to wait for a frame (default 5; with --follow: forever)")
    ap.add_argument("--follow", action="store_true",
                    help="keep reading across writer restarts, waiting for the ring")
    ap.add_argument("--dir", default=None, help="ring directory (default: see ring.h)")
    args = ap.parse_args(argv)
    timeout = args.timeout if args.timeout is not None else (None if args.follow else 5.0)
    if timeout is not None and timeout <= 0:
        timeout = None
    try:
        owner = parse_owner(os.environ.get(OWNER_ENV))
    except KeyError:
        raise ValueError("%s=%s: no such user" % (OWNER_ENV, os.environ.get(OWNER_ENV)))
    if args.follow:
        ring = Client.open_wait(args.pair, timeout, dir=args.dir, owner=owner, follow=True)
    else:
        ring = Client(args.pair, dir=args.dir, owner=owner)
    with ring:
        print("ring %s: %dx%d formats=0x%x slots=%d writer=%d scale=%g numpy=%s"
              % (ring.name, ring.width, ring.height, ring.formats, ring.slot_count,
                 ring.writer_pid, ring.disparity_scale, np is not None))
        last, n, t0, gen = 0, 0, time.monotonic(), ring.generation
        while args.count == 0 or n < args.count:
            try:
                f = ring.read_next(last, timeout)
            except RingClosed:
                print("closed")
                break
            except TimeoutError:
                gone = "" if ring.writer_alive() else " (its writer, pid %d, is gone)" \
                    % ring.writer_pid
                raise TimeoutError(errno.ETIMEDOUT, "ring %s: no new frame within %g s%s"
                                   % (ring.name, timeout, gone))
            except TornReadError:
                print("every copy overwritten, reader too slow")
                continue
            if ring.generation != gen:
                gen = ring.generation
                print("ring %s: following a new writer (pid %d, %dx%d); counters restart"
                      % (ring.name, ring.writer_pid, ring.width, ring.height))
                last = 0
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
