/* test-heightmap-fusion: the GPU half of stereod-heightmap.
 *
 *  - triangulation: heightmap_triangulate.comp (the function the scatter pass uses) against
 *    heightmap_geometry_pixel_to_pitch() in double precision, on fresh random geometry and
 *    disparities (invalid and negative ones included; the seed is printed,
 *    STEREOD_TEST_SEED repeats a run), output poisoned first; and that formula against
 *    calib_pixel_to_pitch();
 *  - fusion, hand-computed: a camera 10 m above the pitch looking straight down, every
 *    pixel on the ground but for a stray point in one cell (it must not set the height)
 *    and two raised points in another (they do); heights, masks and empty cells checked
 *    against the numbers worked out below;
 *  - inputs that claim more than they hold: refused before anything is uploaded;
 *  - the pose's quaternion round trip (how stereod puts the pose in the ring header).
 * Carving and the goal frames, on ray-cast scenes: test-heightmap-scenes.c.
 */
#include <gio/gio.h>
#include <math.h>
#include <string.h>

#include "heightmap/heightmap.h"
#include "tests/common/gpu-test.h"
#include "tests/common/test-seed.h"

static GRand *rng;

static void
random_rotation(double R[9])
{
  double q[4];
  for (int i = 0; i < 4; i++)
    q[i] = g_rand_double_range(rng, -1, 1);
  calib_rotation_from_quaternion(q, R);
}

static void
test_quaternion(void)
{
  for (int k = 0; k < 1000; k++) {
    double R[9], q[4], R2[9];
    random_rotation(R);
    calib_rotation_to_quaternion(R, q);
    g_assert_cmpfloat(q[0], >=, 0);
    g_assert_cmpfloat_with_epsilon(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], 1,
                                   1e-12);
    calib_rotation_from_quaternion(q, R2);
    for (int i = 0; i < 9; i++)
      g_assert_cmpfloat_with_epsilon(R[i], R2[i], 1e-12);
  }
  /* the cases Shepperd's method branches on: identity and half turns */
  const double half[3][9] = { { 1, 0, 0, 0, -1, 0, 0, 0, -1 }, { -1, 0, 0, 0, 1, 0, 0, 0, -1 },
                              { -1, 0, 0, 0, -1, 0, 0, 0, 1 } };
  for (int k = 0; k < 3; k++) {
    double q[4], R2[9];
    calib_rotation_to_quaternion(half[k], q);
    calib_rotation_from_quaternion(q, R2);
    for (int i = 0; i < 9; i++)
      g_assert_cmpfloat_with_epsilon(half[k][i], R2[i], 1e-12);
  }
}

static void
test_formula(void)
{
  /* heightmap_geometry_pixel_to_pitch is calib_pixel_to_pitch on the same numbers */
  for (int k = 0; k < 200; k++) {
    StereoCalib c;
    double R[9], centre[3] = { g_rand_double_range(rng, -60, 60),
                               g_rand_double_range(rng, -90, 90), g_rand_double_range(rng, 2, 40) };
    random_rotation(R);
    calib_init_ideal(&c, 640, 360, g_rand_double_range(rng, 200, 2000), 319.5, 179.5,
                     g_rand_double_range(rng, 0.2, 2), NULL, R, centre);
    HeightmapPairGeometry g;
    heightmap_geometry_from_calib(&g, &c);
    double x = g_rand_double_range(rng, 0, 640), y = g_rand_double_range(rng, 0, 360);
    double d = g_rand_double_range(rng, -5, 100);
    double a[3], b[3];
    bool ok_a = calib_pixel_to_pitch(&c, x, y, d, a);
    bool ok_b = heightmap_geometry_pixel_to_pitch(&g, x, y, d, b);
    g_assert_cmpint(ok_a, ==, ok_b);
    for (int i = 0; ok_a && i < 3; i++)
      g_assert_cmpfloat_with_epsilon(a[i], b[i], 1e-9 * (1 + fabs(a[i])));
  }
}

