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
/* Requires: a checked kernel. Ensures: ir synchronized the way mode says
 * (one of the two passes above). transform/sync.c */
void transform_sync(Program *p, SyncMode mode);
/* Requires: p->ir from a sync pass. Ensures: each device element a node
 * list evaluates twice or more is read once, into a scalar.
 * transform/share_reads.c */
void share_device_reads(Program *p);
/* "barrier-free" or "barrier". transform/sync.c */
const char *sync_name(SyncMode mode);

#endif
