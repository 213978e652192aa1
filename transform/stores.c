/* stores.c: fewer tracking-array stores, after the sync pass.
 *
 * A stream stores positions into its own tracking arrays and only its own
 * waits load them (transform/barrier_free.c), so a store matters only
 * through the loads that can see it. The rewrites below are each sound
 * for that reason alone:
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
 *     and no device integer; a loop left with an empty body is removed;
 *   - a store carried by its loop: the same, but the body also loads the
 *     entry, and the index is either invariant or `j % K` (j the loop's
 *     variable, 2 <= K <= MAX_CARRY): then every entry the body loads was
 *     stored K iterations before (1 for an invariant index), or before
 *     the loop. A load before the store becomes `j - lo >= K ? v[j :=
 *     j - K] : a[x]`, one after it v itself, and after L the last K
 *     iterations' stores are done, each under `trips(lo, hi) >= d`. This
 *     is the closed form of a loop-carried dependence at a constant
 *     distance: the tracking array is read only across the loop's entry.
 *     A wait's threshold is one bookkeeping operation however it is
 *     written (ir.h), so the body's stores are what it saves;
 *   - a store no later node loads, at a stream's top level (each node
 *     there runs once), is dropped: what the two rewrites above leave
 *     after a stream's last loop that loads the array.
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
/* The largest distance K of a carried store (each leaves K stores after
 * its loop: a bound on the code, not a limit). */
enum { MAX_CARRY = 4 };

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

/* ---- Carried stores. */

/* The distance of a carried store's index: 1 when invariant in the loop,
 * K for `j % K`, 0 when neither. */
static int64_t carry_distance(const IrNode *loop, const IrExpr *x) {
  if (!uses_loopvar(x, loop->loop_id)) return 1;
  if (x->kind == IX_MOD && x->a->kind == IX_LOOPVAR && x->a->id == loop->loop_id && x->b->kind == IX_CONST &&
      x->b->value >= 2 && x->b->value <= MAX_CARRY)
    return x->b->value;
  return 0;
}

/* Whether every load of array in the expressions of node n indexes x. */
static bool loads_only(const IrExpr *e, int array, const IrExpr *x) {
  if (!e) return true;
  if (e->kind == IX_LOAD && e->id == array && !ir_expr_equal(e->a, x)) return false;
  return loads_only(e->a, array, x) && loads_only(e->b, array, x) && loads_only(e->c, array, x);
}

/* Whether the body's only other references to s's array are loads of
 * s's entry in the expressions of its own nodes (none in a nested body). */
static bool carried_only(const IrNode *body, const IrNode *s) {
  for (const IrNode *n = body; n; n = n->next) {
    if (n != s && n->kind == IR_STORE && n->array == s->array) return false;
    if ((n->kind == IR_LOOP || n->kind == IR_IF) &&
        (touches_array(n->body, s->array, NULL) || touches_array(n->orelse, s->array, NULL)))
      return false;
    const IrExpr *xs[IR_NODE_EXPRS];
    int k = ir_node_exprs(n, xs);
    for (int i = 0; i < k; i++)
      if (!loads_only(xs[i], s->array, s->index)) return false;
  }
  return true;
}

/* e with every load of array replaced by `with` (given the load). */
static IrExpr *replace_loads(Program *p, IrExpr *e, int array, IrExpr *(*with)(Program *, IrExpr *, void *),
                             void *arg) {
  if (!e) return NULL;
  if (e->kind == IX_LOAD && e->id == array) return with(p, e, arg);
  IrExpr *a = replace_loads(p, e->a, array, with, arg), *b = replace_loads(p, e->b, array, with, arg),
         *c = replace_loads(p, e->c, array, with, arg);
  if (a == e->a && b == e->b && c == e->c) return e;
  if (e->kind == IX_MAX && a->kind == IX_SELECT && b->kind == IX_SELECT && ir_expr_equal(a->a, b->a))
    return ir_select(p->arena, a->a, ir_binary(p->arena, IX_MAX, a->b, b->b, 0), ir_binary(p->arena, IX_MAX, a->c, b->c, 0));
  IrExpr *r = ARENA_NEW(p->arena, IrExpr);
  *r = *e;
  r->a = a;
  r->b = b;
  r->c = c;
  int64_t size = 1 + (int64_t)(a ? a->size : 0) + (b ? b->size : 0) + (c ? c->size : 0);
  r->size = size > INT32_MAX / 2 ? INT32_MAX / 2 : (int)size;
  return r;
}