static void
test_triangulate_gpu(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  const int W = 97, H = 61;   /* not multiples of the work group */
  g_autoptr(GError) error = NULL;
  GpuProgramParams pp = { .label = "triangulate", .resource = "heightmap_triangulate.comp" };
  /* a fusion object first: it links the shader bundle in */
  HeightmapFusionParams fp = { .min_points = 1 };
  g_assert_true(heightmap_grid_init(&fp.grid, -1, 1, -1, 1, 0.5));
  g_autoptr(HeightmapFusion) fusion = heightmap_fusion_new(ctx, &fp, &error);
  g_assert_no_error(error);
  g_autoptr(GpuProgram) prog = gpu_program_new(ctx, &pp, &error);
  g_assert_no_error(error);
  GpuImageParams dp = { .label = "disparity", .width = W, .height = H, .format = GPU_FORMAT_R16I };
  GpuImageParams op = { .label = "points", .width = W, .height = H, .format = GPU_FORMAT_RGBA32F };
  g_autoptr(GpuImage) disp = gpu_image_new(ctx, &dp, &error);
  g_autoptr(GpuImage) out = gpu_image_new(ctx, &op, &error);
  g_assert_no_error(error);
  g_autofree int16_t *d = g_new(int16_t, W * H);
  g_autofree float *pts = g_new(float, W * H * 4);

  for (int round = 0; round < 5; round++) {
    HeightmapPairGeometry g;
    StereoCalib c;
    double R[9], centre[3] = { g_rand_double_range(rng, -60, 60),
                               g_rand_double_range(rng, -90, 90), g_rand_double_range(rng, 2, 40) };
    random_rotation(R);
    double f = g_rand_double_range(rng, 50, 200);
    calib_init_ideal(&c, W, H, f, g_rand_double_range(rng, 40, 56),
                     g_rand_double_range(rng, 25, 35), g_rand_double_range(rng, 0.3, 2), NULL, R,
                     centre);
    heightmap_geometry_from_calib(&g, &c);
    const double scale = 1.0 / 32;
    for (int i = 0; i < W * H; i++) {
      int r = g_rand_int_range(rng, 0, 10);
      d[i] = r == 0 ? INT16_MIN : r == 1 ? (int16_t) g_rand_int_range(rng, -3200, -32)
                                         : (int16_t) g_rand_int_range(rng, 32, 128 * 32);
    }
    const float nan4[4] = { NAN, NAN, NAN, NAN };
    g_assert_true(gpu_image_fill(out, nan4, &error));
    for (int k = 0; k < W * H * 4; k++)
      pts[k] = 12345.0f;
    g_assert_true(gpu_image_upload(disp, 0, d, W * 2, &error));
    float q[16], pose[12];
    for (int i = 0; i < 16; i++)
      q[i] = (float) g.q[i];
    for (int i = 0; i < 9; i++)
      pose[i] = (float) g.rotation[i];
    for (int i = 0; i < 3; i++)
      pose[9 + i] = (float) g.centre[i];
    gpu_program_set_float_array(prog, "u_q", q, 16);
    gpu_program_set_float_array(prog, "u_pose", pose, 12);
    gpu_program_set_ivec2(prog, "u_size", W, H);
    gpu_program_set_float(prog, "u_scale", (float) scale);
    gpu_bind_image(0, disp, GPU_ACCESS_READ);
    gpu_bind_image(1, out, GPU_ACCESS_WRITE);
    gpu_program_dispatch(prog, W, H, 1);
    gpu_barrier();
    g_assert_true(gpu_context_check(ctx, "triangulate", &error));
    g_assert_true(gpu_image_download(out, 0, pts, W * 16, &error));
    g_assert_no_error(error);
    double worst = 0;
    int valid = 0;
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        int i = y * W + x;
        double ref[3];
        bool ok = d[i] != INT16_MIN &&
                  heightmap_geometry_pixel_to_pitch(&g, x, y, d[i] * scale, ref);
        const float *p = &pts[i * 4];
        if (!ok) {
          g_assert_true(isnan(p[0]) && isnan(p[1]) && isnan(p[2]) && isnan(p[3]));
          continue;
        }
        valid++;
        g_assert_cmpfloat(p[3], ==, 1.0f);
        /* float: Q and the pose rounded to float, then float arithmetic on coordinates
         * up to ~1e3 m: relative 1e-5 of the camera distance, plus the centre's size */
        double range = sqrt(pow(ref[0] - centre[0], 2) + pow(ref[1] - centre[1], 2) +
                            pow(ref[2] - centre[2], 2));
        for (int k = 0; k < 3; k++) {
          double err = fabs(p[k] - ref[k]) / (1e-5 * (range + 100));
          worst = MAX(worst, err);
          g_assert_cmpfloat(err, <=, 1.0);
        }
      }
    g_assert_cmpint(valid, >, W * H / 2);
    g_test_message("round %d: %d valid points, worst error %.2f of the tolerance", round, valid,
                   worst);
  }
}

