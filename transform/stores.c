/* stores.c: fewer tracking-array stores, after the sync pass.
 *
 * A stream stores positions into its own tracking arrays and only its own
 * waits load them (transform/barrier_free.c), so a store matters only
 * through the loads that can see it. Two rewrites follow, each sound for
 * that reason alone:
 *
 *   - a dead store: `store a[x] = v` followed, in the same node list, by
 *     `store a[x] = w` with nothing between that loads a, sets a variable
 *     x reads, or is a loop, a conditional or a barrier, is dropped (the
 *     same index expression in the same environment is the same entry);
 *   - a store after the loop: a store at the top of loop L's body whose
 *     index and value read no variable the body sets, no array and no
 *     device integer, into an array the body neither loads nor stores
 *     otherwise, leaves after L only the value of L's last iteration; it
 *     becomes `if (trips(lo, hi) > 0) store a[x] = v[var := hi - 1]` just
 *     after L, once instead of once per iteration. L's bounds are
 *     evaluated again there, so they too must read nothing the body sets
 *     and no device integer; a loop left with an empty body is removed.
 *
 * The stores that remain hold the same values at every load, so every
 * wait's threshold is unchanged (verify's oracle and the proof's checker
 * judge the result like any other stream). */
#include <stdbool.h>

#include "transform/counting.h"
#include "transform/sync.h"

/* How many variables a loop body may set for its stores to be moved (a
 * body setting more keeps its stores: a bound on the scan, not a limit). */
enum { MAX_BODY_SETS = 64 };

typedef struct VarSet {
  int var[MAX_BODY_SETS];
  int n;
  bool overflow;
} VarSet;

static bool reads_var(const IrExpr *e, int var) {
  if (!e) return false;
  if (e->kind == IX_VAR) return e->id == var;
  return reads_var(e->a, var) || reads_var(e->b, var) || reads_var(e->c, var);
}

static bool reads_array(const IrExpr *e, int array) {
  if (!e) return false;
  if (e->kind == IX_LOAD && e->id == array) return true;
  return reads_array(e->a, array) || reads_array(e->b, array) || reads_array(e->c, array);
}

/* Whether e reads any array or device integer, or checks an hbm tile's
 * bounds (which at_var does not rebuild). */
static bool reads_memory(const IrExpr *e) {
  if (!e) return false;
  if (e->kind == IX_LOAD || e->kind == IX_ELEM || e->kind == IX_HBM_ROW || e->kind == IX_ROWS) return true;
  return reads_memory(e->a) || reads_memory(e->b) || reads_memory(e->c);
}

/* Whether nodes n (nested bodies included) load array, or store it other
 * than through node `except`. */
static bool touches_array(const IrNode *n, int array, const IrNode *except) {
  for (; n; n = n->next) {
    if (n->kind == IR_STORE && n->array == array && n != except) return true;
    const IrExpr *xs[IR_NODE_EXPRS];
    int k = ir_node_exprs(n, xs);
    for (int i = 0; i < k; i++)
      if (reads_array(xs[i], array)) return true;
    if ((n->kind == IR_LOOP || n->kind == IR_IF) &&
        (touches_array(n->body, array, except) || touches_array(n->orelse, array, except)))
      return true;
  }
  return false;
}

static void collect_sets(const IrNode *n, VarSet *out) {
  for (; n; n = n->next) {
    if (n->kind == IR_SET) {
      if (out->n == MAX_BODY_SETS) out->overflow = true;
      else out->var[out->n++] = n->var;
    }
    if (n->kind == IR_LOOP || n->kind == IR_IF) {
      collect_sets(n->body, out);
      collect_sets(n->orelse, out);
    }
  }
}

static bool reads_any(const IrExpr *e, const VarSet *vars) {
  for (int i = 0; i < vars->n; i++)
    if (reads_var(e, vars->var[i])) return true;
  return false;
}

