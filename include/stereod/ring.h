/* stereod/ring.h: the shared-memory ring that stereod publishes depth maps through.
 *
 * This header is the specification of the layout, byte for byte, so that a reader can
 * be written in any language from it alone (client/python/stereod_client.py is one).
 * It has no dependencies beyond <stdint.h>; libstereod-client (stereod/client.h) is the
 * C reader built on it.
 *
 * OBJECT. One shared-memory file per camera pair, DIR/stereod.<pair>, mode 0640 (group
 * stereod reads), where DIR, the ring directory, is found by the same rule by writers
 * and readers (libstereod-client, the Python reader, stereod-dump):
 *   1. $STEREOD_RING_DIR when it is set and not empty;
 *   2. else /run/stereod when it is a directory (systemd-tmpfiles creates it at boot,
 *      0750 stereod:stereod: only the service can create rings there);
 *   3. else /dev/shm, where DIR/stereod.<pair> is exactly the POSIX shared-memory object
 *      of shm_open name "/stereod.<pair>".
 * <pair> is 1-63 characters from [A-Za-z0-9._-] and does not start with '.'. The writer
 * builds the object under a temporary name (open with O_CREAT|O_EXCL|O_NOFOLLOW, "~" is
 * not allowed in pair names) and renames it into place, so a reader that can open the
 * name always sees a complete header. Readers map it read-only (PROT_READ, MAP_SHARED).
 *
 * OWNER. /dev/shm is writable by every local user, so anyone could create a file under a
 * pair's name first. A writer never replaces, follows or writes into a final name that
 * belongs to another uid, or that is not a regular file: it fails (EPERM) and says whose
 * it is. A ring of its own uid whose writer died is replaced (its readers are told it
 * closed). Readers fstat the object they opened and refuse (EPERM) one whose owner is not
 * a trusted writer: by default their own uid, root, or the system user `stereod` when it
 * exists; a reader can be told another uid, or any owner (libstereod-client:
 * StereodClientOpenParams; the tools: STEREOD_RING_OWNER=any|UID|USER).
 *
 * READER LIMITS. A reader copies the header once at open, checks it against these limits
 * and the object's size, and never reads the layout fields again; every later access is
 * bounded by that copy. It refuses (EPROTO) a header with width or height above
 * STEREOD_RING_MAX_DIM, a plane stride above its row (width * element size) rounded up to
 * STEREOD_RING_PAGE, a slot_size above the end of its last plane rounded up to a page plus
 * one page, a header_size above STEREOD_RING_MAX_HEADER_SIZE, a total_size above
 * STEREOD_RING_MAX_TOTAL_SIZE or above the object's size. A header field that never
 * changes but changed after the open, and an object that shrank below total_size, are
 * errors of the read (not signals); a newest slot that never becomes complete (seq stays
 * odd, or its counter does not match) is an error at the reader's timeout.
 *
 * ENCODING. Little-endian, IEEE-754 doubles and floats, no implicit padding: every
 * offset below is checked by a static assertion. All sizes are in bytes.
 *
 *   object = header (header_size bytes, a multiple of 4096)
 *          + slot_count slots of slot_size bytes (a multiple of 4096) each.
 *   slot i starts at header_size + i * slot_size.
 *
 * HEADER (StereodRingHeader, 576 bytes used, the rest of the first header_size bytes
 * is zero). Every field except `closed`, `counter` and `futex` is written once before
 * the object becomes visible and never changes; a writer that needs another size,
 * format set or calibration closes the ring and creates a new object (readers see
 * `closed` and reopen).
 *
 *   off size type      field
 *     0    8 char[8]   magic            "STEREOD1" (no terminating NUL)
 *     8    4 u32       version          STEREOD_RING_VERSION (1); readers reject others
 *    12    4 u32       header_size      offset of slot 0, multiple of 4096
 *    16    4 u32       slot_count       number of slots, 1..STEREOD_RING_MAX_SLOTS
 *    20    4 u32       slot_size        bytes per slot, multiple of 4096
 *    24    8 u64       total_size       header_size + slot_count * slot_size
 *    32    4 u32       width            plane width, px
 *    36    4 u32       height           plane height, px
 *    40    4 u32       formats          bit k set = plane kind k present (StereodRingPlaneKind)
 *    44    4 s32       writer_pid       pid of the writer (in its pid namespace)
 *    48    8 u64       created_ns       creation time, CLOCK_REALTIME ns
 *    56    4 u32       closed           0 while the writer runs; 1 after a clean close (atomic)
 *    60    4 u32       reserved0        0
 *    64   64 char[64]  name             pair name, NUL-terminated
 *   128   64 plane[4]  planes           StereodRingPlane of kinds 0..3, indexed by kind
 *   192    8 f64       disparity_scale  px per unit of the DISPARITY plane (1/32 default)
 *   200   32 plane[2]  flow_planes      StereodRingPlane of kinds 4, 5 (FLOW_U, FLOW_V):
 *                                       kind k's descriptor is at
 *                                       stereod_ring_plane_descriptor_offset(k)
 *   232   24 u8[24]    reserved1        0
 *   256  176 calib     calibration      StereodRingCalibration (rectified left camera)
 *   432   64 f64[8]    producer         producer-defined parameters, 0 unless documented
 *                                       by the producer: stereod puts the pose of the
 *                                       calibration here, the height-map builder its grid
 *                                       geometry (see PRODUCER below)
 *   496   16 u8[16]    reserved2        0
 *   512    8 u64       counter          frames published so far (atomic, release)
 *   520    4 u32       futex            bumped after every publish and at close; a
 *                                       FUTEX_WAIT word (shared, not private) (atomic)
 *   524   52 u8[52]    reserved3        0
 *
 * PLANE DESCRIPTOR (StereodRingPlane, 16 bytes). For an absent kind all fields are 0.
 *     0    4 u32  offset   from the start of the slot, multiple of 64, >= 64
 *     4    4 u32  stride   bytes from one row to the next: >= width * element size,
 *                          <= that rounded up to STEREOD_RING_PAGE
 *     8    4 u32  size     stride * height
 *    12    4 u32  reserved 0
 *
 * PLANE KINDS (element type; invalid pixels):
 *   0 DISPARITY   s16, disparity = value * disparity_scale px, left view reference;
 *                 INT16_MIN (-32768) = invalid
 *   1 DEPTH       u16, millimetres along the optical axis; 0 = invalid (stereod: also
 *                 where the depth is beyond 65535 mm: never a saturated value)
 *   2 CONFIDENCE  u8, 1..255 = increasing confidence; 0 = invalid
 *   3 FLOAT32     f32, metres (stereod, output depth_m: depth along the optical axis,
 *                 no upper bound, ROS REP 118; the height-map builder: height above the
 *                 pitch); NaN = invalid
 *   4 FLOW_U      s16, optical flow of the left camera from the previous published
 *   5 FLOW_V      frame to this one, x (U) and y (V) components in units of
 *                 STEREOD_RING_FLOW_SCALE px (1/32, |u|, |v| <= 1023.97 px): pixel (x, y)
 *                 of the previous frame moves to (x + u, y + v) in this one. INT16_MIN
 *                 (-32768) = unknown (then in both planes). The pixel grid is the left
 *                 camera's captured image (width x height): the rectified grid of the
 *                 other planes when the pair has no calibration, or one without lens
 *                 distortion and rectifying rotation. Both are present or neither. A
 *                 frame whose previous frame was not published (the slot's frame_number
 *                 is not the previous one's + 1, or the first frame) has no flow: every
 *                 pixel unknown.
 *
 * CALIBRATION (StereodRingCalibration, 176 bytes, all f64): fx, fy (px), cx, cy (px,
 * rectified left camera), baseline (m), doffs = cx_left - cx_right (px), then Q, the
 * 4x4 reprojection matrix row-major: [X Y Z W]^T = Q [x y d 1]^T with d in px.
 * depth_m = fx * baseline / (d - doffs), d in px (as kernels/calib.h computes it; with
 * Middlebury's doffs = cx_right - cx_left the same depth reads f B / (d + doffs_mb));
 * no depth where d <= doffs. The DEPTH plane holds round(1000 * depth_m) (0 above
 * 65535), the FLOAT32 plane of stereod depth_m itself.
 *
 * PRODUCER. stereod, when the pair has a calibration: producer[0] = 1 (pose present),
 * producer[1..4] = the unit quaternion (w, x, y, z) of the rotation from the left
 * rectified camera to the pitch frame, producer[5..7] = the camera centre in pitch m
 * (p_pitch = R p_cam + centre; kernels/calib.h). stereod-heightmap: producer[0] = 2,
 * producer[1..5] = x0, y0, cell (m), grid width, grid height (cells); row j of the planes
 * covers y in [y0 + j cell, y0 + (j + 1) cell).
 *
 * SLOT (StereodRingSlot, 64 bytes, then the planes at their offsets):
 *     0    8 u64  seq          seqlock: odd while the writer writes the slot (atomic)
 *     8    8 u64  counter      the publish counter value of this frame (1 = first)
 *    16    8 u64  frame_number the producer's frame number
 *    24    8 u64  capture_ns   capture time of the pair, CLOCK_REALTIME ns
 *    32    8 u64  publish_ns   when the writer committed the slot, CLOCK_REALTIME ns
 *    40    4 u32  flags        STEREOD_FRAME_FLAG_*
 *    44   20 u8[20] reserved   0
 *
 * WRITER PROTOCOL (never waits for readers). Publishing frame number k = counter + 1
 * goes into slot (k - 1) % slot_count:
 *   1. s = slot.seq; store slot.seq = s + 1 (relaxed); release fence;
 *   2. write the planes and the slot metadata (counter = k);
 *   3. store slot.seq = s + 2 (release);
 *   4. store header.counter = k (release);
 *   5. atomically add 1 to header.futex (release); FUTEX_WAKE(futex, INT_MAX).
 * At clean shutdown: store closed = 1, add 1 to futex, FUTEX_WAKE, unlink the name.
 *
 * READER PROTOCOL (lock-free, read-only):
 *   1. c = header.counter (acquire); c == 0 means no frame yet;
 *   2. slot = (c - 1) % slot_count; s1 = slot.seq (acquire); retry if s1 is odd;
 *   3. copy the slot metadata and planes;
 *   4. acquire fence; s2 = slot.seq; if s2 != s1 the copy is torn: retry from 1.
 *   The copy holds frame slot.counter, which is c, or c plus a multiple of slot_count
 *   when the writer lapped the reader; any other value (0 included) is not a frame.
 *   A writer never leaves the slot of the published counter odd (it writes the next
 *   frame into the next slot), so a slot that stays odd, or invalid, while the counter
 *   does not move is a dead or broken writer: readers give up at their timeout instead
 *   of retrying forever, and back off (FUTEX_WAIT with a short timeout) between tries.
 * Waiting: f = header.futex; if header.counter still equals the last counter seen and
 * closed == 0, FUTEX_WAIT(futex, f, timeout); then re-check (wakeups may be spurious).
 * A writer killed without closing leaves its ring unclosed: its readers see no new
 * frame until a new writer of the pair replaces the name, which closes the old ring
 * (closed = 1 and a wake), so waiting readers learn it and can open the new one.
 */