typedef struct Carry {
  IrExpr *cond, *earlier, *now; /* j - lo >= K; v K iterations before; v */
} Carry;

static IrExpr *load_before(Program *p, IrExpr *load, void *arg) {
  const Carry *c = arg;
  return ir_select(p->arena, c->cond, c->earlier, load);
}

static IrExpr *load_after(Program *p, IrExpr *load, void *arg) {
  (void)p;
  (void)load;
  return ((const Carry *)arg)->now;
}

/* Appends st to the list at head under cond: into the conditional of
 * that condition already there, else a new one at *tail. */
static void guard_store(Program *p, IrNode **head, IrNode ***tail, IrExpr *cond, IrNode *st, int line) {
  for (IrNode *g = *head; g; g = g->next)
    if (ir_expr_equal(g->cond, cond)) {
      IrNode *last = g->body;
      while (last->next) last = last->next;
      last->next = st;
      return;
    }
  IrNode *guard = ir_node(p->arena, IR_IF, line);
  guard->cond = cond;
  guard->body = st;
  **tail = guard;
  *tail = &guard->next;
}

/* Rewrites the body's loads of s's entry (s is in it, at its top level),
 * takes s out, and appends to the list at head (its end at *tail) the
 * stores of the last K iterations. */
static void carry(Program *p, IrNode *loop, IrNode *s, int64_t k, IrNode **head, IrNode ***tail) {
  IrExpr *j = ir_leaf(p->arena, IX_LOOPVAR, loop->loop_id);
  Carry c = {
      .cond = ir_binary(p->arena, IX_GE, ir_binary(p->arena, IX_SUB, j, loop->lo, 0), ir_const(p->arena, k), 0),
      .earlier = at_var(p, s->value, loop->loop_id, ir_binary(p->arena, IX_SUB, j, ir_const(p->arena, k), 0)),
      .now = s->value,
  };
  bool after = false;
  for (IrNode **link = &loop->body; *link;) {
    IrNode *n = *link;
    if (n == s) {
      *link = n->next;
      after = true;
      continue;
    }
    IrExpr **fields[IR_NODE_EXPRS];
    int nf = ir_node_fields(n, fields);
    for (int i = 0; i < nf; i++)
      *fields[i] = replace_loads(p, *fields[i], s->array, after ? load_after : load_before, &c);
    link = &n->next;
  }
  IrExpr *trips = ir_binary(p->arena, IX_TRIPS, loop->lo, loop->hi, 0);
  for (int64_t d = k; d >= 1; d--) {
    IrExpr *at = ir_binary(p->arena, IX_SUB, loop->hi, ir_const(p->arena, d), 0);
    IrNode *st = ir_node(p->arena, IR_STORE, s->line);
    *st = *s;
    st->next = NULL;
    st->value = at_var(p, s->value, loop->loop_id, at);
    if (k > 1) st->index = ir_binary(p->arena, IX_MOD, at, s->index->b, s->index->line);
    IrExpr *cond = d == 1 ? ir_binary(p->arena, IX_GT, trips, ir_const(p->arena, 0), 0)
                          : ir_binary(p->arena, IX_GE, trips, ir_const(p->arena, d), 0);
    guard_store(p, head, tail, cond, st, loop->line); /* d == 1: the condition move_after uses */
  }
}

/* The stores of loop's body that the body loads at a constant distance,
 * carried (above); their stores after the loop appended to *tail. */
