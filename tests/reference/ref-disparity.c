/* ref-disparity: runs the double-precision reference filter on Middlebury scene folders
 * and prints the README's scores.
 *
 *   ref-disparity [--key=value ...] [--scale=S] [--jobs=N] [--pfm=PREFIX]
 *                 [--errmap=PREFIX] SCENE_DIR...
 *
 * --key=value overrides a StereoParams field (names as in kernels/stereo-params.h;
 * booleans take 0/1/true/false). --scale gives the gt scale of an unknown scene;
 * --jobs runs that many scenes at once; --pfm writes PREFIX<scene>.pfm (float
 * disparity, +inf = invalid, bottom-up rows as PFM wants); --errmap writes
 * PREFIX<scene>.ppm, an error map (colours at write_error_map). Exit status 0 on success,
 * 1 on a usage or load error.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "middlebury.h"
#include "reference.h"

typedef enum { T_INT, T_DOUBLE, T_BOOL } FieldType;

static const struct {
  const char *name;
  FieldType type;
  size_t offset;
} fields[] = {
#define F(n, t) { #n, t, offsetof(StereoParams, n) }
  F(levels, T_INT), F(omega0, T_DOUBLE), F(sigma, T_DOUBLE), F(radius, T_INT),
  F(kappa, T_DOUBLE), F(min_magnitude, T_DOUBLE), F(tau, T_DOUBLE), F(gamma, T_DOUBLE), F(smooth_sigma, T_DOUBLE),
  F(c_min, T_DOUBLE), F(iterations, T_INT), F(iterations_level0, T_INT), F(fill_sigma, T_DOUBLE),
  F(fill_iterations, T_INT), F(min_disparity, T_DOUBLE), F(max_disparity, T_DOUBLE),
  F(search_level, T_INT), F(search_radius, T_INT), F(lr_check, T_BOOL),
  F(lr_max, T_DOUBLE), F(sigma_d_max, T_DOUBLE), F(median, T_BOOL), F(densify, T_BOOL),
#undef F
};

static bool
apply_override(StereoParams *p, const char *key, const char *value)
{
  for (size_t i = 0; i < G_N_ELEMENTS(fields); i++) {
    if (strcmp(fields[i].name, key) != 0)
      continue;
    char *end = NULL;
    void *dst = (char *)p + fields[i].offset;
    switch (fields[i].type) {
    case T_INT:
      *(int *)dst = (int)g_ascii_strtoll(value, &end, 10);
      break;
    case T_DOUBLE:
      *(double *)dst = g_ascii_strtod(value, &end);
      break;
    case T_BOOL:
      if (!strcmp(value, "true") || !strcmp(value, "1"))
        *(bool *)dst = true;
      else if (!strcmp(value, "false") || !strcmp(value, "0"))
        *(bool *)dst = false;
      else
        return false;
      return true;
    }
    return end && end != value && *end == '\0';
  }
  return false;
}

typedef struct {
  const char *dir;
  char **overrides;   /* "key=value" strings */
  double scale;
  const char *pfm_prefix;
  const char *err_prefix;
  MiddleburyScore score;
  double meas_pct, meas_bad2, fill_bad2;   /* --detail: measured share, bad-2 by kind */
  double seconds;
  char *name;
  GError *error;
} Job;

static void
write_pfm(const char *path, int w, int h, const float *d)
{
  FILE *f = fopen(path, "wb");
  if (!f) {
    g_printerr("%s: cannot write, ignoring\n", path);
    return;
  }
  fprintf(f, "Pf\n%d %d\n-1.0\n", w, h);
  for (int y = h - 1; y >= 0; y--)
    for (int x = 0; x < w; x++) {
      float v = isnan(d[(size_t)y * w + x]) ? INFINITY : d[(size_t)y * w + x];
      fwrite(&v, sizeof v, 1, f);
    }
  fclose(f);
}

/* Error map (binary PPM): measured and right = gray by disparity, measured and bad-2 =
 * red, filled and right = dark green, filled and bad = yellow, missing = blue, not
 * scored = black. */
static void
write_error_map(const char *path, const MiddleburyScene *sc, const float *d,
                const uint8_t *conf)
{
  FILE *f = fopen(path, "wb");
  if (!f) {
    g_printerr("%s: cannot write, ignoring\n", path);
    return;
  }
  g_autofree uint8_t *noc = middlebury_noc_mask(sc);
  fprintf(f, "P6\n%d %d\n255\n", sc->width, sc->height);
  for (size_t i = 0; i < (size_t)sc->width * sc->height; i++) {
    uint8_t px[3] = { 0, 0, 0 };
    if (noc[i]) {
      double gt = sc->gt[i] / sc->scale;
      bool bad = isnan(d[i]) || fabs(d[i] - gt) > 2.0;
      uint8_t g = (uint8_t)CLAMP(60 + 3 * gt, 0, 255);
      if (isnan(d[i]))
        px[2] = 255;
      else if (conf[i] >= 128)
        px[0] = bad ? 255 : g, px[1] = bad ? 0 : g, px[2] = bad ? 0 : g;
      else
        px[0] = bad ? 255 : 0, px[1] = bad ? 255 : 110;
    }
    fwrite(px, 1, 3, f);
  }
  fclose(f);
}