#pragma once

#include <stdint.h>
#include <stddef.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the stereod ring layout is little-endian; this header maps it directly"
#endif

#ifdef __cplusplus
extern "C" {
#define STEREOD_RING_STATIC_ASSERT(e, m) static_assert(e, m)
#else
#define STEREOD_RING_STATIC_ASSERT(e, m) _Static_assert(e, m)
#endif

#define STEREOD_RING_MAGIC "STEREOD1"       /* 8 bytes, no NUL in the object */
#define STEREOD_RING_MAGIC_SIZE 8
#define STEREOD_RING_VERSION 1u
#define STEREOD_RING_SHM_DIR "/dev/shm"          /* last choice of the ring directory */
#define STEREOD_RING_RUN_DIR "/run/stereod"      /* used when it is a directory */
#define STEREOD_RING_DIR_ENV "STEREOD_RING_DIR"  /* overrides both when set, not empty */
#define STEREOD_RING_PREFIX "stereod."       /* object name = prefix + pair */
#define STEREOD_RING_NAME_MAX 63             /* longest pair name */
#define STEREOD_RING_MAX_SLOTS 64u
#define STEREOD_RING_DEFAULT_SLOTS 4u
#define STEREOD_RING_DEFAULT_DISPARITY_SCALE (1.0 / 32.0)
#define STEREOD_RING_PAGE 4096u              /* header_size and slot_size granularity */
#define STEREOD_RING_ALIGN 64u               /* plane offset granularity */
#define STEREOD_RING_MAX_DIM 16384u          /* largest width and height, px */
#define STEREOD_RING_MAX_HEADER_SIZE 65536u  /* largest header_size readers accept */
#define STEREOD_RING_MAX_TOTAL_SIZE (1ull << 36)  /* largest total_size (64 GiB) */
#define STEREOD_RING_DISPARITY_INVALID INT16_MIN
#define STEREOD_RING_DEPTH_INVALID 0u
#define STEREOD_RING_CONFIDENCE_INVALID 0u
#define STEREOD_RING_FLOW_UNKNOWN INT16_MIN
#define STEREOD_RING_FLOW_SCALE (1.0 / 32.0)   /* px per unit of FLOW_U and FLOW_V */
#define STEREOD_RING_HEADER_PLANES 4u          /* descriptors in StereodRingHeader.planes */

typedef enum {
  STEREOD_RING_PLANE_DISPARITY = 0,    /* s16 fixed point, INT16_MIN = invalid */
  STEREOD_RING_PLANE_DEPTH = 1,        /* u16 mm, 0 = invalid */
  STEREOD_RING_PLANE_CONFIDENCE = 2,   /* u8, 0 = invalid */
  STEREOD_RING_PLANE_FLOAT32 = 3,      /* f32 metres, NaN = invalid */
  STEREOD_RING_PLANE_FLOW_U = 4,       /* s16 1/32 px, INT16_MIN = unknown */
  STEREOD_RING_PLANE_FLOW_V = 5,       /* s16 1/32 px, INT16_MIN = unknown */
  STEREOD_RING_PLANE_COUNT
} StereodRingPlaneKind;

#define STEREOD_RING_FORMAT(kind) (1u << (kind))
#define STEREOD_RING_FORMAT_DISPARITY STEREOD_RING_FORMAT(STEREOD_RING_PLANE_DISPARITY)
#define STEREOD_RING_FORMAT_DEPTH STEREOD_RING_FORMAT(STEREOD_RING_PLANE_DEPTH)
#define STEREOD_RING_FORMAT_CONFIDENCE STEREOD_RING_FORMAT(STEREOD_RING_PLANE_CONFIDENCE)
#define STEREOD_RING_FORMAT_FLOAT32 STEREOD_RING_FORMAT(STEREOD_RING_PLANE_FLOAT32)
#define STEREOD_RING_FORMAT_FLOW (STEREOD_RING_FORMAT(STEREOD_RING_PLANE_FLOW_U) | \
                                  STEREOD_RING_FORMAT(STEREOD_RING_PLANE_FLOW_V))
