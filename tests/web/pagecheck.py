"""What the page tests look at in a screenshot of stereod-web's page (see chromium_page.py):
the page's own state (window.stereodWeb), the boxes of its panels, and their pixels."""
import json
import time

# Everything the page shows once it runs: the configuration, statistics, a players line,
# and every picture it shows, received and decoded.
READY_JS = """(() => {
  const s = window.stereodWeb;
  if (!s || !s.config || !s.stats || !s.players) return null;
  const want = [];
  for (const p of s.config.pairs) {
    want.push(p.name + '/color', p.name + '/confidence');
    if (s.config.left) want.push(p.name + '/left');
  }
  if (s.config.heightmap) want.push('heightmap/height');
  for (const k of want) {
    const img = document.getElementById('img-' + k.replace('/', '-'));
    if (!s.frames[k] || !img || !img.naturalWidth) return null;
  }
  return true;
})()"""

STATE_JS = """(() => {
  const box = (e) => { const r = e.getBoundingClientRect();
                       return [Math.round(r.left), Math.round(r.top), Math.round(r.right),
                               Math.round(r.bottom)]; };
  const s = window.stereodWeb;
  const views = {};
  for (const v of document.querySelectorAll('.view')) {
    const img = v.querySelector('img');
    views[v.id] = { box: box(img), loaded: img.naturalWidth > 0 };
  }
  return JSON.stringify({
    frame: document.getElementById('hm-frame').textContent,
    count: document.getElementById('hm-count').textContent,
    pairs: document.getElementById('hm-pairs').textContent,
    players: s.players, stats: s.stats,
    pitch: box(document.getElementById('hm-canvas')),
    heights: box(document.getElementById('img-heightmap-height')),
    frames: s.frames,
    views: views,
    states: [...document.querySelectorAll('.state')].map((e) => e.textContent),
  });
})()"""


def same_line(a, b):
    """Whether two players lines are the same, the page's read back from JavaScript: its
    numbers are doubles, so time_ns (ns since 1970, above 2^53) comes back rounded to a
    few hundred ns."""
    a, b = dict(a), dict(b)
    ta, tb = a.pop("time_ns"), b.pop("time_ns")
    return a == b and abs(ta - tb) <= 1024


def state(page):
    return json.loads(page.evaluate(STATE_JS))


def steady_screenshot(page, attempts=40):
    """A screenshot taken while the page showed one players line throughout: (png, state),
    or (None, None) after `attempts` tries. Each try starts just after the shown line
    changed (polled for up to 2 s), which leaves the shot the whole gap to the next line,
    however slow the machine makes the screenshot."""
    for _ in range(attempts):
        first = state(page)["frame"]
        t0 = time.monotonic()
        while state(page)["frame"] == first and time.monotonic() - t0 < 2.0:
            time.sleep(0.01)
        before = state(page)
        png = page.screenshot()
        after = state(page)
        if before["frame"] == after["frame"]:
            return png, before
    return None, None


class Picture:
    def __init__(self, w, h, rgb):
        self.w, self.h, self.rgb = w, h, rgb

    def px(self, x, y):
        i = 3 * (y * self.w + x)
        return self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]

    def pixels(self, box, inset=2):
        x0, y0, x1, y1 = box
        for y in range(max(0, y0 + inset), min(self.h, y1 - inset)):
            for x in range(max(0, x0 + inset), min(self.w, x1 - inset)):
                yield x, y, self.px(x, y)


def is_magenta(p):
    r, g, b = p
    return r > 200 and g < 90 and b > 200


def is_gray(p):
    r, g, b = p
    return abs(r - g) < 14 and abs(g - b) < 14 and abs(r - b) < 14


def colour_stats(pic, box):
    """(share of pixels that are not black, distinct colours at 4 bits per channel)"""
    n = lit = 0
    colours = set()
    for _, _, p in pic.pixels(box):
        n += 1
        if max(p) > 24:
            lit += 1
        colours.add((p[0] >> 4, p[1] >> 4, p[2] >> 4))
    return (lit / n if n else 0.0), len(colours)


def coloured_pixels(pic, box):
    """Pixels of the colour map in the box: neither dark, nor gray (lines, text), nor the
    players' magenta."""
    return sum(1 for _, _, p in pic.pixels(box)
               if max(p) > 60 and not is_gray(p) and not is_magenta(p))


def magenta_blobs(pic, box, min_pixels=8):
    """Connected (4-neighbour) groups of magenta pixels: the players' markers."""
    x0, y0, x1, y1 = box
    seen = set()
    blobs = []
    for x, y, p in pic.pixels(box, inset=0):
        if (x, y) in seen or not is_magenta(p):
            continue
        stack, size = [(x, y)], 0
        seen.add((x, y))
        while stack:
            cx, cy = stack.pop()
            size += 1
            for nx, ny in ((cx + 1, cy), (cx - 1, cy), (cx, cy + 1), (cx, cy - 1)):
                if (x0 <= nx < x1 and y0 <= ny < y1 and 0 <= nx < pic.w and 0 <= ny < pic.h
                        and (nx, ny) not in seen and is_magenta(pic.px(nx, ny))):
                    seen.add((nx, ny))
                    stack.append((nx, ny))
        if size >= min_pixels:
            blobs.append(size)
    return blobs
