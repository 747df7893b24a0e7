/* config-diff.c: a reload of the configuration (heightmap_config_update): what changes
 * while the builder runs, and what needs a restart.
 *
 * Fixed at start: the grid (the size of the GPU images, of the host arrays and of the
 * output ring, whose header carries it), pool (a constant compiled into the fusion
 * shaders), socket, ring and format (the outputs are made once), and the pairs (one
 * waiter thread each reads the ring it was started with; a pair's index is its bit in the
 * pair masks; calibrations are read at load). Everything else is a number read again for
 * every fused frame. Numbers are written with g_ascii_formatd: the program runs under the
 * user's locale, the file is read without it.
 */
#include "heightmap/heightmap.h"

#include <string.h>

typedef struct {
  GString *changed;
  GPtrArray *fixed;
  bool any;                 /* a changeable key changed */
} Diff;

static const char *
num(char buf[G_ASCII_DTOSTR_BUF_SIZE], double x)
{
  return g_ascii_formatd(buf, G_ASCII_DTOSTR_BUF_SIZE, "%.12g", x);
}

static void
live_double(Diff *d, const char *key, double *running, double next)
{
  if (*running == next)
    return;
  char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append_printf(d->changed, "%s%s %s -> %s", d->any ? ", " : "", key,
                         num(a, *running), num(b, next));
  *running = next;
  d->any = true;
}

static void
live_int(Diff *d, const char *key, int *running, int next)
{
  if (*running == next)
    return;
  g_string_append_printf(d->changed, "%s%s %d -> %d", d->any ? ", " : "", key, *running,
                         next);
  *running = next;
  d->any = true;
}

static void G_GNUC_PRINTF(2, 3)
fixed(Diff *d, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_ptr_array_add(d->fixed, g_strdup_vprintf(format, ap));
  va_end(ap);
}

static void
fixed_double(Diff *d, const char *key, double running, double next)
{
  char a[G_ASCII_DTOSTR_BUF_SIZE];
  if (running != next)
    fixed(d, "[heightmap] %s changed: needs a restart, keeping %s", key, num(a, running));
}

static void
fixed_string(Diff *d, const char *group, const char *key, const char *running,
             const char *next, const char *none)
{
  if (g_strcmp0(running, next) != 0)
    fixed(d, "[%s] %s changed: needs a restart, keeping %s", group, key,
          running ? running : none);
}

static const HeightmapPairConfig *
find_pair(const HeightmapConfig *c, const char *name)
{
  for (int i = 0; i < c->n_pairs; i++)
    if (g_str_equal(c->pairs[i].name, name))
      return &c->pairs[i];
  return NULL;
}

static void
compare_pair(Diff *d, const HeightmapPairConfig *a, const HeightmapPairConfig *b)
{
  g_autofree char *group = g_strdup_printf("pair %s", a->name);
  fixed_string(d, group, "ring", a->ring, b->ring, NULL);
  /* calibration_path is set exactly when has_calibration (the file loaded); the same
   * file may have changed since: StereoCalib is all ints and doubles without padding, so
   * memcmp compares the numbers. */
  if (g_strcmp0(a->calibration_path, b->calibration_path) != 0)
    fixed_string(d, group, "calibration", a->calibration_path, b->calibration_path,
                 "none (Q and pose from the ring header)");
  else if (a->has_calibration && memcmp(&a->calib, &b->calib, sizeof a->calib) != 0)
    fixed(d, "[%s] calibration %s changed: needs a restart, keeping the one loaded at start",
          group, a->calibration_path);
}