#define STEREOD_RING_FORMAT_ALL ((1u << STEREOD_RING_PLANE_COUNT) - 1u)

/* Bytes per element of a plane kind (1, 2 or 4); 0 for an unknown kind. */
static inline uint32_t
stereod_ring_plane_element_size(unsigned kind)
{
  static const uint32_t sizes[STEREOD_RING_PLANE_COUNT] = { 2, 2, 1, 4, 2, 2 };
  return kind < STEREOD_RING_PLANE_COUNT ? sizes[kind] : 0;
}

/* Byte offset within the header of plane kind `kind`'s descriptor: 128 + 16 kind for the
 * kinds 0..3, 200 + 16 (kind - 4) for 4 and 5; 0 for an unknown kind. */
static inline uint32_t
stereod_ring_plane_descriptor_offset(unsigned kind)
{
  if (kind < STEREOD_RING_HEADER_PLANES)
    return 128u + 16u * kind;
  return kind < STEREOD_RING_PLANE_COUNT ? 200u + 16u * (kind - STEREOD_RING_HEADER_PLANES) : 0u;
}

/* Slot flags. Bits not named here are reserved and 0. */
#define STEREOD_FRAME_FLAG_DISCONT (1u << 0)   /* frames were lost or the stream
                                                  restarted before this frame */
