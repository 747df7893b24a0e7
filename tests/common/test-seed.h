/* test-seed.h: the random generator of tests that draw fresh inputs on every run.
 *
 * The seed comes from STEREOD_TEST_SEED when set (to repeat a failing run), else at
 * random; it is printed either way. Call after g_test_init; free with g_rand_free. */
#pragma once

#include <glib.h>

static inline GRand *
test_seeded_rand(void)
{
  const char *env = g_getenv("STEREOD_TEST_SEED");
  guint32 seed = env ? (guint32) g_ascii_strtoull(env, NULL, 10) : g_random_int();
  g_test_message("seed %u (STEREOD_TEST_SEED)", seed);
  return g_rand_new_with_seed(seed);
}
