/* resources.h: an engine's stream measured against the machine
 * (transform/resources.c). */
#ifndef RESOURCES_H
#define RESOURCES_H

#include "frontend/program.h"

typedef struct EngineResources {
  int semaphores;  /* counters the engine waits on */
  int loop_depth;  /* deepest nesting of the loops it runs */
  int scalars;     /* bookkeeping scalars */
  int temporaries; /* for evaluating non-constant thresholds */
  int registers;   /* 2 * loop_depth + scalars + semaphores (known guards) + temporaries */
  int arrays;      /* tracking arrays, in scratch */
} EngineResources;

/* Requires: p->ir. Ensures: what engine's stream needs. */
EngineResources resources_of(const Program *p, int engine);
/* Requires: p->ir. Ensures: 0 when every engine fits its kind's
 * semaphores and registers (docs/targets.md), else -1 after an error per
 * shortfall on p->diag, naming the engine, what it needs and what it has. */
int resources_check(Program *p);

#endif
