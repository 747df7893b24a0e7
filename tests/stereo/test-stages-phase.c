/* test-stages-phase.c: the fused round of the phase stage (terms, applicability filter,
 * solve; the prior from the same level or upsampled from the coarser one; the §5b
 * guard) and the fused hole fill, each against the double-precision reference
 * (stages-fixture.h), both directions and several pairs in one dispatch.
 */
#include <math.h>
#include <string.h>

#include "tests/common/gpu-test.h"
#include "tests/stereo/stages-fixture.h"

static GpuImage *
layered_image(GpuContext *ctx, int w, int h, int layers, GpuFormat fmt)
{
  GError *error = NULL;
  GpuImageParams ip = { .label = "test", .width = w, .height = h, .layers = layers,
                        .format = fmt };
  GpuImage *img = gpu_image_new(ctx, &ip, &error);
  g_assert_no_error(error);
  return img;
}

/* Uploads channel REF_D of `field` (and optionally all three field channels plus v) to
 * one layer of an RGBA32F state image. */
static void
upload_state(GpuImage *img, int layer, const RefImage *field, bool full)
{
  int w = field->w, h = field->h;
  g_autofree float *buf = g_new0(float, (size_t)w * h * 4);
  for (int i = 0; i < w * h; i++) {
    const double *f = field->data + (size_t)i * field->ch;
    buf[4 * i] = (float)f[REF_D];
    if (full) {
      buf[4 * i + 1] = (float)f[REF_CERT];
      buf[4 * i + 2] = (float)f[REF_SIGMA];
      buf[4 * i + 3] = f[REF_CERT] > 0 ? 1.0f : 0.0f;
    }
  }
  GError *error = NULL;
  g_assert_true(gpu_image_upload(img, layer, buf, (size_t)w * 16, &error));
  g_assert_no_error(error);
}

/* One round of the phase stage on real filter responses of a textured pair, both
 * directions in one dispatch, against ref_phase_terms + ref_smooth_solve.
 *
 * The gates are thresholds on fp32 quantities, so a pixel within rounding of a threshold
 * may go either way, and the smoothing spreads such a pixel's terms over the
 * applicability window. The pixels whose terms change when the reference's stability
 * and magnitude thresholds move by 1e-4 (relative) are those; outputs within the
 * window radius of one are not compared (at most 10 % of them). Elsewhere fp32 terms
 * (with the Newton-corrected asin/atan of common.glsl) and fp32 sums over the 13 x 13
 * window: measured d within 3.4e-6 px, C-bar 3.2e-7, sigma_d^2 7.2e-7 (1 + d^2);
 * required d within 5e-5 px, C-bar 5e-6, sigma_d^2 1e-5 (1 + d^2) (E/A - d^2 cancels),
 * v exact; a solve within rounding of c_min or of the guard may flip (at most 3). */
/* One random input; FALSE (nothing asserted on it yet) when its near-tie gates leave
 * more than a tenth of the outputs out of the comparison and `last` is FALSE: a fresh
 * input is drawn (phase_cases). */
