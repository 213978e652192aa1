/* sync.c: the sync modes. The commands and the harness name a SyncMode;
 * sync_modes is the one place that maps it to a pass, to the name every
 * report prints and --sync takes, and to the identifier in generated
 * kernel names. Whatever the mode, the streams get the store tidying
 * (transform/stores.c) and the device-read sharing (transform/share_reads.c)
 * and must fit the target's semaphores and registers (transform/resources.c). */
#include <string.h>

#include "transform/sync.h"
#include "transform/resources.h"

/* Every mode once, in enum order: its enum, name, identifier and pass. */
#define SYNC_MODES(X)                                                     \
  X(SYNC_BARRIER_FREE, "barrier-free", "barrier_free", transform_barrier_free) \
  X(SYNC_BARRIER, "barrier", "barrier", transform_barrier)                    \
  X(SYNC_UNROLLED, "unrolled", "unrolled", transform_unrolled)                \
  X(SYNC_PAPER, "paper", "paper", transform_paper)

#define SYNC_ROW(mode, name, ident, pass) [mode] = {name, ident, pass},
const SyncModeInfo sync_modes[SYNC_MODE_COUNT] = {SYNC_MODES(SYNC_ROW)};
#define SYNC_CHOICE(mode, name, ident, pass) [mode] = name,
const char *const sync_choices[SYNC_MODE_COUNT + 1] = {SYNC_MODES(SYNC_CHOICE)[SYNC_MODE_COUNT] = NULL};

void transform_sync(Program *p, SyncMode mode) {
  sync_modes[mode].pass(p);
  if (p->diag.errors) return;
  tidy_stores(p);
  share_device_reads(p);
  resources_check(p);
}

const char *sync_name(SyncMode mode) { return sync_modes[mode].name; }
const char *sync_ident(SyncMode mode) { return sync_modes[mode].ident; }

int sync_prefix(const char *text) {
  int best = -1;
  size_t best_len = 0;
  for (int m = 0; m < SYNC_MODE_COUNT; m++) {
    size_t n = strlen(sync_modes[m].name);
    if (n > best_len && !strncmp(text, sync_modes[m].name, n) && (text[n] == ':' || text[n] == '\0')) {
      best = m;
      best_len = n;
    }
  }
  return best;
}
