/* tracks.c: blobs -> tracks with stable ids (nearest neighbour, constant velocity).
 *
 * Each fused frame: every track is predicted to the frame's time; the candidate
 * (track, blob) pairs within the gate are taken in order of distance, each track and
 * each blob at most once (greedy nearest neighbour: optimal enough when players are
 * farther apart than they move in a frame, 0.36 m at 9 m/s and 25 fps). Unmatched blobs
 * start tracks; tracks unseen more than max_missed frames in a row are dropped. Ids are
 * never reused.
 *
 * A matched track's state (x, y, vx, vy) is updated by a constant-velocity Kalman filter:
 * white acceleration of sigma `acceleration` between frames, the blob's position as the
 * measurement with the blob's covariance (blobs.c: the range error of the disparity
 * along the view direction, which grows with the square of the distance, and a grid
 * cell across it). Far players, whose blobs jump along the view direction from frame to
 * frame, are smoothed along it; near ones follow their blobs (docs/heightmap.md). A blob
 * whose velocity was measured from the optical flow (velocity.c) adds that velocity as a
 * second measurement, with its variance, in a second update (independent errors: the
 * same as one joint update); a new track starts from it. With `acceleration` 0 a matched
 * track takes the blob's position, and its measured velocity when it has one, else the
 * blend of the old velocity and the step just seen (VELOCITY_GAIN).
 * A blob higher than max_height (when not 0) starts no track: players stand lower, the
 * smears of the goal frames and the ball in flight often do not; a tracked player's
 * blob keeps its track whatever its height (a jump).
 * Only confirmed tracks are reported: matched in `confirm` frames at least once, with no
 * more than `confirm_gap` frames in a row without a blob between them (0: consecutive);
 * a tentative track that misses more is dropped at once. Disparity noise on weakly
 * textured ground makes blobs that do not come back in the next frame (its errors are not
 * correlated from frame to frame, docs/heightmap.md); players do, though a far player's
 * blob of a few pixels comes and goes. A confirmed track unseen for 1..`coast` frames is
 * still reported, at its predicted position, with `missed` saying for how long.
 */
#include "heightmap/heightmap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TRACKS 1024
#define VELOCITY_GAIN 0.5
#define MAX_SPEED 12.0   /* m/s: faster steps are matching errors, not players */
#define START_SPEED 6.0  /* m/s: sigma of a new track's velocity in each axis */
#define MIN_VARIANCE 1e-6 /* m^2: added to a blob's covariance (0 = exact) */