static bool
phase_case(bool upsample, double guard, bool last, bool left_only)
{
  /* wider than one row segment of the split round's row pass (256 - 2 SMOOTH_R) and
   * taller than one tile of its column pass (COLS_TILE_H) */
  const int w = 300, h = 50, cw = 150, ch = 25, level = 0;
  Fixture f;
  fixture_setup(&f, w, h);
  if (!f.ctx)
    return true;
  bool checked = true;
  double shift = g_rand_double_range(stages_rng, 2, 12);
  g_autoptr(RefImage) l = NULL, r = NULL;
  textured_pair(w, h, shift, &l, &r);
  g_autoptr(RefImage) ql = ref_quadrature(&f.p, l);
  g_autoptr(RefImage) qr = ref_quadrature(&f.p, r);
  round_to_float(ql);
  round_to_float(qr);
  double ml = (float)ref_mean_magnitude(ql), mr = (float)ref_mean_magnitude(qr);
  g_autoptr(GpuImage) quad = image_new(f.ctx, w, h, STEREO_QUAD_FORMAT);
  const RefImage *s[4] = { ql, ql, qr, qr };
  upload_channels(quad, s, (int[]){ 0, 1, 0, 1 }, 4);
  /* The responses as the GPU holds them (half floats): the reference's input too. */
  {
    g_autofree float *held = download(quad);
    for (int i = 0; i < w * h; i++)
      for (int c = 0; c < 2; c++) {
        ql->data[2 * i + c] = held[4 * i + c];
        qr->data[2 * i + c] = held[4 * i + 2 + c];
      }
  }
  GError *error = NULL;
  g_autoptr(GpuBuffer) means = storage_buffer(f.ctx, "means", STEREO_MAX_LEVELS * 8);
  float m[2] = { (float)ml, (float)mr };
  g_assert_true(gpu_buffer_fill_u32(means, 0x7fc00000u, &error));
  g_assert_true(gpu_buffer_write(means, (size_t)level * 8, m, sizeof m, &error));

  /* Priors of both directions near the true disparity; with a guard half of them lie
   * within it of the solution, so both sides of the guard occur. */
  int pw = upsample ? cw : w, ph = upsample ? ch : h;
  g_autoptr(GpuImage) prior_img = layered_image(f.ctx, pw, ph, 2, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) out_img = layered_image(f.ctx, w, h, 2, GPU_FORMAT_RGBA32F);
  RefImage *prior[2];
  for (int dir = 0; dir < 2; dir++) {
    g_autoptr(RefImage) pr = ref_image_new(pw, ph, REF_FIELD_CHANNELS);
    for (int i = 0; i < pw * ph; i++) {
      double spread = guard > 0 && i % 2 ? 0.3 : 1.0;
      double d = shift + g_rand_double_range(stages_rng, -spread, spread);
      pr->data[3 * i] = (float)(upsample ? d / 2 : d);
    }
    upload_state(prior_img, dir, pr, false);
    prior[dir] = upsample ? ref_upsample(pr, w, h) : ref_image_copy(pr);
  }
  poison(out_img);
  g_autoptr(GpuBuffer) layers = layer_params(f.ctx, 1, NULL, f.p.min_magnitude);
  g_autoptr(GpuImage) scratch = layered_image(f.ctx, w, h, 2, GPU_FORMAT_RGBA32F);
  stereo_pass_phase(f.ps, quad, prior_img, upsample, out_img, means, layers, level,
                    (float)guard, scratch, left_only);
  double taps[2 * STEREO_MAX_SMOOTH_RADIUS + 1];
  int sr = stereo_gauss_taps(f.p.smooth_sigma, taps);
  for (int dir = 0; dir < 2; dir++) {
    int eta = dir ? -1 : 1;
    g_autofree float *out = download_layer(out_img, dir);
    if (left_only && dir == 1) {   /* the right view's layer is not written */
      for (size_t i = 0; i < (size_t)w * h * 4; i++)
        g_assert_true(isnan(out[i]));
      g_test_message("phase round, left views only: the right view's layer untouched");
      continue;
    }
    check_all_finite(out, (size_t)w * h * 4, "phase");
    const RefImage *qref = eta > 0 ? ql : qr, *qoth = eta > 0 ? qr : ql;
    double tmag = f.p.kappa * (eta > 0 ? ml : mr);
    g_autoptr(RefImage) terms = ref_phase_terms(&f.p, qref, qoth, prior[dir], eta, tmag);
    g_autoptr(RefImage) ref = ref_smooth_solve(&f.p, terms, prior[dir], level, guard);
    /* The pixels whose gates are within rounding. */
    StereoParams lo = f.p, hi = f.p;
    lo.tau *= 1.0 - 1e-4;
    hi.tau *= 1.0 + 1e-4;
    g_autoptr(RefImage) t_lo = ref_phase_terms(&lo, qref, qoth, prior[dir], eta,
                                               tmag * (1.0 + 1e-4));
    g_autoptr(RefImage) t_hi = ref_phase_terms(&hi, qref, qoth, prior[dir], eta,
                                               tmag * (1.0 - 1e-4));
    g_autofree bool *skip = g_new0(bool, (size_t)w * h);
    int ambiguous = 0, active = 0;
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        int i = y * w + x;
        active += terms->data[4 * i + 2] > 0;
        if ((t_lo->data[4 * i + 2] > 0) == (t_hi->data[4 * i + 2] > 0))
          continue;
        ambiguous++;
        for (int yy = MAX(0, y - sr); yy <= MIN(h - 1, y + sr); yy++)
          for (int xx = MAX(0, x - sr); xx <= MIN(w - 1, x + sr); xx++)
            skip[yy * w + xx] = true;
      }
    int skipped = 0, flips = 0, compared = 0;
    double max_d = 0, max_c = 0, max_v = 0;
    for (int i = 0; i < w * h; i++) {
      if (skip[i]) {
        skipped++;
        continue;
      }
      const double *rf = ref->data + 3 * i;
      const float *o = out + 4 * i;
      double dd = fabs(o[0] - rf[REF_D]);
      bool v_ref = rf[REF_CERT] > 0;
      if ((o[3] > 0) != v_ref || dd > 5e-5) {
        flips++;   /* C-bar within rounding of c_min, or |d - d0| of the guard */
        continue;
      }
      compared++;
      max_d = MAX(max_d, dd);
      max_c = MAX(max_c, fabs(o[1] - rf[REF_CERT]));
      double var_g = (double)o[2] * o[2], var_r = rf[REF_SIGMA] * rf[REF_SIGMA];
      max_v = MAX(max_v, fabs(var_g - var_r) / (1.0 + rf[REF_D] * rf[REF_D]));
      g_assert_cmpfloat(o[3], ==, v_ref ? 1.0 : 0.0);
    }
    g_test_message("phase round (%s, guard %.2f) eta %d: %d active terms, %d ambiguous, %d "
                   "outputs skipped, %d flips, %d compared: max |d| error %.3g px, C %.3g, "
                   "var %.3g", upsample ? "upsampled prior" : "prior of the level", guard, eta,
                   active, ambiguous, skipped, flips, compared, max_d, max_c, max_v);
    if (skipped > w * h / 10 && !last) {
      g_test_message("%d ambiguous terms leave %d outputs out: a fresh input", ambiguous,
                     skipped);
      checked = false;
      break;
    }
    g_assert_cmpint(active, >, w * h / 3);
    g_assert_cmpint(skipped, <=, w * h / 10);
    g_assert_cmpint(flips, <=, 3);
    g_assert_cmpfloat(max_d, <, 5e-5);
    g_assert_cmpfloat(max_c, <, 5e-6);
    g_assert_cmpfloat(max_v, <, 1e-5);
  }
  ref_image_free(prior[0]);
  ref_image_free(prior[1]);
  fixture_teardown(&f);
  return checked;
}

