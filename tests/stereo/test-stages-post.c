/* test-stages-post.c: the post-processing passes (§10: L-R check, median, densify, pack)
 * and the rectification (§0) against the double-precision reference (stages-fixture.h).
 * The sorting networks of the medians are proven by kernels/shaders/gen-sortnet.py
 * --check (test sortnet).
 */
#include <math.h>
#include <string.h>

#include "tests/common/gpu-test.h"
#include "tests/stereo/stages-fixture.h"

/* Fields for the post-processing whose every decision is at least 1e-3 from its
 * threshold in double (certainty against c_min, sigma_d against sigma_d_max, the L-R
 * difference against lr_max, x - dL against the image's ends), so that fp32 and double
 * must agree on all of them; L-R consistency holds for about half of the pixels. Values
 * are floats (what the GPU gets). With `keep_r` the right view's d is given (fr). */
static void
post_fields(const StereoParams *p, int w, int h, RefImage *fl, RefImage *fr, bool keep_r)
{
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      double *l = ref_image_at(fl, x, y), *r = ref_image_at(fr, x, y);
      l[REF_D] = (float)(6.0 + 4.0 * sin(0.1 * x + 0.2 * y) + g_rand_double_range(stages_rng, -0.3, 0.3));
      if (!keep_r)
        r[REF_D] = (float)(6.0 + 4.0 * sin(0.1 * (x + 6) + 0.2 * y) +
                           (g_rand_double(stages_rng) < 0.5
                              ? 0.0 : g_rand_double_range(stages_rng, -3, 3)));
      l[REF_CERT] = g_rand_double(stages_rng) < 0.1 ? 0.0 : (float)g_rand_double_range(stages_rng, 0.03, 1.0);
      do
        l[REF_SIGMA] = (float)g_rand_double_range(stages_rng, 0.0, 1.3);
      while (fabs(l[REF_SIGMA] - p->sigma_d_max) < 1e-3);
      r[REF_CERT] = 0.5;
    }
  for (int round = 0;; round++) {
    int moved = 0;
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        double *l = ref_image_at(fl, x, y);
        double xr = x - l[REF_D];
        bool near = fabs(xr) < 1e-3 || fabs(xr - (w - 1)) < 1e-3;
        if (!near && xr >= 0 && xr <= w - 1) {
          int i0 = (int)floor(xr), i1 = MIN(i0 + 1, w - 1);
          double f = xr - i0;
          double dr = (1 - f) * ref_image_at(fr, i0, y)[REF_D] + f * ref_image_at(fr, i1, y)[REF_D];
          near = fabs(fabs(l[REF_D] - dr) - p->lr_max) < 1e-3;
        }
        if (p->ground_margin >= 0.0)   /* the pitch-plane prior's bound */
          near = near || fabs(l[REF_D] - stereo_ground_bound(p->ground, p->ground_margin, 1,
                                                              0, x, y)) < 1e-3;
        /* moved by a step that grows with the rounds: where the right view's disparity
         * falls about as fast as this one rises, |d - dr| hardly changes with small steps
         * (seed 1286719367 needed 74 rounds of the fixed step) */
        if (near) {
          l[REF_D] = (float)(l[REF_D] + (1 + round) * g_rand_double_range(stages_rng, 0.005,
                                                                           0.02));
          moved++;
        }
      }
    if (!moved)
      break;
    g_assert_cmpint(round, <, 40);
  }
}

/* The level-0 d that the coarse fallback gives pixel (x, y) of the left view (the
 * reference's rule, in double), with its level in *level; FALSE when none. */
static bool
fallback_pick(const StereoParams *p, RefImage *const *fb, int x, int y, double *d, int *level)
{
  for (int s = 1; s <= stereo_params_fallback_levels(p); s++) {
    const double *c = ref_image_at(fb[s - 1], x >> s, y >> s);
    if (c[REF_CERT] >= p->c_min && c[REF_D] * p->coarse_fallback >= 1.0) {
      *d = (1 << s) * c[REF_D];
      *level = s;
      return true;
    }
  }
  return false;
}

/* The coarse fallback's fields of levels 1 .. n (the left view, level px, floats): d in
 * 2..7 level px, so that coarse_fallback 0.25 (d >= 4) takes about 3/5 of them, a third
 * unmeasured; then the d of a field pixel that some level-0 pixel takes is moved until
 * that pixel's decisions (the L-R check against fr, x - d against the image's ends) are
 * at least 1e-3 from their thresholds, and every d at least 1e-3 from 4. */
