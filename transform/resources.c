/* resources.c: what each engine's stream needs of the machine, and
 * whether the target has it.
 *
 * A hardware engine runs its stream with a few semaphores it can wait on
 * and a few integer registers in its sequencer; bfsync's bookkeeping must
 * fit them (issue 12). This pass counts, per engine, from the IR:
 *
 *   semaphores  the counters the engine waits on (one per producer engine;
 *               the paper's one counter per engine, shared by every loop);
 *   registers   the loop state live at the deepest nesting (an induction
 *               variable and its evaluated bound per level), the
 *               bookkeeping scalars (running counts, ir.h IR_SET), one
 *               `known` guard per counter waited on, and one temporary
 *               to evaluate thresholds in when some threshold is not a
 *               constant;
 *   scratch     the tracking arrays (ir.h IR_STORE), 8 bytes a cell, in the
 *               on-chip scratch area bfrt_scratch allocates; their length
 *               is a parameter expression, printed as such;
 *   bookkeeping the operations per instruction, measured at run time by
 *               the oracle (`bfsync verify`), not here.
 *
 * resources_check compares the counts with the target's `semaphores` and
 * `registers` of the engine's kind (docs/targets.md) and reports what is
 * short as an error naming the engine, what it needs and what it has.
 * Nothing falls back to a barrier. Spilling to scratch and sharing
 * registers between loops are not done (docs/algorithm.md, "Fitting the
 * machine"): a kernel that does not fit is refused with the shortfall. */
#include "transform/resources.h"

#include <stdbool.h>

#include "frontend/diag.h"
#include "frontend/target.h"
#include "transform/ir.h"

static void count_nodes(const IrNode *n, int depth, EngineResources *r, bool waits_on[BFRT_MAX_ENGINES]) {
  if (depth > r->loop_depth) r->loop_depth = depth;
  for (; n; n = n->next) {
    switch (n->kind) {
    case IR_WAIT:
      waits_on[n->engine] = true;
      if (n->threshold->kind != IX_CONST) r->temporaries = 1;
      break;
    case IR_LOOP: count_nodes(n->body, depth + 1, r, waits_on); break;
    case IR_IF: /* a branch holds no loop count: its condition is recomputed */
      count_nodes(n->body, depth, r, waits_on);
      count_nodes(n->orelse, depth, r, waits_on);
      break;
    default: break;
    }
  }
}

EngineResources resources_of(const Program *p, int engine) {
  const IrStream *s = &p->ir->streams[engine];
  EngineResources r = {0};
  bool waits_on[BFRT_MAX_ENGINES] = {false};
  count_nodes(s->body, 0, &r, waits_on);
  for (int e = 0; e < BFRT_MAX_ENGINES; e++) r.semaphores += waits_on[e];
  r.scalars = s->nvars;
  r.registers = 2 * r.loop_depth + r.scalars + r.semaphores + r.temporaries;
  r.arrays = s->narrays;
  return r;
}

int resources_check(Program *p) {
  const Target *t = p->target;
  int short_of = 0;
  for (int e = 0; e < t->nengines; e++) {
    EngineResources r = resources_of(p, e);
    int kind = t->engines[e].kind;
    int64_t sems = t->semaphores[kind], regs = t->registers[kind];
    Span none = p->kernel->span;
    if (sems && r.semaphores > sems) {
      diag_error(&p->diag, none,
                 "engine %s waits on %d counters, but the target's %s engines can wait on %lld "
                 "(semaphores)",
                 t->engines[e].name, r.semaphores, t->engines[e].name, (long long)sems);
      short_of++;
    }
    if (regs && r.registers > regs) {
      diag_error(&p->diag, none,
                 "engine %s needs %d registers (%d loop levels x 2, %d bookkeeping scalars, %d counter "
                 "guards, %d temporaries), but the target gives it %lld (registers)",
                 t->engines[e].name, r.registers, r.loop_depth, r.scalars, r.semaphores, r.temporaries,
                 (long long)regs);
      short_of++;
    }
  }
  return short_of ? -1 : 0;
}