/* A fusion with `fp` on the hand-computed cases' grid: 2 x 2 m around the origin, cells
 * of 0.1 m (20 x 20). */
static HeightmapFusion *
hand_fusion(GpuContext *ctx, HeightmapFusionParams *fp)
{
  g_assert_true(heightmap_grid_init(&fp->grid, -1, 1, -1, 1, 0.1));
  g_assert_cmpint(fp->grid.width, ==, 20);
  GError *error = NULL;
  HeightmapFusion *f = heightmap_fusion_new(ctx, fp, &error);
  g_assert_no_error(error);
  return f;
}

/* The hand-computed case's camera (below): at (0, 0, 10) looking straight down, 16x16 px,
 * f = 200 px, B = 1 m, c = 7.5 px. */
static HeightmapPairGeometry
hand_camera(void)
{
  return (HeightmapPairGeometry) {
    .q = { 1, 0, 0, -7.5, 0, 1, 0, -7.5, 0, 0, 0, 200, 0, 0, 1, 0 },
    .rotation = { 1, 0, 0, 0, -1, 0, 0, 0, -1 },
    .centre = { 0, 0, 10 },
  };
}

/* The hand-computed case. Camera at (0, 0, 10) looking straight down: camera x = pitch x,
 * camera y = -pitch y, optical axis = -z. 16x16 px, f = 200 px, B = 1 m, c = 7.5 px:
 * a point at height h has depth Z = 10 - h, disparity d = 200 / Z, and pixel (x, y) sees
 * pitch (x - 7.5, 7.5 - y) / d. On the ground (d = 20) pixels are 0.05 m apart: with
 * 0.1 m cells over [-1, 1]^2 the image covers cells 6..13 in both directions with 2 x 2
 * pixels = 4 points each; the other cells stay empty (NaN).
 *  - min_points 2, top_fraction 0.1 -> need = 2. Four ground points in bin 0 ([0, 0.2)):
 *    the 2nd highest of 4 spread evenly -> h = (1 - 1.5 / 4) * 0.2 = 0.125 m.
 *  - pixel (0, 0) raised to h = 1.9 m (d = 200 / 8.1): pitch (-0.30375, 0.30375), still
 *    cell (6, 13), which now holds 3 ground points + 1 at 1.9 m (bin 9). Bin 9 alone has
 *    1 < 2; bin 0 brings the count to 4 >= 2 with the rank 0.5 of 3 ->
 *    h = (1 - 0.5 / 3) * 0.2 = 0.1667 m: the stray point does not set the height.
 *  - pixels (15, 15) raised to 1.9 m and (14, 15) to 0.5 m (d = 200 / 9.5): pitch
 *    (0.30375, -0.30375) -> cell (13, 6) and (0.3087, -0.3562) -> cell (13, 6); that cell
 *    holds 2 ground points, one in bin 2 ([0.4, 0.6)) and one in bin 9: from the top 1,
 *    then 2 >= need at bin 2 with rank 0.5 of 1 -> h = (3 - 0.5) * 0.2 = 0.5 m.
 *  - mask: the pair is number 3 -> bit 8 in every cell that got a point.
 *  - body support (points 0.2-0.6 m high | points from 0.2 m up << 16): cell (13, 6)
 *    1 | 2 << 16 (the 0.5 m point is a shin's, both raised points count), cell (6, 13)
 *    0 | 1 << 16, every other cell 0 (ground points do not count).
 *  - body mask (points 0.6 m high or more): bit 8 in cells (13, 6) and (6, 13), the
 *    1.9 m points' (not the 0.5 m one's), 0 elsewhere. */