bool
heightmap_config_update(HeightmapConfig *r, const HeightmapConfig *n, GString *changed,
                        GPtrArray *fixed_keys)
{
  g_return_val_if_fail(r && n && changed && fixed_keys, false);
  Diff d = { .changed = changed, .fixed = fixed_keys };

  fixed_double(&d, "x0", r->grid.x0, n->grid.x0);
  fixed_double(&d, "x1", r->grid.x1, n->grid.x1);
  fixed_double(&d, "y0", r->grid.y0, n->grid.y0);
  fixed_double(&d, "y1", r->grid.y1, n->grid.y1);
  fixed_double(&d, "cell", r->grid.cell, n->grid.cell);
  live_double(&d, "tolerance_ms", &r->tolerance_ms, n->tolerance_ms);
  live_double(&d, "wait_ms", &r->wait_ms, n->wait_ms);
  live_double(&d, "stale_ms", &r->stale_ms, n->stale_ms);
  live_double(&d, "min_height", &r->min_height, n->min_height);
  live_int(&d, "min_confidence", &r->min_confidence, n->min_confidence);
  live_int(&d, "min_points", &r->min_points, n->min_points);
  if (r->pool != n->pool)
    fixed(&d, "[heightmap] pool changed: needs a restart, keeping %d", r->pool);
  if (r->carve != n->carve)
    fixed(&d, "[heightmap] carve changed: needs a restart, keeping %s",
          r->carve ? "true" : "false");
  if (r->see_through != n->see_through)
    fixed(&d, "[heightmap] see_through changed: needs a restart, keeping %g", r->see_through);
  live_int(&d, "see_cells", &r->see_cells, n->see_cells);
  live_double(&d, "see_scale", &r->see_scale, n->see_scale);
  live_double(&d, "goal_line", &r->goal_line, n->goal_line);
  live_double(&d, "touch_line", &r->touch_line, n->touch_line);
  live_double(&d, "play_margin", &r->play_margin, n->play_margin);
  live_double(&d, "body_support", &r->body_support, n->body_support);
  live_double(&d, "support_scale", &r->support_scale, n->support_scale);
  live_double(&d, "min_fill", &r->min_fill, n->min_fill);
  live_double(&d, "goal_width", &r->goal_width, n->goal_width);
  live_double(&d, "goal_height", &r->goal_height, n->goal_height);
  live_double(&d, "goal_shadow", &r->goal_shadow, n->goal_shadow);
  live_double(&d, "goal_front", &r->goal_front, n->goal_front);
  live_int(&d, "far_pool", &r->far_pool, n->far_pool);
  live_double(&d, "far_sigma", &r->far_sigma, n->far_sigma);
  live_double(&d, "max_height", &r->max_height, n->max_height);
  live_double(&d, "top_fraction", &r->top_fraction, n->top_fraction);
  live_double(&d, "blob_min_area", &r->blob_min_area, n->blob_min_area);
  live_double(&d, "blob_max_area", &r->blob_max_area, n->blob_max_area);
  live_double(&d, "top_band", &r->top_band, n->top_band);
  live_double(&d, "view_centre", &r->view_centre, n->view_centre);
  live_double(&d, "view_centre_px", &r->view_centre_px, n->view_centre_px);
  live_double(&d, "split_depth", &r->split_depth, n->split_depth);
  live_double(&d, "crowd_split", &r->crowd_split, n->crowd_split);
  live_double(&d, "crowd_area", &r->crowd_area, n->crowd_area);
  live_double(&d, "view_split", &r->view_split, n->view_split);
  live_double(&d, "view_split_px", &r->view_split_px, n->view_split_px);
  live_double(&d, "merge_distance", &r->merge_distance, n->merge_distance);
  live_double(&d, "post_zone", &r->post_zone, n->post_zone);
  live_double(&d, "post_area", &r->post_area, n->post_area);
  live_double(&d, "lower_body", &r->lower_body, n->lower_body);
  live_double(&d, "lower_scale", &r->lower_scale, n->lower_scale);
  live_double(&d, "body_share", &r->body_share, n->body_share);
  live_double(&d, "visible_offset", &r->visible_offset, n->visible_offset);
  live_double(&d, "disparity_noise", &r->disparity_noise, n->disparity_noise);
  live_double(&d, "gate", &r->gate, n->gate);
  live_double(&d, "acceleration", &r->acceleration, n->acceleration);
  live_int(&d, "max_missed", &r->max_missed, n->max_missed);
  live_int(&d, "confirm", &r->confirm, n->confirm);
  live_int(&d, "confirm_gap", &r->confirm_gap, n->confirm_gap);
  live_int(&d, "coast", &r->coast, n->coast);
  fixed_string(&d, "heightmap", "socket", r->socket_path, n->socket_path, "none");
  fixed_string(&d, "heightmap", "ring", r->ring_name, n->ring_name, NULL);
  fixed_string(&d, "heightmap", "metrics", r->metrics_address, n->metrics_address, "none");
  if (r->format != n->format)
    fixed(&d, "[heightmap] format changed: needs a restart, keeping %s",
          r->format == HEIGHTMAP_FORMAT_FLOAT ? "float" : "mm");

  for (int i = 0; i < r->n_pairs; i++) {
    const HeightmapPairConfig *b = find_pair(n, r->pairs[i].name);
    if (b)
      compare_pair(&d, &r->pairs[i], b);
    else
      fixed(&d, "[pair %s] removed: needs a restart, still reading it", r->pairs[i].name);
  }
  for (int i = 0; i < n->n_pairs; i++)
    if (!find_pair(r, n->pairs[i].name))
      fixed(&d, "[pair %s] added: needs a restart, not read until then", n->pairs[i].name);
  return d.any;
}
