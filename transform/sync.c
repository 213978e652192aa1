/* sync.c: choosing the synchronization by mode. The commands and the
 * harness name a SyncMode; this is the one place that maps it to a pass
 * and to the name every report prints. Either way the streams must fit the
 * target's semaphores and registers (transform/resources.c), and both get
 * the device-read sharing (transform/share_reads.c). */
#include "transform/sync.h"
#include "transform/resources.h"

void transform_sync(Program *p, SyncMode mode) {
  switch (mode) {
  case SYNC_BARRIER: transform_barrier(p); break;
  case SYNC_UNROLLED: transform_unrolled(p); break;
  case SYNC_PAPER: transform_paper(p); break;
  default: transform_barrier_free(p); break;
  }
  if (p->diag.errors) return;
  share_device_reads(p);
  resources_check(p);
}

const char *sync_name(SyncMode mode) {
  static const char *const names[] = {"barrier-free", "barrier", "unrolled", "paper"};
  return names[mode];
}

const char *sync_ident(SyncMode mode) {
  static const char *const idents[] = {"barrier_free", "barrier", "unrolled", "paper"};
  return idents[mode];
}