/* Whether the store `first` is overwritten before anything can see it. */
static bool overwritten(const IrNode *first) {
  for (const IrNode *n = first->next; n; n = n->next) {
    switch (n->kind) {
    case IR_STORE:
      if (reads_array(n->index, first->array) || reads_array(n->value, first->array)) return false;
      if (n->array == first->array && ir_expr_equal(n->index, first->index)) return true;
      break;
    case IR_SET:
      if (reads_var(first->index, n->var) || reads_array(n->value, first->array)) return false;
      break;
    case IR_WAIT:
      if (reads_array(n->threshold, first->array)) return false;
      break;
    case IR_OP: break;
    default: return false; /* a loop, a conditional or a barrier */
    }
  }
  return false;
}

static IrExpr *at_var(Program *p, IrExpr *e, int loop, IrExpr *value) {
  if (!e) return NULL;
  switch (e->kind) {
  case IX_LOOPVAR: return e->id == loop ? value : e;
  case IX_CONST:
  case IX_PARAM:
  case IX_VAR: return e;
  case IX_NOT: return ir_not(p->arena, at_var(p, e->a, loop, value));
  case IX_SELECT:
    return ir_select(p->arena, at_var(p, e->a, loop, value), at_var(p, e->b, loop, value),
                     at_var(p, e->c, loop, value));
  default:
    return ir_binary(p->arena, e->kind, at_var(p, e->a, loop, value), at_var(p, e->b, loop, value), e->line);
  }
}

static bool movable(const IrNode *loop, const IrNode *s, const VarSet *sets) {
  if (s->kind != IR_STORE || sets->overflow) return false;
  if (reads_memory(s->index) || reads_memory(s->value) || uses_loopvar(s->index, loop->loop_id)) return false;
  if (reads_any(s->index, sets) || reads_any(s->value, sets)) return false;
  return !touches_array(loop->body, s->array, s);
}

/* The stores of loop's body that movable() allows, taken out of the body
 * and appended to *after as one conditional on the loop having run. */
static void move_after(Program *p, IrNode *loop, IrNode **after) {
  VarSet sets = {.n = 0};
  collect_sets(loop->body, &sets);
  if (reads_memory(loop->lo) || reads_memory(loop->hi) || reads_any(loop->lo, &sets) || reads_any(loop->hi, &sets))
    return;
  IrNode *moved = NULL, **tail = &moved;
  IrExpr *last = ir_binary(p->arena, IX_SUB, loop->hi, ir_const(p->arena, 1), 0);
  for (IrNode **link = &loop->body; *link;) {
    IrNode *s = *link;
    if (!movable(loop, s, &sets)) {
      link = &s->next;
      continue;
    }
    *link = s->next;
    s->value = at_var(p, s->value, loop->loop_id, last);
    s->next = NULL;
    *tail = s;
    tail = &s->next;
  }
  if (!moved) return;
  IrNode *guard = ir_node(p->arena, IR_IF, loop->line);
  guard->cond = ir_binary(p->arena, IX_GT, ir_binary(p->arena, IX_TRIPS, loop->lo, loop->hi, 0), ir_const(p->arena, 0), 0);
  guard->body = moved;
  *after = guard;
}

static void tidy_list(Program *p, IrNode **list) {
  for (IrNode **link = list; *link;) {
    IrNode *n = *link;
    if (n->kind == IR_STORE && overwritten(n)) {
      *link = n->next;
      continue;
    }
    if (n->kind == IR_LOOP || n->kind == IR_IF) {
      tidy_list(p, &n->body);
      tidy_list(p, &n->orelse);
    }
    if (n->kind == IR_LOOP) {
      IrNode *after = NULL;
      move_after(p, n, &after);
      if (after) {
        after->next = n->next;
        n->next = after;
        if (!n->body) { /* the loop only stored: nothing is left to run */
          *link = after;
          n = after;
        }
      }
    }
    link = &n->next;
  }
}

/* Requires: p->ir from a sync pass. Ensures: no tracking-array store that
 * a later store overwrites unseen, and the loop-invariant stores of a loop
 * that does not load them done once after it; every load sees what it saw
 * before. */
void tidy_stores(Program *p) {
  for (int c = 0; c < p->ir->nengines; c++) tidy_list(p, &p->ir->streams[c].body);
}
