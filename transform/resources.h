/* resources.h: an engine's stream measured against the machine, and the
 * values it keeps in scratch to fit it (transform/resources.c). */
#ifndef RESOURCES_H
#define RESOURCES_H

#include <stdbool.h>
#include <stdint.h>

#include "frontend/program.h"
#include "transform/ir.h"

/* What an engine keeps in on-chip scratch instead of a register, to fit
 * its kind's `registers` (docs/algorithm.md, section 7.4). Every access to
 * a value in scratch is one scratch operation, charged by the simulator
 * (bfrt_spill). */
typedef struct SpillPlan {
  bool *scalar;       /* by bookkeeping scalar */
  bool *bound;        /* by loop id: a loop's evaluated bound */
  uint32_t guards;    /* engines whose `known` guard is in scratch */
  uint32_t last_read; /* engines whose last-read count is in scratch */
} SpillPlan;

typedef struct EngineResources {
  int semaphores;     /* counters the engine waits on */
  int loop_depth;     /* deepest nesting of the loops it runs */
  int loop_registers; /* at the deepest point: one count per level, and its bound when held */
  int nscalars;       /* bookkeeping scalars of the stream */
  int guards;         /* `known` guards, one per counter waited on, not in scratch */
  int shared;         /* registers the scalars and guards not in scratch need, shared by live range */
  int last_read;      /* last-read counts in registers, one per tracked counter (B < 64) */
  int temporaries;    /* the most one node needs at once to evaluate its expressions */
  int registers;      /* loop_registers + shared + last_read + temporaries */
  int arrays;         /* tracking arrays, in scratch */
  int spilled;        /* values kept in scratch to fit the target's registers */
  int min_registers;  /* registers with every value that can be in scratch there */
  int producer_loads; /* scratch loads per op of this engine: its consumers' last-read
                         counts of its counter in scratch, which its back-pressure compares */
  SpillPlan plan;     /* which values are in scratch */
} EngineResources;

/* Requires: p->ir. Ensures: what engine's stream needs; when its kind's
 * `registers` is set and the stream needs more, the cheapest values (by
 * static accesses weighted by loop depth) are put in scratch until it fits,
 * or all of them when it cannot (then registers > the limit). */
EngineResources resources_of(const Program *p, int engine);
/* Requires: p->ir. Ensures: [e] = resources_of(p, e) for every engine,
 * with producer_loads set (it needs every engine's plan): the plan that
 * resources_check, the emitter and `compile --resources` all read,
 * computed once and kept in p->ir (ir_mutate drops it). */
const EngineResources *resources_plan(const Program *p);
/* Requires: p->ir. Ensures: 0 when every engine fits its kind's
 * semaphores and registers (docs/targets.md), spilling to scratch where it
 * must, else -1 after an error per shortfall on p->diag, naming the
 * engine, the resource, what it needs and what it has. */
int resources_check(Program *p);

#endif
