/* ref-flow: the double-precision reference of the optical flow (docs/optical-flow.md), for
 * checking the GPU engine and choosing the defaults on a training set by hand:
 *   ref-flow FRAME0 FRAME1 [-o OUT.flo] [--gt GT.flo] [--set KEY=VALUE ...]
 *   ref-flow --list SCENES [--set KEY=VALUE ...]
 * SCENES: lines "FRAME0 FRAME1 GT.flo"; prints each scene's score and the means. KEY is a
 * FlowParams field (levels, orientations, kappa, tau, gamma, energy, local_frequency,
 * smooth_sigma, c_min, lambda, iterations, median, fill_sigma, fill_iterations, fb_check,
 * fb_max, densify). Slow (seconds per frame pair). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref-flow.h"
#include "tests/flow/flow-score.h"

typedef enum { T_INT, T_DOUBLE, T_BOOL } Type;
static const struct {
  const char *name;
  Type type;
  size_t offset;
} fields[] = {
#define F(n, t) { #n, t, offsetof(FlowParams, n) }
  F(levels, T_INT), F(orientations, T_INT), F(kappa, T_DOUBLE), F(tau, T_DOUBLE),
  F(gamma, T_DOUBLE), F(energy, T_DOUBLE), F(cos2, T_DOUBLE), F(local_frequency, T_BOOL),
  F(smooth_sigma, T_DOUBLE), F(c_min, T_DOUBLE), F(lambda, T_DOUBLE), F(iterations, T_INT),
  F(median, T_BOOL), F(fill_sigma, T_DOUBLE), F(fill_iterations, T_INT),
  F(fb_check, T_BOOL), F(fb_max, T_DOUBLE), F(densify, T_BOOL),
#undef F
};

static bool
apply_sets(FlowParams *p, char **sets)
{
  for (char **s = sets; s && *s; s++) {
    const char *eq = strchr(*s, '=');
    size_t i;
    for (i = 0; eq && i < G_N_ELEMENTS(fields); i++)
      if (strlen(fields[i].name) == (size_t)(eq - *s) &&
          strncmp(fields[i].name, *s, eq - *s) == 0)
        break;
    if (!eq || i == G_N_ELEMENTS(fields)) {
      fprintf(stderr, "ref-flow: unknown --set '%s'\n", *s);
      return false;
    }
    char *at = (char *)p + fields[i].offset;
    if (fields[i].type == T_INT)
      *(int *)at = atoi(eq + 1);
    else if (fields[i].type == T_BOOL)
      *(bool *)at = atoi(eq + 1) != 0;
    else
      *(double *)at = g_ascii_strtod(eq + 1, NULL);
  }
  return true;
}

static bool
run_one(const char *a, const char *b, const char *gt, const char *out, char **sets,
        FlowScore *score)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(ImageioU8) f0 = imageio_read_gray(a, &error);
  g_autoptr(ImageioU8) f1 = f0 ? imageio_read_gray(b, &error) : NULL;
  if (!f1) {
    fprintf(stderr, "ref-flow: %s\n", error->message);
    return false;
  }
  if (f0->width != f1->width || f0->height != f1->height) {
    fprintf(stderr, "ref-flow: %s and %s differ in size\n", a, b);
    return false;
  }
  FlowParams p;
  flow_params_init(&p, f0->width, f0->height);
  if (!apply_sets(&p, sets))
    return false;
  size_t n = (size_t)f0->width * f0->height;
  g_autofree float *u = g_new(float, n), *v = g_new(float, n);
  if (!ref_flow_run(&p, f0->data, f0->stride, f1->data, f1->stride, u, v, &error)) {
    fprintf(stderr, "ref-flow: %s\n", error->message);
    return false;
  }
  if (out && !imageio_write_flo(out, u, v, f0->width, f0->height, f0->width * sizeof(float),
                                &error)) {
    fprintf(stderr, "ref-flow: %s\n", error->message);
    return false;
  }
  if (!gt)
    return true;
  g_autoptr(ImageioFlow) g = imageio_read_flo(gt, &error);
  if (!g) {
    fprintf(stderr, "ref-flow: %s\n", error->message);
    return false;
  }
  if (g->u->width != f0->width || g->u->height != f0->height) {
    fprintf(stderr, "ref-flow: %s differs in size from the frames\n", gt);
    return false;
  }
  *score = flow_score(f0->width, f0->height, u, v, g->u->data, g->v->data);
  printf("%s: EPE %.4f px  AAE %.3f deg  bad-1 %.2f %%  bad-3 %.2f %%  density %.1f %%\n", a,
         score->epe, score->aae, score->bad1, score->bad3, score->density);
  return true;
}

int
main(int argc, char **argv)
{
  g_autofree char *out = NULL, *gt = NULL, *list = NULL;
  g_auto(GStrv) sets = NULL;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "write the flow (.flo)", "OUT.flo" },
    { "gt", 0, 0, G_OPTION_ARG_FILENAME, &gt, "score against a ground truth", "GT.flo" },
    { "list", 0, 0, G_OPTION_ARG_FILENAME, &list, "score every scene of a list", "SCENES" },
    { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets, "set a parameter", "KEY=VALUE" },
    { NULL },
  };
  g_autoptr(GOptionContext) oc = g_option_context_new("[FRAME0 FRAME1]");
  g_option_context_add_main_entries(oc, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(oc, &argc, &argv, &error) || (!list && argc != 3)) {
    fprintf(stderr, "ref-flow: %s\n", error ? error->message : "needs FRAME0 FRAME1 or --list");
    return 2;
  }
  FlowScore s;
  if (!list)
    return run_one(argv[1], argv[2], gt, out, sets, &s) ? 0 : 1;
  g_autofree char *text = NULL;
  if (!g_file_get_contents(list, &text, NULL, &error)) {
    fprintf(stderr, "ref-flow: %s\n", error->message);
    return 1;
  }
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  FlowScore sum = { 0 };
  int n = 0;
  for (char **l = lines; *l; l++) {
    g_auto(GStrv) w = g_strsplit_set(g_strstrip(*l), " \t", -1);
    if (g_strv_length(w) != 3)
      continue;
    if (!run_one(w[0], w[1], w[2], NULL, sets, &s))
      return 1;
    sum.epe += s.epe;
    sum.aae += s.aae;
    sum.bad1 += s.bad1;
    sum.bad3 += s.bad3;
    sum.density += s.density;
    n++;
  }
  if (!n) {
    fprintf(stderr, "ref-flow: %s: no scene\n", list);
    return 1;
  }
  printf("mean of %d: EPE %.4f px  AAE %.3f deg  bad-1 %.2f %%  bad-3 %.2f %%  density %.1f %%\n",
         n, sum.epe / n, sum.aae / n, sum.bad1 / n, sum.bad3 / n, sum.density / n);
  return 0;
}
