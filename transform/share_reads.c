/* share_reads.c: each device integer read once per scope, in every sync
 * mode (a pass over the IR, after the sync pass). A device integer costs a read (device_read
 * in the target) wherever the stream evaluates it: a loop bounded by
 * C[e, 0] reads it at entry, and again in every position after the loop
 * (trips(0, C[e, 0])) and in every store and threshold that selects on it.
 * Its value never changes, so where a node list evaluates one element at
 * least twice, the first node that surely evaluates it (not only on a lazy
 * side of ? : && ||) reads it into a scalar, just before itself, where the
 * program reads it anyway (the same element, the same error when it is out
 * of bounds); the rest of the list, nested bodies included, use the
 * scalar. The index of an element at one level uses only the loop
 * variables around that level, which stay put while the list runs. */
#include "transform/sync.h"

typedef struct NodeList {
  IrNode *head, **tail;
} NodeList;

static void append(NodeList *l, IrNode *n) {
  *l->tail = n;
  l->tail = &n->next;
}

enum { MAX_SHARED_READS = 64 };

typedef struct SharedReads {
  const IrExpr *elem[MAX_SHARED_READS]; /* read into var[i] earlier in scope */
  int var[MAX_SHARED_READS];
  int n;
} SharedReads;

typedef struct ReadCounts {
  const IrExpr *elem[MAX_SHARED_READS];
  int count[MAX_SHARED_READS];
  int n;
} ReadCounts;

static int *read_count(ReadCounts *rc, const IrExpr *x) {
  for (int i = 0; i < rc->n; i++)
    if (ir_expr_equal(rc->elem[i], x)) return &rc->count[i];
  if (rc->n == MAX_SHARED_READS) return NULL;
  rc->elem[rc->n] = x;
  rc->count[rc->n] = 0;
  return &rc->count[rc->n++];
}

static void count_reads(ReadCounts *rc, const IrExpr *x) {
  if (!x) return;
  int *n;
  if (x->kind == IX_ELEM && (n = read_count(rc, x))) ++*n;
  count_reads(rc, x->a);
  count_reads(rc, x->b);
  count_reads(rc, x->c);
}

static void count_node_reads(ReadCounts *rc, const IrNode *n) {
  for (; n; n = n->next) {
    const IrExpr *xs[IR_NODE_EXPRS];
    int k = ir_node_exprs(n, xs);
    for (int i = 0; i < k; i++) count_reads(rc, xs[i]);
    if (n->kind != IR_LOOP && n->kind != IR_IF) continue;
    count_node_reads(rc, n->body);
    count_node_reads(rc, n->orelse);
  }
}

typedef struct ShareCtx {
  Arena *arena;
  IrStream *s;
  const Kernel *k;
  SharedReads *shared;
  ReadCounts *counts;
  NodeList *pre; /* the reads to insert before the current node */
  int line;
} ShareCtx;

/* x with every element already read in scope replaced by its scalar, and
 * every element read surely here and again later in the list read into a
 * new one. */
static IrExpr *share_expr(ShareCtx *sc, IrExpr *x, bool surely) {
  if (!x) return NULL;
  Arena *arena = sc->arena;
  IrExpr *a, *b;
  switch (x->kind) {
  case IX_CONST:
  case IX_PARAM:
  case IX_LOOPVAR:
  case IX_VAR: return x;
  case IX_LOAD:
    a = share_expr(sc, x->a, surely);
    return a == x->a ? x : ir_load(arena, x->id, a, (int)x->value, x->line);
  case IX_NOT:
    a = share_expr(sc, x->a, surely);
    return a == x->a ? x : ir_not(arena, a);
  case IX_SELECT: {
    IrExpr *cond = share_expr(sc, x->a, surely), *then = share_expr(sc, x->b, false);
    IrExpr *orelse = share_expr(sc, x->c, false);
    return cond == x->a && then == x->b && orelse == x->c ? x : ir_select(arena, cond, then, orelse);
  }
  case IX_ROWS: return x; /* its rows are read by the helper that walks them */
  case IX_TILE_AT:
    a = share_expr(sc, x->a, surely);
    return a == x->a ? x : ir_tile_at(arena, x->id, (int)x->c->value, a, x->b->value, (int)x->value, x->line);
  case IX_HBM_ROW:
    a = share_expr(sc, x->a, surely);
    b = share_expr(sc, x->b, surely);
    return a == x->a && b == x->b ? x : ir_hbm_row(arena, x->id, (int)x->c->value, a, b, (int)x->value, x->line);
  case IX_ELEM: {
    a = share_expr(sc, x->a, surely);
    b = share_expr(sc, x->b, surely);
    IrExpr *e = a == x->a && b == x->b ? x : ir_elem(arena, x->id, a, b, x->line);
    SharedReads *sh = sc->shared;
    for (int i = 0; i < sh->n; i++)
      if (ir_expr_equal(sh->elem[i], e)) return ir_leaf(arena, IX_VAR, sh->var[i]);
    int *count = read_count(sc->counts, x);
    if (!surely || !count || *count < 2 || sh->n == MAX_SHARED_READS) return e;
    IrNode *set = ir_node(arena, IR_SET, sc->line);
    set->var = ir_new_var(arena, sc->s, arena_printf(arena, "%s_read_line%d", sc->k->tensors[x->id].name, x->line));
    set->value = e;
    append(sc->pre, set);
    sh->elem[sh->n] = e;
    sh->var[sh->n++] = set->var;
    return ir_leaf(arena, IX_VAR, set->var);
  }
  default:
    a = share_expr(sc, x->a, surely);
    b = share_expr(sc, x->b, surely && x->kind != IX_AND && x->kind != IX_OR);
    return a == x->a && b == x->b ? x : ir_binary(arena, x->kind, a, b, x->line);
  }
}

static void share_reads(ShareCtx *base, IrNode **list, SharedReads *shared) {
  int in_scope = shared->n;
  ReadCounts counts = {.n = 0};
  count_node_reads(&counts, *list);
  for (IrNode **link = list; *link; link = &(*link)->next) {
    IrNode *n = *link;
    NodeList pre = {NULL, &pre.head};
    ShareCtx sc = *base;
    sc.shared = shared;
    sc.counts = &counts;
    sc.pre = &pre;
    sc.line = n->line;
    IrExpr **fields[IR_NODE_EXPRS];
    int k = ir_node_fields(n, fields);
    for (int i = 0; i < k; i++) *fields[i] = share_expr(&sc, *fields[i], true);
    if (n->kind == IR_LOOP || n->kind == IR_IF) share_reads(base, &n->body, shared);
    if (n->kind == IR_IF) share_reads(base, &n->orelse, shared);
    if (pre.head) {
      *pre.tail = n;
      *link = pre.head;
      link = pre.tail;
    }
  }
  shared->n = in_scope;
}

/* Requires: p->ir from a sync pass. Ensures: in every stream, a device
 * element that a node list evaluates at least twice is read once, into a
 * scalar, where the list first surely reads it; the program's values and
 * errors unchanged. */
void share_device_reads(Program *p) {
  for (int c = 0; c < p->ir->nengines; c++) {
    IrStream *s = &p->ir->streams[c];
    ShareCtx base = {p->arena, s, p->kernel, NULL, NULL, NULL, 0};
    SharedReads shared = {.n = 0};
    share_reads(&base, &s->body, &shared);
  }
}
