/* sync.c: choosing the synchronization by mode. The commands and the
 * harness name a SyncMode; this is the one place that maps it to a pass
 * and to the name every report prints. */
#include "frontend/program.h"

void transform_sync(Program *p, SyncMode mode) {
  if (mode == SYNC_BARRIER)
    transform_barrier(p);
  else
    transform_barrier_free(p);
}

const char *sync_name(SyncMode mode) { return mode == SYNC_BARRIER ? "barrier" : "barrier-free"; }
