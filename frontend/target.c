/* target.c: the built-in default target, trn1, and lookups over a Target.
 *
 * A target is data: its engines (name and kind) and its cost model. Which
 * ops an engine can run follows from its kind through the op table, so a
 * target with several DMA queues (dma, dma1, ...) needs no code. Costs stay
 * zero here; the cost defaults and the target-file loader live elsewhere. */
#include "frontend/target.h"

#include <string.h>

#include "frontend/ops.h"

static const Target trn1 = {
    .name = "trn1",
    .nengines = 5,
    .engines = {{"pe", BFRT_KIND_PE},
                {"act", BFRT_KIND_ACT},
                {"dve", BFRT_KIND_DVE},
                {"pool", BFRT_KIND_POOL},
                {"dma", BFRT_KIND_DMA}},
};

const Target *target_default(void) { return &trn1; }

int target_engine(const Target *t, const char *name) {
  for (int e = 0; e < t->nengines; e++)
    if (!strcmp(t->engines[e].name, name)) return e;
  return -1;
}

int target_can_run(const Target *t, int engine, int op) {
  if (engine < 0 || engine >= t->nengines || op < 0 || op >= BFRT_NOPS) return 0;
  return (op_info(op)->engines >> t->engines[engine].kind) & 1;
}
