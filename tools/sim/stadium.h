/* stadium.h: the files stereod-sim writes beside a random stadium's clip, so that the
 * service can run on it as an operator would (stadium-files.c):
 *  - DIR/stereod.conf: [daemon] mode=offline, one [pair PREFIXpK] per camera pair whose
 *    sources replay DIR/pK/left|right/%06d.jpg through GStreamer (imagesequencesrc) at
 *    the clip's rate, with DIR/pK/calib.conf as its calibration;
 *  - DIR/heightmap.conf: the pitch grid, the frame choice of an offline run (only the
 *    same instant is fused, waiting as long as the GPU takes) and the same pairs;
 *  - players.csv rows with the ground truth the scorer needs (STADIUM_PLAYERS_HEADER).
 * Internal to tools/; not thread safe. */
#pragma once

#include <glib.h>
#include <stdbool.h>

#include "tools/sim/sim.h"

G_BEGIN_DECLS

/* frame, capture time, player id, ground point (pitch m), height (m), body radius (m),
 * footprint (pi r^2, m^2), team, horizontal distance to the nearest pair that sees the
 * player (to the nearest pair when none does), the pairs that see it, ';'-separated. */
#define STADIUM_PLAYERS_HEADER \
  "frame,time_ns,id,x,y,height,radius,footprint,team,nearest_m,seen_by\n"

/* 1-16 characters of A-Z a-z 0-9 _ - (a ring name is at most 32). */
bool stadium_valid_prefix(const char *prefix);

/* Does the pair see the player: is the middle of its body inside both images (4 px
 * margin) and not hidden from either camera (sim_scene_player_visible)? */
bool stadium_pair_sees(const SimScene *scene, const SimCamera *camera, int player);

/* Appends player i's row of frame f (the scene set to its time) to csv. */
void stadium_append_player(GString *csv, const SimScene *scene, const SimConfig *cfg,
                           const SimCamera *cameras, int frame, gint64 time_ns, int player);

/* Writes DIR/stereod.conf and DIR/heightmap.conf (paths in them absolute). */
bool stadium_write_configs(const SimConfig *cfg, const char *dir, const char *prefix,
                           GError **error);

G_END_DECLS