static void
fallback_fields(const StereoParams *p, int w, int h, const RefImage *fl, const RefImage *fr,
                RefImage **fb)
{
  int n = stereo_params_fallback_levels(p);
  for (int s = 1; s <= n; s++) {
    int ws, hs;
    stereo_params_level_size(p, s, &ws, &hs);
    fb[s - 1] = ref_image_new(ws, hs, REF_FIELD_CHANNELS);
    for (int y = 0; y < hs; y++)
      for (int x = 0; x < ws; x++) {
        double *c = ref_image_at(fb[s - 1], x, y);
        do
          c[REF_D] = (float)g_rand_double_range(stages_rng, 2.0, 7.0);
        while (fabs(c[REF_D] - 4.0) < 1e-3);
        c[REF_CERT] = g_rand_double(stages_rng) < 0.33
                        ? 0.0 : (float)g_rand_double_range(stages_rng, 0.03, 1.0);
        c[REF_SIGMA] = (float)g_rand_double_range(stages_rng, 0.0, 2.0);
      }
  }
  for (int round = 0;; round++) {
    int moved = 0;
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        double d;
        int s;
        if (ref_image_at(fl, x, y)[REF_CERT] >= p->c_min || !fallback_pick(p, fb, x, y, &d, &s))
          continue;
        double xr = x - d;
        bool near = fabs(xr) < 1e-3 || fabs(xr - (w - 1)) < 1e-3;
        if (!near && fr && xr >= 0 && xr <= w - 1) {
          int i0 = (int)floor(xr), i1 = MIN(i0 + 1, w - 1);
          double f = xr - i0;
          double dr = (1 - f) * ref_image_at(fr, i0, y)[REF_D] + f * ref_image_at(fr, i1, y)[REF_D];
          near = fabs(fabs(d - dr) - p->lr_max) < 1e-3;
        }
        if (p->ground_margin >= 0.0)
          near = near || fabs(d - stereo_ground_bound(p->ground, p->ground_margin, 1, 0, x, y)) <
                           1e-3;
        if (near) {
          double *c = ref_image_at(fb[s - 1], x >> s, y >> s);
          c[REF_D] = (float)(c[REF_D] + (1 + round) * g_rand_double_range(stages_rng, 0.005, 0.02));
          moved++;
        }
      }
    g_assert_cmpint(round, <, 40);
    if (!moved)
      break;
  }
}

/* Validity, 3x3 median and row fill (one pass), then the 9x3 median of the filled pixels
 * and the packing (the pack pass), two pairs in one dispatch, against ref_post. With
 * the decisions away from their thresholds (post_fields) and 8-bit intensities (the
 * densify margin is half a level off any step), every disparity must be the same float
 * (medians and fills select values) and every pixel in the same class (invalid, filled,
 * measured); the confidence within 1 (k in fp32). Four configurations. With `coarse` the
 * L-R check reads the right view from a level-1 state (STEREOD_LR_LEVEL=1): the
 * reference gets it 2 x bilinear at level 0, and level 0's right-view layers hold NaN.
 * With `fallback` the coarse fallback (coarse_fallback 0.25) reads random fields of levels
 * 1 and 2 (fallback_fields; level 1 only with `coarse`). With `ground` the pitch-plane
 * prior (§5c) invalidates the pixels below a random plane's bound, which crosses the
 * fields' disparities: it must cut some that are valid without it. */
