/* barrier.c: the baseline the paper measured against.
 *
 * Every engine runs every loop. A full barrier of all engines stands at
 * every loop-iteration boundary: at loop entry (before the first
 * iteration) and at the end of each iteration (so between iterations and
 * after the last). A barrier resets every counter to 0, so the code between
 * two barriers is a straight-line region with its own positions: a
 * consumer b waits for the 1-based position, within the region, of the
 * latest e-instruction in the region that may conflict with it. Conflicts
 * across a barrier are ordered by the barrier itself. A conditional is a
 * scope that runs zero times or once, like a loop: a barrier before it and
 * one at the end of each branch. */
#include <limits.h>
#include <string.h>

#include "frontend/program.h"
#include "transform/deps.h"
#include "transform/sync.h"

typedef struct NodeList {
  IrNode *head, **tail;
} NodeList;

/* The region being walked. Its instructions are consecutive ids (a
 * region ends at every loop boundary): [first, next id). */
typedef struct Region {
  int first;     /* id of its first instruction */
  int *position; /* [instruction id]: its 1-based position on its engine in the region */
  int count[BFRT_MAX_ENGINES];
} Region;

/* Per engine, the highest threshold waited for on each counter in the region. */
typedef int64_t Waited[BFRT_MAX_ENGINES];

typedef struct Builder {
  Program *p;
  const Deps *d;
  Region region;
} Builder;

static void append(NodeList *l, IrNode *n) {
  *l->tail = n;
  l->tail = &n->next;
}

static void begin_region(Builder *b, int first) {
  b->region.first = first;
  memset(b->region.count, 0, sizeof b->region.count);
}

/* The latest e-instruction of the region before consumer that may conflict
 * with it, or -1: for each resource the consumer touches, a backward scan
 * of e's accessors of it from the consumer down to the region's start.
 * (Scanning the region itself made the baseline quadratic in its length.) */
static int latest_in_region(const Builder *b, int consumer, int e) {
  const Deps *d = b->d;
  const InstrInfo *in = &d->instrs[consumer];
  int best = -1;
  for (int j = 0; j < in->naccesses; j++) {
    const AccessorList *l = deps_accessors(d, in->accesses[j].res, e);
    for (int i = deps_lower_bound(l, consumer) - 1; i >= 0 && l->ids[i] >= b->region.first && l->ids[i] > best; i--)
      if (deps_may_conflict(d, l->ids[i], consumer, INT_MAX)) {
        best = l->ids[i];
        break;
      }
  }
  return best;
}

/* The wait of b on engine e: the latest may-conflicting e-instruction of the region. */
static IrNode *region_wait(Builder *b, int consumer, int e) {
  int a = latest_in_region(b, consumer, e);
  if (a < 0) return NULL;
  IrNode *w = ir_node(b->p->arena, IR_WAIT, b->d->instrs[consumer].line);
  WaitWhy *why = ARENA_NEW(b->p->arena, WaitWhy);
  why->consumer_line = b->d->instrs[consumer].line;
  why->producer_lines[0] = b->d->instrs[a].line;
  why->nproducers = 1;
  why->kind = deps_kind(b->d, a, consumer);
  why->distance = "static";
  w->engine = e;
  w->threshold = ir_const(b->p->arena, b->region.position[a]);
  w->why = why;
  return w;
}

/* Engine c's copy of the region's instruction `id`, with its waits. A wait
 * that an earlier one of c on the same counter implies is left out. */
static void emit_instr(Builder *b, int c, int id, int64_t *waited, NodeList *out) {
  for (int e = 0; e < b->d->nengines; e++) {
    if (e == c) continue;
    IrNode *w = region_wait(b, id, e);
    if (!w || w->threshold->value <= waited[e]) continue;
    waited[e] = w->threshold->value;
    append(out, w);
  }
  append(out, ir_op(b->p, b->d->instrs[id].stmt, b->d->instrs[id].line));
}

static void walk_list(Builder *b, const Stmt *s, NodeList *outs, Waited *waited);

static void add_to_region(Builder *b, int id, NodeList *outs, Waited *waited) {
  int e = b->d->instrs[id].engine;
  emit_instr(b, e, id, waited[e], &outs[e]);
  b->region.position[id] = ++b->region.count[e];
}

static IrNode *barrier(Program *p, int line) { return ir_node(p->arena, IR_BARRIER, line); }