/* phase_case on up to three fresh inputs: one whose gates lie within rounding at so many
 * pixels that a tenth of the outputs cannot be compared is drawn again (the bound holds
 * for the last). */
static void
phase_cases(bool upsample, double guard, bool left_only)
{
  for (int attempt = 0; attempt < 3; attempt++)
    if (phase_case(upsample, guard, attempt == 2, left_only))
      return;
}

/* Every schedule of the round: fused, split in two passes by rows (terms and the row
 * filter, then the columns and the solve: large levels, software renderers) and split
 * with the row filter in the second pass, whatever this device would pick; each also for
 * the left views alone (the right view's layer must stay as it was). */
static void
test_phase_round(void)
{
  g_autofree char *saved = g_strdup(g_getenv("STEREOD_PHASE_SPLIT"));
  g_autofree char *saved_rows = g_strdup(g_getenv("STEREOD_PHASE_ROWS"));
  static const char *const names[] = { "fused", "split in two passes by rows",
                                       "split, rows filtered in the second pass" };
  for (int schedule = 0; schedule < 3; schedule++) {
    g_setenv("STEREOD_PHASE_SPLIT", schedule ? "1" : "0", TRUE);
    g_setenv("STEREOD_PHASE_ROWS", schedule == 2 ? "0" : "1", TRUE);
    g_test_message("phase round %s", names[schedule]);
    phase_cases(false, 0.0, false);
    phase_cases(true, 0.0, false);
    phase_cases(false, STEREO_REFINE_GUARD, false);
    phase_cases(true, 0.0, true);   /* the left views alone (the L-R check on level 1) */
  }
  gpu_test_setenv("STEREOD_PHASE_SPLIT", saved);
  gpu_test_setenv("STEREOD_PHASE_ROWS", saved_rows);
}

/* Hole fill, all rounds in as few dispatches as the shared memory allows (three rounds
 * in one at the defaults), for 1..5 rounds: random fields with 40 % holes plus a large
 * hole (80 x 80: its centre is farther from any valid pixel than three rounds reach, so
 * the fast path, the slow path and pixels left unfilled all occur), two pairs of two
 * directions: d within 1e-4 px (ratios of fp32 sums of at most 25 x 25 taps), the other
 * channels unchanged, v set exactly where the reference filled. */