typedef struct {
  HeightmapTrack pub;
  uint64_t seen_ns;             /* time of the last matched blob */
  double P[4][4];               /* covariance of (x, y, vx, vy) at seen_ns */
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

static bool
params_valid(const HeightmapTrackerParams *p)
{
  return p && p->gate > 0 && p->max_missed >= 0 && p->confirm >= 0 && p->confirm_gap >= 0 &&
         p->coast >= 0 && p->acceleration >= 0;
}

HeightmapTracker *
heightmap_tracker_new(const HeightmapTrackerParams *params)
{
  g_return_val_if_fail(params_valid(params), NULL);
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
  g_return_if_fail(t && params_valid(params));
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
clamp_speed(double *vx, double *vy)
{
  double s = hypot(*vx, *vy);
  if (s > MAX_SPEED) {
    *vx *= MAX_SPEED / s;
    *vy *= MAX_SPEED / s;
  }
}

/* The Kalman update with a measurement z of state components (a, a + 1) (0: position,
 * 2: velocity) of covariance R (xx, xy, yy): S = P_aa + R, K = P[:, a] S^-1. */
static void
update(Track *t, int a, const double z[2], const double R[3])
{
  HeightmapTrack *tr = &t->pub;
  double (*P)[4] = t->P;
  double *state[4] = { &tr->x, &tr->y, &tr->vx, &tr->vy };
  double s00 = P[a][a] + R[0] + MIN_VARIANCE, s01 = P[a][a + 1] + R[1];
  double s11 = P[a + 1][a + 1] + R[2] + MIN_VARIANCE;
  double det = s00 * s11 - s01 * s01;
  double i00 = s11 / det, i01 = -s01 / det, i11 = s00 / det;
  double K[4][2];
  for (int i = 0; i < 4; i++) {
    K[i][0] = P[i][a] * i00 + P[i][a + 1] * i01;
    K[i][1] = P[i][a] * i01 + P[i][a + 1] * i11;
  }
  double nx = z[0] - *state[a], ny = z[1] - *state[a + 1];
  for (int i = 0; i < 4; i++)
    *state[i] += K[i][0] * nx + K[i][1] * ny;
  double old[2][4];                    /* P -= K P[a, :] */
  for (int j = 0; j < 4; j++) {
    old[0][j] = P[a][j];
    old[1][j] = P[a + 1][j];
  }
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      P[i][j] -= K[i][0] * old[0][j] + K[i][1] * old[1][j];
  for (int i = 0; i < 4; i++)          /* keep it symmetric */
    for (int j = 0; j < i; j++)
      P[i][j] = P[j][i] = 0.5 * (P[i][j] + P[j][i]);
}

/* The Kalman filter: predict over `span` seconds, then update with the blob's position
 * and, when measured, its velocity. */
static void
filter(Track *t, const HeightmapBlob *b, double span, double accel)
{
  HeightmapTrack *tr = &t->pub;
  double (*P)[4] = t->P;
  /* predict: x += v dt; P = F P F^T + Q (white acceleration) */
  double dt = span;
  tr->x += tr->vx * dt;
  tr->y += tr->vy * dt;
  for (int i = 0; i < 4; i++)          /* P F^T: column j += dt * column j+2 */
    for (int j = 0; j < 2; j++)
      P[i][j] += dt * P[i][j + 2];
  for (int j = 0; j < 4; j++)          /* F (P F^T): row i += dt * row i+2 */
    for (int i = 0; i < 2; i++)
      P[i][j] += dt * P[i + 2][j];
  double q = accel * accel, dt2 = dt * dt;
  for (int i = 0; i < 2; i++) {
    P[i][i] += q * dt2 * dt2 / 4;
    P[i][i + 2] += q * dt2 * dt / 2;
    P[i + 2][i] += q * dt2 * dt / 2;
    P[i + 2][i + 2] += q * dt2;
  }
  const double zp[2] = { b->x, b->y };
  update(t, 0, zp, b->cov);
  if (b->has_velocity) {
    const double zv[2] = { b->vx, b->vy };
    update(t, 2, zv, b->velocity_cov);
  }
}

/* A new track's covariance: the blob's for the position, START_SPEED for the velocity. */
static void
filter_start(Track *t, const HeightmapBlob *b)
{
  memset(t->P, 0, sizeof t->P);
  t->P[0][0] = b->cov[0] + MIN_VARIANCE;
  t->P[0][1] = t->P[1][0] = b->cov[1];
  t->P[1][1] = b->cov[2] + MIN_VARIANCE;
  if (b->has_velocity) {
    t->P[2][2] = b->velocity_cov[0] + MIN_VARIANCE;
    t->P[2][3] = t->P[3][2] = b->velocity_cov[1];
    t->P[3][3] = b->velocity_cov[2] + MIN_VARIANCE;
  } else {
    t->P[2][2] = t->P[3][3] = START_SPEED * START_SPEED;
  }
}

static void
match(Track *t, const HeightmapBlob *b, uint64_t now, double accel)
{
  HeightmapTrack *tr = &t->pub;
  double span = since(t, now);
  if (accel > 0) {
    filter(t, b, span, accel);
  } else {
    if (b->has_velocity) {
      tr->vx = b->vx;
      tr->vy = b->vy;
    } else if (span > 0) {
      double vx = (b->x - tr->x) / span, vy = (b->y - tr->y) / span;
      clamp_speed(&vx, &vy);
      tr->vx += VELOCITY_GAIN * (vx - tr->vx);
      tr->vy += VELOCITY_GAIN * (vy - tr->vy);
    }
    tr->x = b->x;
    tr->y = b->y;
    filter_start(t, b);     /* ready if the filter is turned on */
  }
  clamp_speed(&tr->vx, &tr->vy);
  tr->has_measured = b->has_velocity;
  tr->measured_vx = b->vx;
  tr->measured_vy = b->vy;
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
  /* t->cand is NULL until the first candidate: qsort(NULL, 0, ...) is undefined */
  if (nc > 1)
    qsort(t->cand, nc, sizeof(Candidate), cmp_candidate);
  for (int j = 0; j < n_blobs; j++)
    t->blob_used[j] = false;
  for (int i = 0; i < t->n_tracks; i++)
    t->tracks[i].pub.missed++;      /* back to 0 for the matched */
  for (size_t k = 0; k < nc; k++) {
    Track *tr = &t->tracks[t->cand[k].track];
    if (tr->pub.missed == 0 || t->blob_used[t->cand[k].blob])
      continue;
    match(tr, &blobs[t->cand[k].blob], time_ns, t->params.acceleration);
    t->blob_used[t->cand[k].blob] = true;
  }

  /* Drop the lost, age the rest (ordered by id: new tracks go last). */
  int kept = 0;
  for (int i = 0; i < t->n_tracks; i++) {
    HeightmapTrack *tr = &t->tracks[i].pub;
    /* a tentative track that misses more than confirm_gap frames in a row was noise */
    if (tr->missed > t->params.max_missed ||
        (!tr->confirmed && tr->missed > t->params.confirm_gap))
      continue;
    if (tr->missed > 0 && tr->confirmed)
      tr->hits = 0;
    tr->confirmed |= tr->hits >= t->params.confirm;
    tr->age++;
    t->tracks[kept++] = t->tracks[i];
  }
  t->n_tracks = kept;
  for (int j = 0; j < n_blobs; j++) {
    /* higher than a player stands: not a new player (a goal frame's or the ball's smear);
     * a tracked player in a jump kept his track above */
    if (t->blob_used[j] || (t->params.max_height > 0 && blobs[j].height > t->params.max_height))
      continue;
    if (t->n_tracks == MAX_TRACKS) {
      g_warning("heightmap: %d tracks, blob at (%.2f, %.2f) not tracked", MAX_TRACKS,
                blobs[j].x, blobs[j].y);
      continue;
    }
    t->tracks[t->n_tracks++] = (Track) {
      .pub = { .id = t->next_id++, .x = blobs[j].x, .y = blobs[j].y,
               .vx = blobs[j].has_velocity ? blobs[j].vx : 0.0,
               .vy = blobs[j].has_velocity ? blobs[j].vy : 0.0,
               .has_measured = blobs[j].has_velocity, .measured_vx = blobs[j].vx,
               .measured_vy = blobs[j].vy, .height = blobs[j].height,
               .area = blobs[j].area, .age = 1, .hits = 1,
               .confirmed = t->params.confirm <= 1 },
      .seen_ns = time_ns,
    };
    filter_start(&t->tracks[t->n_tracks - 1], &blobs[j]);
  }

  /* The confirmed tracks seen now, and those coasting: unseen for at most `coast` frames,
   * reported where the prediction puts them (their state stays at the last match). */
  int n_seen = 0;
  for (int i = 0; i < t->n_tracks; i++) {
    const Track *tr = &t->tracks[i];
    if (!tr->pub.confirmed || tr->pub.missed > t->params.coast)
      continue;
    HeightmapTrack *o = &t->seen[n_seen++];
    *o = tr->pub;
    if (o->missed > 0) {
      double dt = since(tr, time_ns);
      o->x += o->vx * dt;
      o->y += o->vy * dt;
    }
  }
  *out = t->seen;
  return n_seen;
}