static void
run_job(gpointer data, gpointer user_data)
{
  Job *job = data;
  g_autoptr(MiddleburyScene) sc = middlebury_scene_load(job->dir, job->scale, &job->error);
  if (!sc)
    return;
  job->name = g_strdup(sc->name);
  StereoParams p;
  stereo_params_init(&p, sc->width, sc->height);
  for (char **o = job->overrides; o && *o; o++) {
    char *eq = strchr(*o, '=');
    g_autofree char *key = g_strndup(*o, eq - *o);
    if (!apply_override(&p, key, eq + 1)) {
      g_set_error(&job->error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                  "bad option --%s", *o);
      return;
    }
  }
  size_t n = (size_t)sc->width * sc->height;
  g_autofree float *disp = g_new(float, n);
  g_autofree uint8_t *conf = g_new(uint8_t, n);
  gint64 t0 = g_get_monotonic_time();
  if (!ref_stereo_run(&p, sc->left, sc->width, sc->right, sc->width, disp, conf, &job->error))
    return;
  job->seconds = (g_get_monotonic_time() - t0) / 1e6;
  job->score = middlebury_score(sc, disp);
  /* Split the noc bad-2 pixels into measured and filled ones. */
  g_autofree uint8_t *noc = middlebury_noc_mask(sc);
  long nm = 0, nf = 0, bm = 0, bf = 0, nn = 0;
  for (size_t i = 0; i < n; i++) {
    if (!noc[i])
      continue;
    nn++;
    bool bad = isnan(disp[i]) || fabs(disp[i] - sc->gt[i] / sc->scale) > 2.0;
    if (conf[i] >= 128) {
      nm++;
      bm += bad;
    } else if (conf[i] > 0) {
      nf++;
      bf += bad;
    }
  }
  job->meas_pct = nn ? 100.0 * nm / nn : 0;
  job->meas_bad2 = nn ? 100.0 * bm / nn : 0;
  job->fill_bad2 = nn ? 100.0 * bf / nn : 0;
  if (job->err_prefix) {
    g_autofree char *path = g_strdup_printf("%s%s.ppm", job->err_prefix, sc->name);
    write_error_map(path, sc, disp, conf);
  }
  if (job->pfm_prefix) {
    g_autofree char *path = g_strdup_printf("%s%s.pfm", job->pfm_prefix, sc->name);
    write_pfm(path, sc->width, sc->height, disp);
  }
}

int
main(int argc, char **argv)
{
  g_autoptr(GPtrArray) overrides = g_ptr_array_new();
  g_autoptr(GPtrArray) dirs = g_ptr_array_new();
  double scale = 0.0;
  int jobs = 1;
  const char *pfm = NULL, *errmap = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (g_str_has_prefix(a, "--scale="))
      scale = g_ascii_strtod(a + 8, NULL);
    else if (g_str_has_prefix(a, "--jobs="))
      jobs = MAX(1, atoi(a + 7));
    else if (g_str_has_prefix(a, "--pfm="))
      pfm = a + 6;
    else if (g_str_has_prefix(a, "--errmap="))
      errmap = a + 9;
    else if (g_str_has_prefix(a, "--") && strchr(a, '='))
      g_ptr_array_add(overrides, (char *)a + 2);
    else if (g_str_has_prefix(a, "-")) {
      g_printerr("usage: %s [--key=value ...] [--scale=S] [--jobs=N] [--pfm=PREFIX] "
                 "SCENE_DIR...\n", argv[0]);
      return 1;
    } else
      g_ptr_array_add(dirs, (char *)a);
  }
  if (dirs->len == 0) {
    g_printerr("%s: no scene folder given\n", argv[0]);
    return 1;
  }
  g_ptr_array_add(overrides, NULL);
  g_autofree Job *job = g_new0(Job, dirs->len);
  GThreadPool *pool = g_thread_pool_new(run_job, NULL, jobs, TRUE, NULL);
  for (guint i = 0; i < dirs->len; i++) {
    job[i] = (Job){ .dir = dirs->pdata[i], .overrides = (char **)overrides->pdata,
                    .scale = scale, .pfm_prefix = pfm,
                    .err_prefix = errmap };
    g_thread_pool_push(pool, &job[i], NULL);
  }
  g_thread_pool_free(pool, FALSE, TRUE);

  int status = 0, n_ok = 0;
  double sum1 = 0, sum2 = 0, sumd = 0, summ = 0;
  printf("%-10s %7s %7s %8s %7s %8s   %s\n", "scene", "bad-1", "bad-2", "density", "MAE",
         "time(s)", "measured% bad2(meas) bad2(filled) [% of noc]");
  for (guint i = 0; i < dirs->len; i++) {
    if (job[i].error) {
      g_printerr("%s: %s\n", job[i].dir, job[i].error->message);
      g_clear_error(&job[i].error);
      status = 1;
    } else {
      MiddleburyScore *s = &job[i].score;
      printf("%-10s %7.2f %7.2f %8.2f %7.3f %8.2f   %6.2f %6.2f %6.2f\n", job[i].name,
             s->bad1, s->bad2, s->density, s->mae, job[i].seconds, job[i].meas_pct,
             job[i].meas_bad2, job[i].fill_bad2);
      sum1 += s->bad1;
      sum2 += s->bad2;
      sumd += s->density;
      summ += s->mae;
      n_ok++;
    }
    g_free(job[i].name);
  }
  if (n_ok > 1)
    printf("%-10s %7.2f %7.2f %8.2f %7.3f\n", "mean", sum1 / n_ok, sum2 / n_ok, sumd / n_ok,
           summ / n_ok);
  return status;
}