#define STEREOD_FRAME_FLAG_DEGRADED (1u << 1)  /* produced in a degraded mode
                                                  (e.g. a stage skipped under load) */

typedef struct {
  uint32_t offset;     /* from the slot start, multiple of 64, >= 64; 0 = absent */
  uint32_t stride;     /* bytes per row */
  uint32_t size;       /* stride * height */
  uint32_t reserved;
} StereodRingPlane;

typedef struct {
  double fx, fy;       /* focal lengths, px */
  double cx, cy;       /* principal point of the rectified left camera, px */
  double baseline;     /* m */
  double doffs;        /* cx_left - cx_right, px */
  double q[16];        /* 4x4 reprojection matrix, row-major */
} StereodRingCalibration;

typedef struct {
  char magic[8];
  uint32_t version;
  uint32_t header_size;
  uint32_t slot_count;
  uint32_t slot_size;
  uint64_t total_size;
  uint32_t width;
  uint32_t height;
  uint32_t formats;
  int32_t writer_pid;
  uint64_t created_ns;
  uint32_t closed;                 /* atomic */
  uint32_t reserved0;
  char name[64];
  StereodRingPlane planes[STEREOD_RING_HEADER_PLANES];       /* kinds 0..3 */
  double disparity_scale;
  StereodRingPlane flow_planes[STEREOD_RING_PLANE_COUNT - STEREOD_RING_HEADER_PLANES];
  uint8_t reserved1[24];
  StereodRingCalibration calibration;
  double producer[8];
  uint8_t reserved2[16];
  uint64_t counter;                /* atomic */
  uint32_t futex;                  /* atomic, futex word */
  uint8_t reserved3[52];
} StereodRingHeader;