static void
fill_case(int rounds)
{
  const int w = 131, h = 101, pairs = 2, layers = 2 * pairs;
  Fixture f;
  fixture_setup(&f, w, h);
  if (!f.ctx)
    return;
  f.p.fill_iterations = rounds;
  GError *error = NULL;
  g_autoptr(StereoPasses) ps = stereo_passes_new(f.ctx, &f.p, &error);
  g_assert_no_error(error);
  GpuImage *state[2] = { layered_image(f.ctx, w, h, layers, GPU_FORMAT_RGBA32F),
                         layered_image(f.ctx, w, h, layers, GPU_FORMAT_RGBA32F) };
  RefImage *field[layers];
  for (int k = 0; k < layers; k++) {
    field[k] = ref_image_new(w, h, REF_FIELD_CHANNELS);
    int hx = g_rand_int_range(stages_rng, 0, 30);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        double *v = ref_image_at(field[k], x, y);
        bool hole = g_rand_double(stages_rng) < 0.4 ||
                    (x > 10 + hx && x < 90 + hx && y > 8 && y < 88);
        v[REF_D] = (float)g_rand_double_range(stages_rng, 0, 30);
        v[REF_CERT] = hole ? 0.0 : (float)g_rand_double_range(stages_rng, 0.05, 1.0);
        v[REF_SIGMA] = (float)g_rand_double_range(stages_rng, 0, 2);
      }
    upload_state(state[0], k, field[k], true);
  }
  poison(state[1]);
  stereo_passes_set_layers(ps, pairs);
  GpuStats st0, st1;
  gpu_context_get_stats(f.ctx, &st0);
  int cur = stereo_pass_fill(ps, state, 0);
  gpu_context_get_stats(f.ctx, &st1);
  int dispatches = (int)(st1.dispatches - st0.dispatches);
  g_assert_cmpint(cur, ==, dispatches % 2);
  g_assert_cmpint(dispatches, >=, 1);
  g_assert_cmpint(dispatches, <=, rounds);
  if (rounds <= 3)
    g_assert_cmpint(dispatches, ==, 1);   /* every device has room for three rounds */
  for (int k = 0; k < layers; k++) {
    g_autofree float *out = download_layer(state[cur], k);
    check_all_finite(out, (size_t)w * h * 4, "fill");
    g_autoptr(RefImage) before = ref_image_copy(field[k]);
    ref_fill_holes(&f.p, field[k]);
    int filled = 0, unfilled = 0;
    for (int i = 0; i < w * h; i++) {
      const double *b = before->data + 3 * i, *a = field[k]->data + 3 * i;
      g_assert_cmpfloat(fabs(out[4 * i] - a[REF_D]), <, 1e-4);
      g_assert_cmpfloat(out[4 * i + 1], ==, (float)b[REF_CERT]);
      g_assert_cmpfloat(out[4 * i + 2], ==, (float)b[REF_SIGMA]);
      bool was_valid = b[REF_CERT] > 0, changed = a[REF_D] != b[REF_D];
      filled += !was_valid && out[4 * i + 3] > 0;
      unfilled += !was_valid && out[4 * i + 3] == 0;
      /* v: valid pixels stay valid, filled ones become valid (a fill that kept the
       * random d bit for bit does not occur), the rest stay holes */
      g_assert_cmpfloat(out[4 * i + 3], ==, was_valid || changed ? 1.0 : 0.0);
    }
    if (k == 0)
      g_test_message("fill, %d rounds in %d dispatches: %d holes filled, %d left", rounds,
                     dispatches, filled, unfilled);
    g_assert_cmpint(filled, >, 0);
    if (rounds <= 3)
      g_assert_cmpint(unfilled, >, 0);
    ref_image_free(field[k]);
  }
  gpu_image_free(state[0]);
  gpu_image_free(state[1]);
  g_clear_pointer(&ps, stereo_passes_free);
  fixture_teardown(&f);
}

static void
test_fill(void)
{
  for (int rounds = 1; rounds <= 5; rounds++)
    fill_case(rounds);
}

int
main(int argc, char **argv)
{
  stages_init(&argc, &argv);
  g_test_add_func("/stages/phase-round", test_phase_round);
  g_test_add_func("/stages/fill", test_fill);
  return stages_run();
}