static void
test_fusion_hand(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  HeightmapFusionParams fp = { .label = "hand", .min_points = 2, .top_fraction = 0.1,
                               .min_confidence = 128 };
  g_autoptr(HeightmapFusion) f = hand_fusion(ctx, &fp);
  g_autoptr(GError) error = NULL;
  const HeightmapPairGeometry g = hand_camera();
  enum { W = 16 };
  int16_t d[W * W];
  uint8_t conf[W * W];
  for (int i = 0; i < W * W; i++) {
    d[i] = 20 * 32;
    conf[i] = 200;
  }
  d[0] = (int16_t) lround(200.0 / 8.1 * 32);
  d[15 * W + 15] = (int16_t) lround(200.0 / 8.1 * 32);
  d[15 * W + 14] = (int16_t) lround(200.0 / 9.5 * 32);
  /* a filled (unmeasured) pixel raised high, and an invalid one: neither counts */
  d[8 * W + 8] = (int16_t) lround(200.0 / 7.0 * 32);
  conf[8 * W + 8] = 100;
  d[8 * W + 9] = INT16_MIN;
  HeightmapInput in = { .width = W, .height = W, .disparity = d, .disparity_stride = W * 2,
                        .disparity_size = sizeof d, .disparity_scale = 1.0 / 32,
                        .confidence = conf, .confidence_stride = W,
                        .confidence_size = sizeof conf };
  /* the same planes with padded rows (2 and 3 bytes more), for the second run */
  enum { DS = W * 2 + 6, CS = W + 3 };
  _Alignas(int16_t) uint8_t dpad[DS * W];
  uint8_t cpad[CS * W];
  memset(dpad, 0x55, sizeof dpad);
  memset(cpad, 0x55, sizeof cpad);
  for (int y = 0; y < W; y++) {
    memcpy(dpad + y * DS, d + y * W, W * 2);
    memcpy(cpad + y * CS, conf + y * W, W);
  }
  HeightmapInput padded = { .width = W, .height = W, .disparity = (const int16_t *) dpad,
                            .disparity_stride = DS, .disparity_size = sizeof dpad,
                            .disparity_scale = 1.0 / 32, .confidence = cpad,
                            .confidence_stride = CS, .confidence_size = sizeof cpad };
  g_assert_false(heightmap_fusion_prepare(f, 3, 0, W, &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_clear_error(&error);
  float h[400];
  uint32_t m[400];
  g_assert_null(heightmap_fusion_get_support(f));   /* no frame resolved yet */
  g_assert_null(heightmap_fusion_get_body_masks(f));
  for (int run = 0; run < 2; run++) {   /* twice: begin clears the previous frame */
    for (int i = 0; i < 400; i++) {
      h[i] = -7.0f;
      m[i] = 0xdeadbeef;
    }
    /* run 0: the pair's images made before its first frame (its ring opened); run 1:
     * made for another size, remade by the frame, and padded rows */
    g_assert_true(heightmap_fusion_prepare(f, 3, run == 0 ? W : 8, run == 0 ? W : 8, &error));
    g_assert_true(heightmap_fusion_begin(f, &error));
    g_assert_true(heightmap_fusion_add(f, 3, &g, run == 0 ? &in : &padded, &error));
    g_assert_true(heightmap_fusion_finish(f, h, m, &error));
    g_assert_no_error(error);
    for (int j = 0; j < 20; j++)
      for (int i = 0; i < 20; i++) {
        float v = h[j * 20 + i];
        bool inside = i >= 6 && i <= 13 && j >= 6 && j <= 13;
        g_assert_cmpuint(m[j * 20 + i], ==, inside ? 1u << 3 : 0u);
        if (!inside) {
          g_assert_true(isnan(v));
          continue;
        }
        double expect = 0.125;
        if (i == 6 && j == 13)
          expect = 0.2 * (1 - 0.5 / 3);
        else if (i == 13 && j == 6)
          expect = 0.5;
        else if (i == 10 && j == 9)
          continue;   /* the cell of pixels (8, 8) and (9, 8), below */
        g_assert_cmpfloat_with_epsilon(v, expect, 1e-5);
      }
    /* pixels (8, 8), (9, 8) -> pitch (0.025, -0.025), (0.075, -0.025) -> cells (10, 9),
     * (10, 9): 2 points left there -> rank 1.5 of 2 -> (1 - 0.75) * 0.2 = 0.05 */
    g_assert_cmpfloat_with_epsilon(h[9 * 20 + 10], 0.05, 1e-5);
    const uint32_t *s = heightmap_fusion_get_support(f);
    g_assert_nonnull(s);
    for (int c = 0; c < 400; c++)
      g_assert_cmphex(s[c], ==, c == 6 * 20 + 13 ? 1u | 2u << 16 : c == 13 * 20 + 6 ? 1u << 16 : 0u);
    const uint32_t *body = heightmap_fusion_get_body_masks(f);
    g_assert_nonnull(body);
    for (int c = 0; c < 400; c++)
      g_assert_cmphex(body[c], ==, c == 6 * 20 + 13 || c == 13 * 20 + 6 ? 1u << 3 : 0u);
    /* body bands (0.2-0.6, 0.6-1.0, 1.0-1.4, 1.4-1.8 m in bytes 0..3): the 0.5 m point in
     * cell (13, 6)'s first; the 1.9 m points above them all */
    const uint32_t *bands = heightmap_fusion_get_lower(f);
    g_assert_nonnull(bands);
    for (int c = 0; c < 400; c++)
      g_assert_cmphex(bands[c], ==, c == 6 * 20 + 13 ? 1u : 0u);
  }

  /* New thresholds on the same object (a reload): min_points 3 -> need = 3; a ground cell
   * of 4 points: rank 2.5 of 4 -> (1 - 2.5 / 4) * 0.2 = 0.075. min_confidence 0 lets the
   * filled pixel (8, 8) (pitch (0.0175, -0.0175), 3 m) into cell (10, 9): 3 points, 1 in
   * bin 15, then rank 1.5 of the 2 in bin 0 -> 0.05 (NaN with min_confidence 128). */
  fp.min_points = 3;
  fp.min_confidence = 0;
  heightmap_fusion_set_params(f, &fp);
  g_assert_true(heightmap_fusion_begin(f, &error));
  g_assert_true(heightmap_fusion_add(f, 3, &g, &in, &error));
  g_assert_true(heightmap_fusion_finish(f, h, m, &error));
  g_assert_no_error(error);
  g_assert_cmpfloat_with_epsilon(h[8 * 20 + 8], 0.075, 1e-5);
  g_assert_cmpfloat_with_epsilon(h[9 * 20 + 10], 0.05, 1e-5);
  g_assert_true(isnan(h[0]));
  g_assert_cmphex(heightmap_fusion_get_support(f)[9 * 20 + 10], ==, 1u << 16);   /* the 3 m point */
  g_assert_cmphex(heightmap_fusion_get_body_masks(f)[9 * 20 + 10], ==, 1u << 3);
}

/* Far pooling, by hand, on the camera of the hand-computed case (above; f B = 200 px m,
 * disparity_noise 0.07 px): pixels (0, 0) and (4, 0) raised to 1.9 m fall in cells (6, 13)
 * and (8, 13) (pitch x -0.30375 and -0.14177), one point among 3 ground points each; cell
 * (7, 13) between them holds 4 ground points. min_points 2, top_fraction 0: need = 2.
 *  - No pooling: (6, 13) and (8, 13) rank 0.5 of the 3 in bin 0 -> (1 - 0.5 / 3) * 0.2 =
 *    0.1667 m; (7, 13) rank 1.5 of 4 -> 0.125 m.
 *  - far_pool 1: a cell's range error 1 m up is D L 0.07 / 200 (D, L from (0, 0, 10) to
 *    its centre): (6, 13) 0.001562 m, (7, 13) 0.001356 m, (8, 13) 0.001201 m. With
 *    far_sigma 0.0013 the first two are far. (7, 13) sums cells 6..8 x 12..14 (row 14 is
 *    empty): both raised points in bin 9 -> rank 1.5 of 2 -> (10 - 0.75) * 0.2 = 1.85 m;
 *    (6, 13) sums 5..7 x 12..14: one raised point and 15 ground -> rank 0.5 of 15 ->
 *    (1 - 0.5 / 15) * 0.2 = 0.19333 m; (8, 13) is not far: 0.1667 m as without.
 *  - (6, 14), an empty cell beside them (far too: 0.0018 m), stays empty: the pooling
 *    does not grow what it pools into the cells around.
 *  - The support stays each cell's own points: (6, 13) and (8, 13) 1 << 16, (7, 13) 0.
 *  - far_sigma 0.002: no cell is far, as without pooling. */
static void
test_fusion_far_pool(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  HeightmapFusionParams fp = { .label = "far", .min_points = 2, .top_fraction = 0,
                               .min_confidence = 0, .disparity_noise = 0.07 };
  g_autoptr(HeightmapFusion) f = hand_fusion(ctx, &fp);
  g_autoptr(GError) error = NULL;
  const HeightmapPairGeometry g = hand_camera();
  enum { W = 16 };
  int16_t d[W * W];
  for (int i = 0; i < W * W; i++)
    d[i] = 20 * 32;
  d[0] = d[4] = (int16_t) lround(200.0 / 8.1 * 32);
  HeightmapInput in = { .width = W, .height = W, .disparity = d, .disparity_stride = W * 2,
                        .disparity_size = sizeof d, .disparity_scale = 1.0 / 32 };
  const struct { int pool; double sigma; double h6, h7, h8; } runs[] = {
    { 0, 0.0, 0.2 * (1 - 0.5 / 3), 0.125, 0.2 * (1 - 0.5 / 3) },
    { 1, 0.0013, 0.2 * (1 - 0.5 / 15), 1.85, 0.2 * (1 - 0.5 / 3) },
    { 1, 0.002, 0.2 * (1 - 0.5 / 3), 0.125, 0.2 * (1 - 0.5 / 3) },
  };
  float h[400];
  for (unsigned r = 0; r < G_N_ELEMENTS(runs); r++) {
    fp.far_pool = runs[r].pool;
    fp.far_sigma = runs[r].sigma;
    heightmap_fusion_set_params(f, &fp);
    for (int i = 0; i < 400; i++)
      h[i] = -7.0f;
    g_assert_true(heightmap_fusion_begin(f, &error));
    g_assert_true(heightmap_fusion_add(f, 3, &g, &in, &error));
    g_assert_true(heightmap_fusion_finish(f, h, NULL, &error));
    g_assert_no_error(error);
    g_assert_cmpfloat_with_epsilon(h[13 * 20 + 6], runs[r].h6, 1e-5);
    g_assert_cmpfloat_with_epsilon(h[13 * 20 + 7], runs[r].h7, 1e-5);
    g_assert_cmpfloat_with_epsilon(h[13 * 20 + 8], runs[r].h8, 1e-5);
    g_assert_cmpfloat_with_epsilon(h[9 * 20 + 9], 0.125, 1e-5);   /* a ground cell */
    g_assert_true(isnan(h[0]));
    /* (6, 14), beside the raised point, far too (0.0018 m), holds no point of its own:
     * empty, pooled or not */
    g_assert_true(isnan(h[14 * 20 + 6]));
    const uint32_t *s = heightmap_fusion_get_support(f);
    g_assert_cmphex(s[13 * 20 + 6], ==, 1u << 16);
    g_assert_cmphex(s[13 * 20 + 7], ==, 0u);
    g_assert_cmphex(s[13 * 20 + 8], ==, 1u << 16);
  }
}

/* The body bands, by hand, on the camera of the hand-computed case: pixel (0, 0) raised
 * to 1.9 m (d = 200 / 8.1: pitch (-0.30375, 0.30375)) and pixels (1, 0) and (0, 1) to
 * 0.7 m (d = 200 / 9.3: (-0.30225, 0.34875) and (-0.34875, 0.30225)) all fall in cell
 * (6, 13), with pixel (1, 1)'s ground point. min_points 1, top_fraction 0: need = 1, the
 * top is the 1.9 m point's bin 9 at rank 0.5 of 1: (10 - 0.5) * 0.2 = 1.9 m. Bands: the
 * two 0.7 m points in the second (0.6-1.0 m: 2 << 8), the 1.9 m point above the fourth;
 * support 0 | 3 << 16 (no point 0.2-0.6 m; three from 0.2 m up). With (0, 0) at 1.1 m
 * instead (d = 200 / 8.9: (-0.33375, 0.33375), the same cell) the top is 1.1 m
 * ((6 - 0.5) * 0.2) and that point is in the third band: 2 << 8 | 1 << 16. */
static void
test_fusion_lower(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  HeightmapFusionParams fp = { .label = "lower", .min_points = 1, .top_fraction = 0,
                               .min_confidence = 0 };
  g_autoptr(HeightmapFusion) f = hand_fusion(ctx, &fp);
  g_autoptr(GError) error = NULL;
  const HeightmapPairGeometry g = hand_camera();
  enum { W = 16 };
  int16_t d[W * W];
  const double top[] = { 1.9, 1.1 };
  const double expect_h[] = { 1.9, 1.1 };
  const uint32_t expect_bands[] = { 2u << 8, 2u << 8 | 1u << 16 };
  float h[400];
  for (unsigned r = 0; r < G_N_ELEMENTS(top); r++) {
    for (int i = 0; i < W * W; i++)
      d[i] = 20 * 32;
    d[0] = (int16_t) lround(200.0 / (10.0 - top[r]) * 32);
    d[1] = d[W] = (int16_t) lround(200.0 / 9.3 * 32);
    HeightmapInput in = { .width = W, .height = W, .disparity = d, .disparity_stride = W * 2,
                          .disparity_size = sizeof d, .disparity_scale = 1.0 / 32 };
    g_assert_true(heightmap_fusion_begin(f, &error));
    g_assert_true(heightmap_fusion_add(f, 3, &g, &in, &error));
    g_assert_true(heightmap_fusion_finish(f, h, NULL, &error));
    g_assert_no_error(error);
    g_assert_cmpfloat_with_epsilon(h[13 * 20 + 6], expect_h[r], 2e-3);
    const uint32_t *bands = heightmap_fusion_get_lower(f);
    const uint32_t *s = heightmap_fusion_get_support(f);
    for (int c = 0; c < 400; c++)
      g_assert_cmphex(bands[c], ==, c == 13 * 20 + 6 ? expect_bands[r] : 0u);
    g_assert_cmphex(s[13 * 20 + 6], ==, 3u << 16);
  }
}

/* Inputs that claim more than they hold, as a hostile ring's frame would: each one is
 * refused with an error before anything is uploaded (the buffers are heap blocks of
 * exactly their size, so that a read past one is an ASan error in that build), the
 * context is not failed, and the next good input is fused as if nothing had happened.
 * The same for gpu_image_upload_sized, the upload entry point the fusion goes through. */
static void
test_fusion_bounds(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  HeightmapFusionParams fp = { .label = "bounds", .min_points = 2, .top_fraction = 0.1 };
  g_autoptr(HeightmapFusion) f = hand_fusion(ctx, &fp);
  g_autoptr(GError) error = NULL;
  const HeightmapPairGeometry g = hand_camera();
  enum { W = 16 };
  g_autofree int16_t *d = g_new(int16_t, W * W);
  g_autofree uint8_t *conf = g_new(uint8_t, W * W);
  for (int i = 0; i < W * W; i++) {
    d[i] = 20 * 32;
    conf[i] = 200;
  }
  const HeightmapInput good = { .width = W, .height = W, .disparity = d,
                                .disparity_stride = W * 2, .disparity_size = W * W * 2,
                                .disparity_scale = 1.0 / 32, .confidence = conf,
                                .confidence_stride = W, .confidence_size = W * W };
  /* 40000 px is over GL_MAX_TEXTURE_SIZE everywhere (32768 on the largest GPUs) */
  g_autofree int16_t *wide = g_new0(int16_t, 40000);
  HeightmapInput bad[8];
  for (int k = 0; k < 8; k++)
    bad[k] = good;
  bad[0].disparity_stride = W * 4;            /* rows twice as far apart as the data */
  bad[1].width = W + 1;                       /* wider than the rows */
  bad[1].disparity_stride = (W + 1) * 2;
  bad[2].height = W * 2;                      /* more rows than there are */
  bad[3].confidence_stride = W * 3;           /* the confidence's rows */
  bad[4].disparity_stride = W * 2 - 2;        /* rows overlapping */
  bad[5].width = 0;
  bad[6].disparity_scale = NAN;
  bad[7] = (HeightmapInput) { .width = 40000, .height = 1, .disparity = wide,
                              .disparity_stride = 80000, .disparity_size = 80000,
                              .disparity_scale = 1.0 / 32 };
  float h[400];
  for (int k = 0; k < 8; k++) {
    g_assert_true(heightmap_fusion_begin(f, &error));
    g_assert_false(heightmap_fusion_add(f, 2, &g, &bad[k], &error));
    g_assert_nonnull(error);
    g_assert_true(g_error_matches(error, k == 7 ? GPU_ERROR : G_IO_ERROR,
                                  k == 7 ? GPU_ERROR_LIMIT : G_IO_ERROR_INVALID_DATA));
    g_test_message("input %d refused: %s", k, error->message);
    g_clear_error(&error);
    g_assert_false(gpu_context_is_failed(ctx));
    /* nothing of the refused input was scattered, and a good one still is */
    g_assert_true(heightmap_fusion_finish(f, h, NULL, &error));
    g_assert_no_error(error);
    for (int i = 0; i < 400; i++)
      g_assert_true(isnan(h[i]));
    g_assert_true(heightmap_fusion_begin(f, &error));
    g_assert_true(heightmap_fusion_add(f, 2, &g, &good, &error));
    g_assert_true(heightmap_fusion_finish(f, h, NULL, &error));
    g_assert_no_error(error);
    /* 4 ground points, need 2: (1 - 1.5 / 4) * 0.2 (test_fusion_hand) */
    g_assert_cmpfloat_with_epsilon(h[10 * 20 + 10], 0.125, 1e-5);
  }

  /* the upload entry point on its own */
  GpuImageParams ip = { .label = "bounds", .width = W, .height = W, .format = GPU_FORMAT_R16I };
  g_autoptr(GpuImage) img = gpu_image_new(ctx, &ip, &error);
  g_assert_no_error(error);
  const size_t sizes[] = { W * W * 2 - 1, 0 }, strides[] = { W * 2 + 2, W * 2 - 2, W * 2 + 1 };
  for (unsigned k = 0; k < G_N_ELEMENTS(sizes); k++) {
    g_assert_false(gpu_image_upload_sized(img, 0, d, sizes[k], W * 2, &error));
    g_assert_error(error, GPU_ERROR, GPU_ERROR_LIMIT);
    g_clear_error(&error);
  }
  for (unsigned k = 0; k < G_N_ELEMENTS(strides); k++) {
    g_assert_false(gpu_image_upload_sized(img, 0, d, W * W * 2, strides[k], &error));
    g_assert_error(error, GPU_ERROR, GPU_ERROR_LIMIT);
    g_clear_error(&error);
  }
  /* a padded stride: exactly stride * (H - 1) + row bytes are enough, and are what is read */
  const size_t stride = W * 2 + 6, size = stride * (W - 1) + W * 2;
  g_autofree uint8_t *padded = g_malloc(size);
  for (int y = 0; y < W; y++)
    memcpy(padded + y * stride, d + y * W, W * 2);
  g_assert_true(gpu_image_upload_sized(img, 0, padded, size, stride, &error));
  g_assert_no_error(error);
  g_assert_false(gpu_image_upload_sized(img, 0, padded, size - 1, stride, &error));
  g_assert_error(error, GPU_ERROR, GPU_ERROR_LIMIT);
  g_clear_error(&error);
  g_autofree int16_t *back = g_new(int16_t, W * W);
  g_assert_true(gpu_image_download(img, 0, back, W * 2, &error));
  g_assert_no_error(error);
  g_assert_cmpmem(back, W * W * 2, d, W * W * 2);
  g_assert_false(gpu_context_is_failed(ctx));
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  rng = test_seeded_rand();
  g_test_add_func("/heightmap/quaternion", test_quaternion);
  g_test_add_func("/heightmap/formula", test_formula);
  g_test_add_func("/heightmap/triangulate-gpu", test_triangulate_gpu);
  g_test_add_func("/heightmap/fusion-hand", test_fusion_hand);
  g_test_add_func("/heightmap/fusion-far-pool", test_fusion_far_pool);
  g_test_add_func("/heightmap/fusion-lower", test_fusion_lower);
  g_test_add_func("/heightmap/fusion-bounds", test_fusion_bounds);
  int r = g_test_run();
  g_rand_free(rng);
  return r;
}