typedef struct {
  uint64_t seq;                    /* atomic, seqlock */
  uint64_t counter;
  uint64_t frame_number;
  uint64_t capture_ns;
  uint64_t publish_ns;
  uint32_t flags;
  uint8_t reserved[20];
} StereodRingSlot;

#define STEREOD_RING_CHECK_OFFSET(type, field, off) \
  STEREOD_RING_STATIC_ASSERT(offsetof(type, field) == (off), #type "." #field " offset")

STEREOD_RING_CHECK_OFFSET(StereodRingPlane, offset, 0);
STEREOD_RING_CHECK_OFFSET(StereodRingPlane, stride, 4);
STEREOD_RING_CHECK_OFFSET(StereodRingPlane, size, 8);
STEREOD_RING_STATIC_ASSERT(sizeof(StereodRingPlane) == 16, "StereodRingPlane size");

STEREOD_RING_CHECK_OFFSET(StereodRingCalibration, fx, 0);
STEREOD_RING_CHECK_OFFSET(StereodRingCalibration, fy, 8);
STEREOD_RING_CHECK_OFFSET(StereodRingCalibration, cx, 16);
STEREOD_RING_CHECK_OFFSET(StereodRingCalibration, cy, 24);
STEREOD_RING_CHECK_OFFSET(StereodRingCalibration, baseline, 32);
STEREOD_RING_CHECK_OFFSET(StereodRingCalibration, doffs, 40);
STEREOD_RING_CHECK_OFFSET(StereodRingCalibration, q, 48);
STEREOD_RING_STATIC_ASSERT(sizeof(StereodRingCalibration) == 176, "calibration size");

STEREOD_RING_CHECK_OFFSET(StereodRingHeader, magic, 0);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, version, 8);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, header_size, 12);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, slot_count, 16);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, slot_size, 20);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, total_size, 24);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, width, 32);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, height, 36);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, formats, 40);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, writer_pid, 44);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, created_ns, 48);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, closed, 56);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, name, 64);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, planes, 128);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, disparity_scale, 192);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, flow_planes, 200);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, reserved1, 232);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, calibration, 256);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, producer, 432);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, counter, 512);
STEREOD_RING_CHECK_OFFSET(StereodRingHeader, futex, 520);
STEREOD_RING_STATIC_ASSERT(sizeof(StereodRingHeader) == 576, "StereodRingHeader size");

/* The descriptor of plane kind `kind` (< STEREOD_RING_PLANE_COUNT) in a header. */
static inline const StereodRingPlane *
stereod_ring_header_plane(const StereodRingHeader *h, unsigned kind)
{
  return kind < STEREOD_RING_HEADER_PLANES ? &h->planes[kind]
                                           : &h->flow_planes[kind - STEREOD_RING_HEADER_PLANES];
}

STEREOD_RING_CHECK_OFFSET(StereodRingSlot, seq, 0);
STEREOD_RING_CHECK_OFFSET(StereodRingSlot, counter, 8);
STEREOD_RING_CHECK_OFFSET(StereodRingSlot, frame_number, 16);
STEREOD_RING_CHECK_OFFSET(StereodRingSlot, capture_ns, 24);
STEREOD_RING_CHECK_OFFSET(StereodRingSlot, publish_ns, 32);
STEREOD_RING_CHECK_OFFSET(StereodRingSlot, flags, 40);
STEREOD_RING_STATIC_ASSERT(sizeof(StereodRingSlot) == 64, "StereodRingSlot size");

#ifdef __cplusplus
}
#endif
