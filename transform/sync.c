/* sync.c: choosing the synchronization by mode. The commands and the
 * harness name a SyncMode; this is the one place that maps it to a pass
 * and to the name every report prints. Either way the streams must fit the
 * target's semaphores and registers (transform/resources.c), and both get
 * the device-read sharing (transform/share_reads.c). */
#include "transform/sync.h"
#include "transform/resources.h"

void transform_sync(Program *p, SyncMode mode) {
  if (mode == SYNC_BARRIER)
    transform_barrier(p);
  else
    transform_barrier_free(p);
  if (p->diag.errors) return;
  share_device_reads(p);
  resources_check(p);
}

const char *sync_name(SyncMode mode) { return mode == SYNC_BARRIER ? "barrier" : "barrier-free"; }
