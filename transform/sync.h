/* sync.h: the synchronization passes, one per sync mode, and their names.
 * Each takes a checked kernel and leaves p->ir synchronized (transform/ir.h). */
#ifndef SYNC_H
#define SYNC_H

#include "frontend/program.h"
#include "transform/ir.h"

/* Requires: a checked kernel. Ensures: ir with exact counter waits and no
 * barrier. transform/barrier_free.c */
void transform_barrier_free(Program *p);
/* Requires: a checked kernel. Ensures: ir with a barrier at every loop
 * iteration boundary and static thresholds between them. transform/barrier.c */
void transform_barrier(Program *p);
/* Requires: a checked kernel, p->params (and p->device_ints) bound.
 * Ensures: ir of straight-line streams, every loop unrolled, every
 * threshold a constant. transform/unrolled.c */
void transform_unrolled(Program *p);
/* Requires: a checked kernel. Ensures: ir with the paper's allocation (two
 * registers per loop and engine, masked thresholds) for its three
 * dependence shapes and barriers for the rest. transform/paper.c */
void transform_paper(Program *p);
/* Requires: a checked kernel. Ensures: ir synchronized the way mode says
 * (its pass in sync_modes), its device reads shared, and the streams fit
 * the target's semaphores and registers. transform/sync.c */
void transform_sync(Program *p, SyncMode mode);
/* Requires: p->ir from a sync pass. Ensures: no tracking-array store
 * overwritten unseen, and a loop's invariant stores that it never loads
 * done once after it. transform/stores.c */
void tidy_stores(Program *p);
/* Requires: p->ir from a sync pass. Ensures: each device element a node
 * list evaluates twice or more is read once, into a scalar.
 * transform/share_reads.c */
void share_device_reads(Program *p);

/* One row per SyncMode, in enum order: the one place a mode is named. */
typedef struct SyncModeInfo {
  const char *name;            /* as --sync takes it and every report prints it */
  const char *ident;           /* the same as a C identifier (generated kernel names) */
  void (*pass)(Program *);     /* requires a checked kernel, ensures p->ir */
} SyncModeInfo;
extern const SyncModeInfo sync_modes[SYNC_MODE_COUNT];
/* The names in enum order, NULL-terminated: an ARG_CHOICE list (driver/args.h). */
extern const char *const sync_choices[SYNC_MODE_COUNT + 1];

const char *sync_name(SyncMode mode);
const char *sync_ident(SyncMode mode);
/* The mode whose name begins text (followed by ':' or the end), or -1. */
int sync_prefix(const char *text);

#endif