static void
post_case(bool median, bool densify, bool lr_check, bool coarse, bool fallback, bool ground)
{
  const int w = fallback ? 97 : 81, h = fallback ? 71 : 47, pairs = 2;
  const int wc = (w + 1) / 2, hc = (h + 1) / 2;
  Fixture f;
  fixture_setup(&f, w, h);
  if (!f.ctx)
    return;
  f.p.median = median;
  f.p.densify = densify;
  f.p.lr_check = lr_check;
  if (coarse) {
    f.p.refine = false;   /* the refinement runs both views at level 0 */
    f.p.levels = 2;       /* a level above 0 (this size alone gets one level) */
  }
  if (fallback) {
    f.p.levels = coarse ? 2 : 3;
    f.p.search_level = -1;   /* the phase starts on the coarsest level: 1 or 2 */
    f.p.coarse_fallback = 0.25;
    g_assert_cmpint(stereo_params_fallback_levels(&f.p), ==, coarse ? 1 : 2);
  }
  if (ground) {   /* the bound 3..4.5 px at the centre, tilted */
    f.p.ground_margin = g_rand_double_range(stages_rng, 0.0, 1.0);
    f.p.ground[0] = g_rand_double_range(stages_rng, -0.03, 0.03);
    f.p.ground[1] = g_rand_double_range(stages_rng, -0.05, 0.05);
    f.p.ground[2] = g_rand_double_range(stages_rng, 3.0, 4.5) + f.p.ground_margin -
                    0.5 * f.p.ground[0] * w - 0.5 * f.p.ground[1] * h;
  }
  g_autoptr(GpuBuffer) layers = layer_params_ground(f.ctx, 2, NULL, 0.0, f.p.ground);
  int n_fb = stereo_params_fallback_levels(&f.p);
  GError *error = NULL;
  g_autofree char *saved_lr = g_strdup(g_getenv("STEREOD_LR_LEVEL"));
  gpu_test_setenv("STEREOD_LR_LEVEL", coarse ? NULL : "0");
  g_autoptr(StereoPasses) ps = stereo_passes_new(f.ctx, &f.p, &error);
  gpu_test_setenv("STEREOD_LR_LEVEL", saved_lr);
  g_assert_no_error(error);
  g_assert_cmpint(stereo_passes_lr_coarse(ps), ==, coarse);
  GpuImageParams cp = { .label = "coarse", .width = wc, .height = hc, .layers = pairs * 2,
                        .format = GPU_FORMAT_RGBA32F };
  g_autoptr(GpuImage) coarse_img = coarse ? gpu_image_new(f.ctx, &cp, &error) : NULL;
  g_assert_no_error(error);
  int dirs = lr_check ? 2 : 1;
  GpuImageParams sp = { .label = "state", .width = w, .height = h, .layers = pairs * dirs,
                        .format = GPU_FORMAT_RGBA32F };
  g_autoptr(GpuImage) state = gpu_image_new(f.ctx, &sp, &error);
  sp.layers = pairs;
  sp.format = GPU_FORMAT_RG32F;
  g_autoptr(GpuImage) inten = gpu_image_new(f.ctx, &sp, &error);
  sp.format = GPU_FORMAT_RGBA32F;
  g_autoptr(GpuImage) post = gpu_image_new(f.ctx, &sp, &error);
  sp.format = GPU_FORMAT_R32F;
  g_autoptr(GpuImage) med = gpu_image_new(f.ctx, &sp, &error);
  g_assert_no_error(error);
  StereoPackLayout layout;
  stereo_pack_layout(w, h, false, false, &layout);
  g_autoptr(GpuBuffer) out = storage_buffer(f.ctx, "packed", pairs * layout.layer_bytes);
  size_t n = (size_t)w * h;
  RefImage *fl[pairs], *fr[pairs], *ir[pairs], *fb[pairs][STEREO_MAX_FALLBACK_LEVELS];
  GpuImage *fb_img[STEREO_MAX_FALLBACK_LEVELS] = { NULL };
  for (int s = 1; s <= n_fb; s++) {
    int ws, hs;
    stereo_params_level_size(&f.p, s, &ws, &hs);
    GpuImageParams fp = { .label = "fallback", .width = ws, .height = hs,
                          .layers = pairs * (lr_check ? 2 : 1), .format = GPU_FORMAT_RGBA32F };
    fb_img[s - 1] = gpu_image_new(f.ctx, &fp, &error);
    g_assert_no_error(error);
  }
  g_autofree float *buf = g_new0(float, n * 4);
  for (int k = 0; k < pairs; k++) {
    fl[k] = ref_image_new(w, h, REF_FIELD_CHANNELS);
    fr[k] = ref_image_new(w, h, REF_FIELD_CHANNELS);
    if (coarse) {
      /* the right view at level 1 (level-1 px), and at level 0 what post.comp reads of
       * it: 2 x bilinear at (x / 2, y / 2), in floats as the shader adds them */
      g_autofree float *c = g_new0(float, 4 * (size_t)wc * hc);
      for (int y = 0; y < hc; y++)
        for (int x = 0; x < wc; x++)
          c[4 * (y * wc + x)] = (float)(3.0 + 2.0 * sin(0.1 * (2 * x + 6) + 0.4 * y) +
                                        (g_rand_double(stages_rng) < 0.5 ? 0.0
                                         : g_rand_double_range(stages_rng, -1.5, 1.5)));
      g_assert_true(gpu_image_upload(coarse_img, 2 * k + 1, c, (size_t)wc * 16, &error));
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
          int y0 = y >> 1, y1 = MIN(y0 + (y & 1), hc - 1);
          int x0 = x >> 1, x1 = MIN(x0 + 1, wc - 1);
          float fx = (x & 1) ? 0.5f : 0.0f;
          float a = c[4 * (y0 * wc + x0)] * (1.0f - fx) + c[4 * (y0 * wc + x1)] * fx;
          float b = c[4 * (y1 * wc + x0)] * (1.0f - fx) + c[4 * (y1 * wc + x1)] * fx;
          ref_image_at(fr[k], x, y)[REF_D] = (double)(a + b);
        }
    }
    post_fields(&f.p, w, h, fl[k], fr[k], coarse);
    if (fallback) {
      fallback_fields(&f.p, w, h, fl[k], lr_check ? fr[k] : NULL, fb[k]);
      for (int s = 1; s <= n_fb; s++) {
        int ws = fb[k][s - 1]->w, hs = fb[k][s - 1]->h;
        g_autofree float *c = g_new(float, 4 * (size_t)ws * hs);
        for (size_t i = 0; i < (size_t)ws * hs; i++) {
          for (int ch = 0; ch < 3; ch++)
            c[4 * i + ch] = (float)fb[k][s - 1]->data[3 * i + ch];
          c[4 * i + 3] = 1.0f;
        }
        g_assert_true(gpu_image_upload(fb_img[s - 1], k * (lr_check ? 2 : 1), c,
                                       (size_t)ws * 16, &error));
      }
    }
    for (int side = 0; side < dirs; side++) {
      const RefImage *fs = side ? fr[k] : fl[k];
      for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++)
          buf[4 * i + c] = side && coarse ? NAN : (float)fs->data[3 * i + c];
      g_assert_true(gpu_image_upload(state, k * dirs + side, buf, (size_t)w * 16, &error));
    }
    /* Level-0 intensity for the densify side choice: 8-bit values, as the ingest makes. */
    ir[k] = ref_image_new(w, h, 1);
    for (size_t i = 0; i < n; i++) {
      ir[k]->data[i] = (float)(g_rand_int_range(stages_rng, 0, 256) / 255.0);
      buf[2 * i] = (float)ir[k]->data[i];
      buf[2 * i + 1] = 0.0f;
    }
    g_assert_true(gpu_image_upload(inten, k, buf, (size_t)w * 8, &error));
  }
  poison(post);
  poison(med);
  g_assert_true(gpu_buffer_fill_u32(out, 0xdeadbeefu, &error));
  stereo_passes_set_layer_params(ps, layers);
  stereo_pass_post(ps, state, inten, post, coarse ? coarse_img : NULL,
                   fallback ? fb_img : NULL);
  stereo_pass_pack(ps, post, med, out, &layout, layers);
  g_autofree uint8_t *packed = g_malloc(pairs * layout.layer_bytes);
  g_assert_true(gpu_buffer_read(out, 0, packed, pairs * layout.layer_bytes, &error));
  g_autofree float *rd = g_new(float, n);
  g_autofree uint8_t *rc = g_new(uint8_t, n);
  for (int k = 0; k < pairs; k++) {
    ref_post(&f.p, fl[k], lr_check ? fr[k] : NULL, fallback ? (const RefImage *const *)fb[k] : NULL,
             ir[k], rd, rc);
    const float *gd = (const float *)(packed + k * layout.layer_bytes);
    const uint8_t *gc = packed + k * layout.layer_bytes + layout.conf_offset;
    int valid = 0, filled = 0, conf_off = 0;
    for (size_t i = 0; i < n; i++) {
      g_assert_cmpint(isnan(gd[i]), ==, isnan(rd[i]));
      if (!isnan(rd[i]))
        g_assert_cmpfloat(gd[i], ==, rd[i]);
      g_assert_cmpint(gc[i] == 0, ==, rc[i] == 0);
      g_assert_cmpint(gc[i] >= 128, ==, rc[i] >= 128);
      g_assert_cmpint(abs((int)gc[i] - (int)rc[i]), <=, 1);
      conf_off += gc[i] != rc[i];
      valid += rc[i] >= 128;
      filled += rc[i] > 0 && rc[i] < 128;
    }
    int cut = 0;   /* the pixels valid without the pitch-plane prior and not with it */
    if (ground) {
      StereoParams q = f.p;
      q.ground_margin = -1.0;
      g_autofree bool *v0 = g_new(bool, n), *v1 = g_new(bool, n);
      g_autofree double *d0 = g_new(double, n), *d1 = g_new(double, n);
      ref_post_valid(&q, fl[k], lr_check ? fr[k] : NULL,
                     fallback ? (const RefImage *const *)fb[k] : NULL, d0, v0);
      ref_post_valid(&f.p, fl[k], lr_check ? fr[k] : NULL,
                     fallback ? (const RefImage *const *)fb[k] : NULL, d1, v1);
      for (size_t i = 0; i < n; i++)
        cut += v0[i] && !v1[i];
      g_assert_cmpint(cut, >, n / 20);
    }
    int taken = 0;   /* the pixels level 0 did not measure that a coarser level gives a d */
    for (int y = 0; fallback && y < h; y++)
      for (int x = 0; x < w; x++) {
        double d;
        int s;
        taken += ref_image_at(fl[k], x, y)[REF_CERT] < f.p.c_min &&
                 fallback_pick(&f.p, fb[k], x, y, &d, &s);
      }
    g_test_message("post (median %d, densify %d, L-R %d%s%s%s) pair %d: %d measured, %d "
                   "filled of %zu, %d confidences 1 apart, %d from a coarser level, %d below "
                   "the ground", median, densify, lr_check, coarse ? " against level 1" : "",
                   fallback ? ", fallback" : "", ground ? ", ground" : "", k, valid, filled, n,
                   conf_off, taken, cut);
    if (fallback)
      g_assert_cmpint(taken, >, n / 40);
    for (int s = 0; fallback && s < n_fb; s++)
      ref_image_free(fb[k][s]);
    g_assert_cmpint(valid, >, ground ? n / 10 : n / 5);
    g_assert_cmpint(valid, <, (int)n - 10);
    if (densify)
      g_assert_cmpint(filled, >, n / 20);
    else
      g_assert_cmpint(filled, ==, 0);
    ref_image_free(fl[k]);
    ref_image_free(fr[k]);
    ref_image_free(ir[k]);
  }
  for (int s = 0; s < n_fb; s++)
    gpu_image_free(fb_img[s]);
  g_clear_pointer(&state, gpu_image_free);
  g_clear_pointer(&inten, gpu_image_free);
  g_clear_pointer(&post, gpu_image_free);
  g_clear_pointer(&out, gpu_buffer_free);
  g_clear_pointer(&layers, gpu_buffer_free);
  g_clear_pointer(&ps, stereo_passes_free);
  fixture_teardown(&f);
}

