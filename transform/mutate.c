/* mutate.c: deliberately broken synchronization, for tests only.
 *
 * The oracle's mutation tests and the runtime's watchdog test need streams
 * that are wrong in a known way: one wait dropped, or one threshold moved
 * by one. Waits are numbered engine by engine, in pre-order (a loop's body
 * where the loop stands), so a caller can enumerate every mutant by asking
 * for the count first (index < 0). A conditional's then-branch comes
 * before its else-branch. */
#include "frontend/program.h"
#include "transform/ir.h"

typedef struct Finder {
  int index; /* the wait to mutate */
  int seen;  /* waits counted so far */
  IrNode **link; /* the pointer to the index-th wait */
} Finder;

static void find_waits(Finder *f, IrNode **link) {
  for (; *link; link = &(*link)->next) {
    IrNode *n = *link;
    if (n->kind == IR_WAIT && f->seen++ == f->index) f->link = link;
    if (n->kind == IR_LOOP || n->kind == IR_IF) find_waits(f, &n->body);
    if (n->kind == IR_IF) find_waits(f, &n->orelse);
  }
}

int ir_mutate(Program *p, int kind, int index) {
  if (!p->ir) bug("ir_mutate: no IR");
  Finder f = {index, 0, NULL};
  for (int e = 0; e < p->ir->nengines; e++) find_waits(&f, &p->ir->streams[e].body);
  if (index < 0) return f.seen;
  if (!f.link) return -1;
  IrNode *w = *f.link;
  p->ir->resources = NULL; /* measured again for the mutated streams */
  switch (kind) {
  case DROP_WAIT: *f.link = w->next; break;
  case LOWER_THRESHOLD:
    w->threshold = ir_binary(p->arena, IX_SUB, w->threshold, ir_const(p->arena, 1), w->line);
    break;
  case RAISE_THRESHOLD:
    w->threshold = ir_binary(p->arena, IX_ADD, w->threshold, ir_const(p->arena, 1), w->line);
    break;
  default: bug("ir_mutate: kind %d", kind);
  }
  return f.seen;
}
