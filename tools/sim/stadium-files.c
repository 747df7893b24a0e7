/* stadium-files.c: what stereod-sim writes beside a random stadium's clip (stadium.h). */
#include "tools/sim/stadium.h"

#include <math.h>
#include <string.h>

bool
stadium_valid_prefix(const char *prefix)
{
  size_t n = strlen(prefix);
  if (n < 1 || n > 16)
    return false;
  for (const char *p = prefix; *p; p++)
    if (!g_ascii_isalnum(*p) && *p != '_' && *p != '-')
      return false;
  return true;
}

/* Pixel of a pitch point in the view of a camera at `centre` with orientation R
 * (columns: right, down, forward); FALSE behind the camera. */
static bool
project(const SimCamera *cam, const double centre[3], const double q[3], double *u, double *v)
{
  const SimPairConfig *p = cam->config;
  double d[3] = { q[0] - centre[0], q[1] - centre[1], q[2] - centre[2] };
  double c[3];
  for (int i = 0; i < 3; i++)   /* R^T d */
    c[i] = cam->R[i] * d[0] + cam->R[3 + i] * d[1] + cam->R[6 + i] * d[2];
  if (c[2] <= 0.1)
    return false;
  *u = p->focal * c[0] / c[2] + p->cx;
  *v = p->focal * c[1] / c[2] + p->cy;
  return true;
}

static bool
inside(const SimPairConfig *p, double u, double v)
{
  return u >= 4 && u <= p->width - 5 && v >= 4 && v <= p->height - 5;
}

bool
stadium_pair_sees(const SimScene *scene, const SimCamera *cam, int player)
{
  double x, y, h, u, v;
  sim_scene_get_player(scene, player, &x, &y, &h);
  double q[3] = { x, y, 0.5 * h };
  return project(cam, cam->centre, q, &u, &v) && inside(cam->config, u, v) &&
         project(cam, cam->right_centre, q, &u, &v) && inside(cam->config, u, v) &&
         sim_scene_player_visible(scene, player, cam->centre) &&
         sim_scene_player_visible(scene, player, cam->right_centre);
}

void
stadium_append_player(GString *csv, const SimScene *scene, const SimConfig *cfg,
                      const SimCamera *cams, int frame, gint64 time_ns, int i)
{
  double x, y, h;
  sim_scene_get_player(scene, i, &x, &y, &h);
  double r = sim_scene_get_radius(scene, i);
  double nearest_seen = INFINITY, nearest = INFINITY;
  GString *seen = g_string_new(NULL);
  for (int k = 0; k < cfg->n_pairs; k++) {
    double dist = hypot(x - cams[k].centre[0], y - cams[k].centre[1]);
    nearest = MIN(nearest, dist);
    if (stadium_pair_sees(scene, &cams[k], i)) {
      g_string_append_printf(seen, "%s%s", seen->len ? ";" : "", cfg->pairs[k].name);
      nearest_seen = MIN(nearest_seen, dist);
    }
  }
  g_string_append_printf(csv, "%d,%" G_GINT64_FORMAT ",%d,%.4f,%.4f,%.4f,%.4f,%.5f,%d,%.2f,%s\n",
                         frame, time_ns, i, x, y, h, r, G_PI * r * r,
                         sim_scene_get_team(scene, i),
                         isfinite(nearest_seen) ? nearest_seen : nearest, seen->str);
  g_string_free(seen, true);
}

bool
stadium_write_configs(const SimConfig *cfg, const char *dir, const char *prefix,
                      GError **error)
{
  g_autofree char *abs = g_canonicalize_filename(dir, NULL);
  int rate = (int)lround(cfg->fps);
  GString *st = g_string_new(NULL);
  g_string_append_printf(st,
    "# stereod configuration of a stereod-sim stadium: a recording re-processed offline\n"
    "# (every frame; stereod exits 0 at the end of the clip), no faster than the clip's\n"
    "# own rate (offline_speed=1), so that stereod-heightmap, which takes each ring's\n"
    "# newest frame, sees every frame even on a fast GPU.\n"
    "# The engine's settings are config/stereod.conf's (max_disparity, window, smoothing,\n"
    "# noise_floor, coarse_fallback, ground_margin of its pairs): what is reported is what\n"
    "# every stadium gets.\n\n"
    "[daemon]\nmode=offline\noffline_speed=1\nstats_interval=10\n");
  GString *hm = g_string_new(NULL);
  g_string_append_printf(hm,
    "# stereod-heightmap configuration of a stereod-sim stadium run offline: the pitch grid\n"
    "# (the default: the pitch and 3 m around it), only frames of the same instant fused\n"
    "# (tolerance 20 ms, one frame is 1/fps), a fused frame waits as long as the GPU takes\n"
    "# for the other pairs (wait_ms), no pair is left out as stopped (stale_ms).\n\n"
    "[heightmap]\nx0=-55.5\nx1=55.5\ny0=-37\ny1=37\ncell=0.1\n"
    "tolerance_ms=20\nwait_ms=10000\nstale_ms=120000\nring=%shm\n", prefix);
  for (int k = 0; k < cfg->n_pairs; k++) {
    const SimPairConfig *p = &cfg->pairs[k];
    g_string_append_printf(st,
      "\n[pair %s%s]\n"
      "left=imagesequencesrc location=%s/%s/left/%%06d.jpg framerate=%d/1 ! identity sync=true\n"
      "right=imagesequencesrc location=%s/%s/right/%%06d.jpg framerate=%d/1 ! identity sync=true\n"
      "width=%d\nheight=%d\nfps=%d\ncalibration=%s/%s/calib.conf\n"
      "outputs=disparity;confidence\nmax_disparity=auto\nwindow=2\nsmoothing=1\n"
      "noise_floor=2\ncoarse_fallback=0.01\nground_margin=1\n",
      prefix, p->name, abs, p->name, rate, abs, p->name, rate, p->width, p->height, rate, abs,
      p->name);
    g_string_append_printf(hm, "\n[pair %s%s]\n", prefix, p->name);
  }
  g_autofree char *st_path = g_build_filename(abs, "stereod.conf", NULL);
  g_autofree char *hm_path = g_build_filename(abs, "heightmap.conf", NULL);
  bool ok = g_file_set_contents(st_path, st->str, (gssize)st->len, error) &&
            g_file_set_contents(hm_path, hm->str, (gssize)hm->len, error);
  g_string_free(st, true);
  g_string_free(hm, true);
  if (!ok && error && *error && (*error)->domain != SIM_ERROR) {
    GError *e = g_error_new(SIM_ERROR, SIM_ERROR_IO, "%s", (*error)->message);
    g_clear_error(error);
    *error = e;
  }
  return ok;
}