/* Both forms of the row fill's scans (post.comp: the grouped scans, the default, and
 * the Hillis-Steele scans of STEREOD_POST_SCAN=hs), each with the invocations a row of the
 * image's width (64: two groups of 32) and with 1024 (32 groups). */
static void
test_post(void)
{
  g_autofree char *saved_scan = g_strdup(g_getenv("STEREOD_POST_SCAN"));
  g_autofree char *saved_threads = g_strdup(g_getenv("STEREOD_POST_THREADS"));
  static const char *const scans[] = { "hs", "grouped" };
  for (int s = 0; s < 2; s++)
    for (int wide = 0; wide < 2; wide++) {
      g_setenv("STEREOD_POST_SCAN", scans[s], TRUE);
      gpu_test_setenv("STEREOD_POST_THREADS", wide ? "1024" : NULL);
      g_test_message("row fill scans: %s, %s invocations a row", scans[s],
                     wide ? "1024" : "the default");
      post_case(true, true, true, false, false, false);
      post_case(false, true, true, false, false, false);
      post_case(true, false, true, false, false, false);
      post_case(true, true, false, false, false, false);
      post_case(true, true, true, true, false, false);
      post_case(true, true, true, false, true, false);
      post_case(false, false, true, true, true, false);
      post_case(true, true, true, true, true, true);   /* the stadium setting's checks */
    }
  gpu_test_setenv("STEREOD_POST_SCAN", saved_scan);
  gpu_test_setenv("STEREOD_POST_THREADS", saved_threads);
}

