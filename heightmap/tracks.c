/* tracks.c: blobs -> tracks with stable ids (nearest neighbour, constant velocity).
 *
 * Each fused frame: every track is predicted to the frame's time; the candidate
 * (track, blob) pairs within the gate are taken in order of distance, each track and
 * each blob at most once (greedy nearest neighbour: optimal enough when players are
 * farther apart than they move in a frame, 0.36 m at 9 m/s and 25 fps). A matched
 * track takes the blob's position; its velocity is the blend of the old one and the
 * step just seen (VELOCITY_GAIN). Unmatched blobs start tracks; tracks unseen more than
 * max_missed frames in a row are dropped. Ids are never reused.
 * Only confirmed tracks are reported: matched in `confirm` consecutive frames at least
 * once; a tentative track that misses a frame is dropped at once. Disparity noise on
 * weakly textured ground makes blobs that do not come back in the next frame (its errors
 * are not correlated from frame to frame, docs/heightmap.md); players do.
 */
#include "heightmap/heightmap.h"

#include <math.h>
#include <stdlib.h>

#define MAX_TRACKS 1024
#define VELOCITY_GAIN 0.5
#define MAX_SPEED 12.0   /* m/s: faster steps are matching errors, not players */

typedef struct {
  HeightmapTrack pub;
  uint64_t seen_ns;             /* time of the last matched blob */
} Track;

typedef struct {
  float dist;
  int track, blob;
} Candidate;

struct HeightmapTracker {
  HeightmapTrackerParams params;
  Track *tracks;                /* live tracks, by id */
  int n_tracks;
  HeightmapTrack *seen;         /* the output of the last update */
  Candidate *cand;
  size_t cand_cap;
  bool *blob_used;
  int blob_cap;
  uint32_t next_id;
};

HeightmapTracker *
heightmap_tracker_new(const HeightmapTrackerParams *params)
{
  g_return_val_if_fail(params && params->gate > 0 && params->max_missed >= 0 &&
                       params->confirm >= 0, NULL);
  HeightmapTracker *t = g_new0(HeightmapTracker, 1);
  t->params = *params;
  t->tracks = g_new(Track, MAX_TRACKS);
  t->seen = g_new(HeightmapTrack, MAX_TRACKS);
  t->next_id = 1;
  return t;
}

void
heightmap_tracker_free(HeightmapTracker *t)
{
  if (!t)
    return;
  g_free(t->tracks);
  g_free(t->seen);
  g_free(t->cand);
  g_free(t->blob_used);
  g_free(t);
}

void
heightmap_tracker_set_params(HeightmapTracker *t, const HeightmapTrackerParams *params)
{
  g_return_if_fail(t && params && params->gate > 0 && params->max_missed >= 0 &&
                   params->confirm >= 0);
  t->params = *params;
}

static int
cmp_candidate(const void *a, const void *b)
{
  float da = ((const Candidate *) a)->dist, db = ((const Candidate *) b)->dist;
  return (da > db) - (da < db);
}

/* Seconds from a track's last match to now (0 when time does not advance). */
static double
since(const Track *tr, uint64_t now)
{
  return now > tr->seen_ns ? (double) (now - tr->seen_ns) * 1e-9 : 0.0;
}

static void
match(Track *t, const HeightmapBlob *b, uint64_t now)
{
  HeightmapTrack *tr = &t->pub;
  double span = since(t, now);
  if (span > 0) {
    double vx = (b->x - tr->x) / span, vy = (b->y - tr->y) / span;
    double s = hypot(vx, vy);
    if (s > MAX_SPEED) {
      vx *= MAX_SPEED / s;
      vy *= MAX_SPEED / s;
    }
    tr->vx += VELOCITY_GAIN * (vx - tr->vx);
    tr->vy += VELOCITY_GAIN * (vy - tr->vy);
  }
  tr->x = b->x;
  tr->y = b->y;
  tr->height = b->height;
  tr->area = b->area;
  tr->missed = 0;
  tr->hits++;
  t->seen_ns = now;
}

int
heightmap_tracker_update(HeightmapTracker *t, uint64_t time_ns, const HeightmapBlob *blobs,
                         int n_blobs, const HeightmapTrack **out)
{
  g_return_val_if_fail(t && out && (blobs || n_blobs == 0), 0);

  /* Candidates within the gate of the predictions (buffers grow to the largest frame). */
  size_t need = (size_t) t->n_tracks * (size_t) n_blobs;
  if (need > t->cand_cap) {
    t->cand_cap = MAX(need, 2 * t->cand_cap);
    t->cand = g_renew(Candidate, t->cand, t->cand_cap);
  }
  if (n_blobs > t->blob_cap) {
    t->blob_cap = MAX(n_blobs, 2 * t->blob_cap);
    t->blob_used = g_renew(bool, t->blob_used, t->blob_cap);
  }
  size_t nc = 0;
  for (int i = 0; i < t->n_tracks; i++) {
    const HeightmapTrack *tr = &t->tracks[i].pub;
    double dt = since(&t->tracks[i], time_ns);
    double px = tr->x + tr->vx * dt, py = tr->y + tr->vy * dt;
    for (int j = 0; j < n_blobs; j++) {
      double d = hypot(blobs[j].x - px, blobs[j].y - py);
      if (d <= t->params.gate)
        t->cand[nc++] = (Candidate) { (float) d, i, j };
    }
  }
  qsort(t->cand, nc, sizeof(Candidate), cmp_candidate);
  for (int j = 0; j < n_blobs; j++)
    t->blob_used[j] = false;
  for (int i = 0; i < t->n_tracks; i++)
    t->tracks[i].pub.missed++;      /* back to 0 for the matched */
  for (size_t k = 0; k < nc; k++) {
    Track *tr = &t->tracks[t->cand[k].track];
    if (tr->pub.missed == 0 || t->blob_used[t->cand[k].blob])
      continue;
    match(tr, &blobs[t->cand[k].blob], time_ns);
    t->blob_used[t->cand[k].blob] = true;
  }

  /* Drop the lost, age the rest (ordered by id: new tracks go last). */
  int kept = 0;
  for (int i = 0; i < t->n_tracks; i++) {
    HeightmapTrack *tr = &t->tracks[i].pub;
    /* a tentative track that misses a frame was noise: drop it at once */
    if (tr->missed > t->params.max_missed || (tr->missed > 0 && !tr->confirmed))
      continue;
    if (tr->missed > 0)
      tr->hits = 0;
    tr->confirmed |= tr->hits >= t->params.confirm;
    tr->age++;
    t->tracks[kept++] = t->tracks[i];
  }
  t->n_tracks = kept;
  for (int j = 0; j < n_blobs; j++) {
    if (t->blob_used[j])
      continue;
    if (t->n_tracks == MAX_TRACKS) {
      g_warning("heightmap: %d tracks, blob at (%.2f, %.2f) not tracked", MAX_TRACKS,
                blobs[j].x, blobs[j].y);
      continue;
    }
    t->tracks[t->n_tracks++] = (Track) {
      .pub = { .id = t->next_id++, .x = blobs[j].x, .y = blobs[j].y,
               .height = blobs[j].height, .area = blobs[j].area, .age = 1, .hits = 1,
               .confirmed = t->params.confirm <= 1 },
      .seen_ns = time_ns,
    };
  }

  int n_seen = 0;
  for (int i = 0; i < t->n_tracks; i++)
    if (t->tracks[i].pub.missed == 0 && t->tracks[i].pub.confirmed)
      t->seen[n_seen++] = t->tracks[i].pub;
  *out = t->seen;
  return n_seen;
}