static void carry_after(Program *p, IrNode *loop, const VarSet *sets, IrNode **head, IrNode ***tail) {
  for (IrNode *s = loop->body, *next; s; s = next) {
    next = s->next;
    if (s->kind != IR_STORE || sets->overflow || reads_memory(s->index) || reads_memory(s->value) ||
        reads_any(s->index, sets) || reads_any(s->value, sets))
      continue;
    int64_t k = carry_distance(loop, s->index);
    if (k && carried_only(loop->body, s)) carry(p, loop, s, k, head, tail);
  }
}

/* The stores of loop's body that movable() allows, taken out of the body
 * and appended to *after as one conditional on the loop having run, then
 * the carried ones (carry_after). */
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
  IrNode **end = after;
  if (moved) {
    IrNode *guard = ir_node(p->arena, IR_IF, loop->line);
    guard->cond = ir_binary(p->arena, IX_GT, ir_binary(p->arena, IX_TRIPS, loop->lo, loop->hi, 0), ir_const(p->arena, 0), 0);
    guard->body = moved;
    *end = guard;
    end = &guard->next;
  }
  carry_after(p, loop, &sets, after, &end);
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
        IrNode *last = after;
        while (last->next) last = last->next;
        last->next = n->next;
        n->next = after;
        if (!n->body) *link = after; /* the loop only stored: nothing is left to run */
        n = last;
      }
    }
    link = &n->next;
  }
}

/* Whether nodes n (nested bodies included) load array. */
static bool loads_in(const IrNode *n, int array) {
  for (; n; n = n->next) {
    const IrExpr *xs[IR_NODE_EXPRS];
    int k = ir_node_exprs(n, xs);
    for (int i = 0; i < k; i++)
      if (reads_array(xs[i], array)) return true;
    if ((n->kind == IR_LOOP || n->kind == IR_IF) && (loads_in(n->body, array) || loads_in(n->orelse, array)))
      return true;
  }
  return false;
}

/* Whether store s is dead at the top level of stream body: nothing after
 * it loads its array, though something in the stream does (an array the
 * stream never loads keeps its stores, so that it stays referenced in the
 * emitted C: the backend declares every array). */
static bool dead_at_top(const IrNode *body, const IrNode *s, const IrNode *after) {
  return !loads_in(after, s->array) && loads_in(body, s->array);
}

/* The stores of list (a conditional's branch: stores only) that are dead
 * at the top level of body, dropped. */
static void drop_unloaded(const IrNode *body, IrNode **list, const IrNode *after) {
  for (IrNode **link = list; *link;) {
    if ((*link)->kind == IR_STORE && dead_at_top(body, *link, after)) *link = (*link)->next;
    else link = &(*link)->next;
  }
}

static bool stores_only(const IrNode *n) {
  for (; n; n = n->next)
    if (n->kind != IR_STORE) return false;
  return true;
}

/* At a stream's top level each node runs once, so a store that no later
 * node loads is dead: the stores after a stream's last loop that reads
 * the array (carried or moved there) go, with a conditional left empty.
 * The condition reads no array, so dropping it changes nothing else. */
static void drop_dead_tail(IrNode **list) {
  for (IrNode **link = list; *link;) {
    IrNode *n = *link;
    if (n->kind == IR_STORE && dead_at_top(*list, n, n->next)) {
      *link = n->next;
      continue;
    }
    if (n->kind == IR_IF && stores_only(n->body) && stores_only(n->orelse) && !reads_memory(n->cond)) {
      drop_unloaded(*list, &n->body, n->next);
      drop_unloaded(*list, &n->orelse, n->next);
      if (!n->body && !n->orelse) {
        *link = n->next;
        continue;
      }
    }
    link = &n->next;
  }
}

/* Requires: p->ir from a sync pass. Ensures: no tracking-array store that
 * a later store overwrites unseen, the loop-invariant stores of a loop
 * that does not load them done once after it, the stores it loads at a
 * constant distance carried, and no top-level store nothing loads; every
 * load sees what it saw before. */
void tidy_stores(Program *p) {
  for (int c = 0; c < p->ir->nengines; c++) {
    tidy_list(p, &p->ir->streams[c].body);
    drop_dead_tail(&p->ir->streams[c].body);
  }
}