/* A calibration with a random lens of OpenCV's `model` (5, 8, 12 or 14 coefficients) on
 * each side, rectifying rotations and raw principal points 0.1 w off centre (left
 * camera to the right, right camera to the left). The coefficients keep the radial
 * factor within 0.91..1.1 at r^2 <= 0.5 (the rectified corners) and the other terms
 * under ~1.3 px, so the last column of the left view and the first of the right view map
 * more than 1.5 px outside their raw images: the border rule is always exercised (about
 * a fifth of the pixels have a tap outside), the rest of each view is inside. */
static void
random_calib(StereoCalib *c, int w, int h, int model)
{
  const double rot[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 }, centre[3] = { 0, 0, 10 };
  double f = 0.9 * w;
  calib_init_ideal(c, w, h, 0.95 * f, 0.5 * w + 1.7, 0.5 * h - 2.3, 0.5, NULL, rot, centre);
  for (int side = 0; side < 2; side++) {
    double *K = side ? c->K_right : c->K_left, *D = side ? c->dist_right : c->dist_left;
    K[0] = f * g_rand_double_range(stages_rng, 0.99, 1.01);
    K[4] = K[0] * g_rand_double_range(stages_rng, 0.99, 1.01);
    K[2] = (side ? 0.4 : 0.6) * w + g_rand_double_range(stages_rng, -1, 1);
    K[5] = 0.5 * h + g_rand_double_range(stages_rng, -3, 3);
    const double range[CALIB_DIST_COUNT] = { 0.08, 0.02, 0.002, 0.002, 0.01, 0.08, 0.02, 0.01,
                                             0.003, 0.003, 0.003, 0.003, 0.03, 0.03 };
    for (int i = 0; i < model; i++)
      D[i] = g_rand_double_range(stages_rng, -range[i], range[i]);
  }
  double a = g_rand_double_range(stages_rng, -0.015, 0.015);
  double b = g_rand_double_range(stages_rng, -0.02, 0.02);
  double r1[9] = { cos(a), 0, sin(a), 0, 1, 0, -sin(a), 0, cos(a) };
  double r2[9] = { 1, 0, 0, 0, cos(b), -sin(b), 0, sin(b), cos(b) };
  memcpy(c->R1, r1, sizeof r1);
  memcpy(c->R2, r2, sizeof r2);
  GError *error = NULL;
  g_assert_true(calib_validate(c, &error));
  g_assert_cmpint(calib_dist_model(c->dist_left), ==, model);
}

