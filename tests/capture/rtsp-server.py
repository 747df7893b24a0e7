#!/usr/bin/python3
# A local RTSP server for the capture tests: cameras on 127.0.0.1 that capture their
# frames at the same instants (genlocked to the grid of CLOCK_MONOTONIC, GStreamer's
# system clock, shared by every process on the machine), each with its own extra delay.
#
#   rtsp-server.py [--size WxH] [--fps N] [--seconds S] MOUNT...
#   MOUNT = NAME[,codec=h264|jpeg][,delay=MS]
#
# Serves rtsp://127.0.0.1:PORT/NAME for each MOUNT (PORT chosen by the system) and prints
# "port PORT" on stdout once it listens. Frame k of the grid (capture instant k / fps on
# the monotonic clock) shows the level 20 + 20 * (k % 10) with a horizontal ramp, the
# same in every mount, so that a receiver can check which frames it paired. delay=MS
# holds a mount's frames that long after their capture before they are encoded and sent
# (a camera whose encoder or network is slower), with the RTP timestamps of the capture
# instants. The RTCP sender reports map RTP time to the capture time on the realtime
# clock (rtpbin rtcp-sync-send-time=false), every 0.5 s, as a camera with an NTP-disciplined
# clock does. The server exits after --seconds (default 300), when stdin closes (the test
# that started it is gone), or on SIGTERM.
import argparse
import signal
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402


def frame_bytes(k, w, h):
    level = 20 + 20 * (k % 10)
    row = bytes(min(255, level + (x * 16) // max(w, 1)) for x in range(w))
    return row * h


class Camera:
    """One mount's source: an appsrc fed at the grid instants of the shared clock."""

    def __init__(self, args, appsrc, pipeline):
        self.args = args
        self.src = appsrc
        self.pipeline = pipeline
        self.period = Gst.SECOND // args.fps
        self.timer = GLib.timeout_add(5, self.tick)   # a frame leaves within 5 ms of its instant
        self.next_k = None

    def tick(self):
        clock = self.pipeline.get_clock()
        if clock is None or self.pipeline.get_state(0)[1] != Gst.State.PLAYING:
            return True
        now = clock.get_time()
        base = self.pipeline.get_base_time()
        k_now = now // self.period
        if self.next_k is None:
            self.next_k = k_now + 1
        while self.next_k <= k_now:
            k = self.next_k
            self.next_k += 1
            pts = k * self.period - base
            if pts < 0:
                continue
            buf = Gst.Buffer.new_wrapped(frame_bytes(k, self.args.w, self.args.h))
            buf.pts = pts
            buf.duration = self.period
            self.src.emit("push-buffer", buf)
        return True

    def stop(self):
        GLib.source_remove(self.timer)


def launch(args, codec, delay_ms):
    caps = "video/x-raw,format=GRAY8,width=%d,height=%d,framerate=%d/1" % (
        args.w, args.h, args.fps)
    hold = ""
    if delay_ms > 0:
        hold = ("queue max-size-buffers=0 max-size-bytes=0 max-size-time=0 "
                "min-threshold-time=%d ! " % (delay_ms * 1000000))
    if codec == "jpeg":
        enc = "videoconvert ! video/x-raw,format=I420 ! jpegenc quality=90 ! rtpjpegpay name=pay0"
    else:
        enc = ("videoconvert ! video/x-raw,format=I420 ! x264enc tune=zerolatency "
               "speed-preset=ultrafast key-int-max=%d ! rtph264pay name=pay0 "
               "config-interval=-1" % args.fps)
    return ("( appsrc name=cam is-live=true format=time do-timestamp=false caps=%s ! %s%s )"
            % (caps, hold, enc))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="64x48")
    ap.add_argument("--fps", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=300.0)
    ap.add_argument("mounts", nargs="+")
    args = ap.parse_args()
    args.w, args.h = (int(v) for v in args.size.split("x"))
    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service("0")
    mounts = server.get_mount_points()
    cameras = []

    def on_prepared(media):
        pipe = media.get_element().get_parent()
        it = pipe.iterate_recurse()
        while True:
            res, el = it.next()
            if res != Gst.IteratorResult.OK:
                break
            name = el.get_factory().get_name() if el.get_factory() else ""
            if name == "rtpbin":
                el.set_property("rtcp-sync-send-time", False)
            elif name == "rtpsession":
                el.set_property("rtcp-min-interval", 500 * Gst.MSECOND)

    def on_configure(factory, media):
        pipe = media.get_element().get_parent()
        cam = Camera(args, media.get_element().get_by_name("cam"), pipe)
        cameras.append(cam)
        media.connect("prepared", on_prepared)
        media.connect("unprepared", lambda m: cam.stop())

    for spec in args.mounts:
        parts = spec.split(",")
        opts = dict(p.split("=", 1) for p in parts[1:])
        factory = GstRtspServer.RTSPMediaFactory()
        factory.set_launch(launch(args, opts.get("codec", "h264"), int(opts.get("delay", "0"))))
        factory.set_shared(True)
        factory.connect("media-configure", on_configure)
        mounts.add_factory("/" + parts[0], factory)
    if server.attach(None) == 0:
        sys.exit("rtsp-server.py: cannot listen on 127.0.0.1")
    loop = GLib.MainLoop()
    GLib.timeout_add(int(args.seconds * 1000), loop.quit)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
    GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_HUP | GLib.IO_ERR | GLib.IO_IN,
                      lambda *a: loop.quit() or False)
    print("port %d" % server.get_bound_port(), flush=True)
    loop.run()


if __name__ == "__main__":
    main()