/* Every engine: barrier; for ... { body; barrier }. Regions restart at each. */
static void walk_loop(Builder *b, const Stmt *loop, NodeList *outs, Waited *waited) {
  Program *p = b->p;
  int ne = b->d->nengines, line = b->d->loops[loop->loop_id].line;
  NodeList *bodies = ARENA_ARRAY(p->arena, NodeList, ne);
  Waited *inner = ARENA_ARRAY(p->arena, Waited, ne);
  for (int e = 0; e < ne; e++) bodies[e] = (NodeList){NULL, &bodies[e].head};
  begin_region(b, b->d->loops[loop->loop_id].first);
  walk_list(b, loop->body, bodies, inner);
  for (int e = 0; e < ne; e++) {
    append(&bodies[e], barrier(p, line));
    append(&outs[e], barrier(p, line));
    IrNode *n = ir_node(p->arena, IR_LOOP, line);
    n->loop_id = loop->loop_id;
    n->lo = ir_from_expr(p, loop->lo);
    n->hi = ir_from_expr(p, loop->hi);
    n->body = bodies[e].head;
    append(&outs[e], n);
    memset(waited[e], 0, sizeof waited[e]);
  }
  begin_region(b, b->d->loops[loop->loop_id].end);
}

/* The id of the first instruction in list s, or none if it has none. */
static int first_id(const Stmt *s, int none) {
  for (; s; s = s->next) {
    if (s->kind == ST_INSTR) return s->instr_id;
    int id = first_id(s->body, -1);
    if (id < 0 && s->kind == ST_IF) id = first_id(s->orelse, -1);
    if (id >= 0) return id;
  }
  return none;
}

/* A conditional is a scope that runs 0 or 1 times (the paper's reading):
 * every engine: barrier; if (cond) { then; barrier } else { else; barrier }.
 * Each branch is a region of its own; an empty else needs no barrier, as
 * nothing ran since the one before the conditional. */
static void walk_if(Builder *b, const Stmt *st, NodeList *outs, Waited *waited) {
  Program *p = b->p;
  int ne = b->d->nengines, line = source_line(&p->src, st->span.begin);
  NodeList *branches[2];
  IrExpr *cond = ir_from_cond(p, st->cond);
  for (int side = 0; side < 2; side++) {
    const Stmt *body = side ? st->orelse : st->body;
    branches[side] = ARENA_ARRAY(p->arena, NodeList, ne);
    for (int e = 0; e < ne; e++) branches[side][e] = (NodeList){NULL, &branches[side][e].head};
    if (!body && side) continue;
    Waited *inner = ARENA_ARRAY(p->arena, Waited, ne);
    begin_region(b, first_id(body, b->d->ifs[st->if_id].end));
    walk_list(b, body, branches[side], inner);
    for (int e = 0; e < ne; e++) append(&branches[side][e], barrier(p, line));
  }
  for (int e = 0; e < ne; e++) {
    append(&outs[e], barrier(p, line));
    IrNode *n = ir_node(p->arena, IR_IF, line);
    n->cond = cond;
    n->body = branches[0][e].head;
    n->orelse = branches[1][e].head;
    append(&outs[e], n);
    memset(waited[e], 0, sizeof waited[e]);
  }
  begin_region(b, b->d->ifs[st->if_id].end);
}

static void walk_list(Builder *b, const Stmt *s, NodeList *outs, Waited *waited) {
  for (; s; s = s->next) {
    switch (s->kind) {
    case ST_INSTR: add_to_region(b, s->instr_id, outs, waited); break;
    case ST_FOR: walk_loop(b, s, outs, waited); break;
    case ST_BLOCK: walk_list(b, s->body, outs, waited); break;
    case ST_LET: break; /* a let is a name: its uses are its expression (sema) */
    case ST_IF: walk_if(b, s, outs, waited); break;
    }
  }
}

/* Requires: a checked kernel. Ensures: p->ir with a barrier at every loop
 * iteration boundary and static thresholds between barriers. */
void transform_barrier(Program *p) {
  Builder b = {0};
  b.p = p;
  b.d = deps_build(p);
  b.region.position = ARENA_ARRAY(p->arena, int, b.d->ninstrs + 1);
  p->ir = ARENA_NEW(p->arena, IrProgram);
  p->ir->sync = SYNC_BARRIER;
  p->ir->nengines = b.d->nengines;
  NodeList outs[BFRT_MAX_ENGINES];
  Waited waited[BFRT_MAX_ENGINES] = {{0}};
  for (int e = 0; e < b.d->nengines; e++) outs[e] = (NodeList){NULL, &outs[e].head};
  begin_region(&b, 0);
  walk_list(&b, p->kernel->body, outs, waited);
  for (int e = 0; e < b.d->nengines; e++) p->ir->streams[e].body = outs[e].head;
}