/* Rectification (§0) with each of OpenCV's distortion models, and the level-1 reduce, in
 * the ingest pass: the engine's map (calib_rectified_to_raw, stored in fp32) sampled by
 * the GPU against the reference (ref_rectified_to_raw in double, bilinear in double).
 * Intensities are in [0, 1], so the bilinear sample moves by at most 1 per px of position
 * per axis; fp32 rounds positions within (-128, 128) px by <= 3.8e-6 px per axis, fp32
 * weights add ~1e-7: 1e-5, also after the 5 x 5 reduce (weights summing to 1). Two batch
 * positions in one dispatch with two calibrations of the model: position 0 rectifies with
 * the map of pair 1 and position 1 with that of pair 0 (the per-batch indirection). */
static void
test_rectify(void)
{
  const int w = 97, h = 61, w1 = 49, h1 = 31;
  Fixture f;
  fixture_setup(&f, w, h);
  if (!f.ctx)
    return;
  size_t n = (size_t)w * h;
  GError *error = NULL;
  GpuImageParams ip = { .label = "raw", .width = w, .height = h, .layers = 4,
                        .format = GPU_FORMAT_R8 };
  g_autoptr(GpuImage) raw8 = gpu_image_new(f.ctx, &ip, &error);
  GpuImageParams mp = { .label = "map", .width = w, .height = h, .layers = 4,
                        .format = GPU_FORMAT_RG32F };
  g_autoptr(GpuImage) map = gpu_image_new(f.ctx, &mp, &error);
  GpuImageParams dp = { .label = "level0", .width = w, .height = h, .layers = 2,
                        .format = GPU_FORMAT_RG32F };
  g_autoptr(GpuImage) dst = gpu_image_new(f.ctx, &dp, &error);
  dp.label = "level1";
  dp.width = w1;
  dp.height = h1;
  g_autoptr(GpuImage) dst1 = gpu_image_new(f.ctx, &dp, &error);
  g_assert_no_error(error);
  g_autoptr(GpuBuffer) layers = layer_params(f.ctx, 2, (int[]){ 1, 0 }, 0.0);
  g_autofree uint8_t *raw = g_new(uint8_t, 4 * n);
  g_autofree float *uv = g_new(float, 2 * n);
  static const int models[] = { 5, 8, 12, 14 };
  for (gsize m = 0; m < G_N_ELEMENTS(models); m++) {
    StereoCalib calib[2];
    for (size_t i = 0; i < 4 * n; i++)
      raw[i] = (uint8_t)g_rand_int_range(stages_rng, 0, 256);
    for (int l = 0; l < 4; l++)
      g_assert_true(gpu_image_upload(raw8, l, raw + l * n, w, &error));
    int outside[2] = { 0, 0 };
    for (int pair = 0; pair < 2; pair++) {
      random_calib(&calib[pair], w, h, models[m]);
      for (int side = 0; side < 2; side++) {
        for (int y = 0; y < h; y++)
          for (int x = 0; x < w; x++) {
            double u, v;
            calib_rectified_to_raw(&calib[pair], side ? CALIB_RIGHT : CALIB_LEFT, x, y, &u, &v);
            g_assert_cmpfloat(fabs(u), <, 128.0);
            g_assert_cmpfloat(fabs(v), <, 128.0);
            uv[2 * (y * w + x)] = (float)u;
            uv[2 * (y * w + x) + 1] = (float)v;
            outside[side] += u < 0 || v < 0 || u > w - 1 || v > h - 1;
          }
        g_assert_true(gpu_image_upload(map, 2 * pair + side, uv, (size_t)w * 8, &error));
      }
    }
    g_assert_cmpint(outside[0], >=, 2 * h);   /* the border rule is exercised */
    g_assert_cmpint(outside[1], >=, 2 * h);
    poison(dst);
    poison(dst1);
    stereo_pass_ingest(f.ps, raw8, map, dst, dst1, layers);
    for (int pos = 0; pos < 2; pos++) {
      const StereoCalib *c = &calib[1 - pos];   /* position 0 uses pair 1's map */
      g_autofree float *out = download_layer(dst, pos);
      g_autofree float *out1 = download_layer(dst1, pos);
      check_all_finite(out, 2 * n, "rectify");
      check_all_finite(out1, 2 * (size_t)w1 * h1, "rectify level 1");
      g_autoptr(RefImage) rl = ref_rectify(c, CALIB_LEFT, raw + 2 * pos * n, w);
      g_autoptr(RefImage) rr = ref_rectify(c, CALIB_RIGHT, raw + (2 * pos + 1) * n, w);
      g_autoptr(RefImage) rl1 = ref_reduce(rl);
      g_autoptr(RefImage) rr1 = ref_reduce(rr);
      double max_err = 0, max_err1 = 0;
      for (size_t i = 0; i < n; i++) {
        max_err = MAX(max_err, fabs(out[2 * i] - rl->data[i]));
        max_err = MAX(max_err, fabs(out[2 * i + 1] - rr->data[i]));
      }
      for (int i = 0; i < w1 * h1; i++) {
        max_err1 = MAX(max_err1, fabs(out1[2 * i] - rl1->data[i]));
        max_err1 = MAX(max_err1, fabs(out1[2 * i + 1] - rr1->data[i]));
      }
      g_test_message("rectify, %d coefficients, position %d: %d + %d px outside, max abs "
                     "error %.3g, level 1 %.3g", models[m], pos, outside[0], outside[1],
                     max_err, max_err1);
      g_assert_cmpfloat(max_err, <, 1e-5);
      g_assert_cmpfloat(max_err1, <, 1e-5);
    }
  }
  fixture_teardown(&f);
}

int
main(int argc, char **argv)
{
  stages_init(&argc, &argv);
  g_test_add_func("/stages/post", test_post);
  g_test_add_func("/stages/rectify", test_rectify);
  return stages_run();
}
