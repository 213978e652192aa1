/* ir.c: building, printing, explaining and validating the per-engine IR.
 *
 * The builders fold constants as they go. That matters for more than
 * looks: a threshold that folds to IX_CONST costs no bookkeeping at run
 * time, and position expressions keep the shape `base + k` (one IX_ADD of a
 * constant on top of a shared base), which lets the transform compare two
 * thresholds on the same counter by pointer and offset.
 *
 * ir_print is what a compiler engineer reads (`bfsync compile --emit=ir`):
 * the tensors and tiles with their element types, then one block per engine, loops indented, every wait with its threshold
 * formula and every op with its operands and source line. ir_explain lists
 * each wait's provenance (WaitWhy). ir_validate is the cheap structural
 * check the driver runs after every transform. */
#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "frontend/program.h"
#include "transform/ir.h"
#include "transform/sync.h"

/* ---- Builders. */

/* 1 + the sizes of a and b, saturating: printing a shared subtree costs
 * its size at every use, and the transform keeps that bounded. */
static int tree_size3(const IrExpr *a, const IrExpr *b, const IrExpr *c) {
  int64_t n = 1 + (int64_t)a->size + (b ? b->size : 0) + (c ? c->size : 0);
  return n > INT_MAX / 2 ? INT_MAX / 2 : (int)n;
}

static int tree_size(const IrExpr *a, const IrExpr *b) { return tree_size3(a, b, NULL); }
/* IrExpr nodes are never changed once built, so the small constants every
 * position and count uses are shared, not allocated per use. */
#define SMALL_CONST(v) {IX_CONST, {(v)}, 0, 0, 1, NULL, NULL, NULL}
static IrExpr small_consts[] = {
    SMALL_CONST(-1), SMALL_CONST(0),  SMALL_CONST(1),  SMALL_CONST(2),  SMALL_CONST(3),
    SMALL_CONST(4),  SMALL_CONST(5),  SMALL_CONST(6),  SMALL_CONST(7),  SMALL_CONST(8),
    SMALL_CONST(9),  SMALL_CONST(10), SMALL_CONST(11), SMALL_CONST(12), SMALL_CONST(13),
    SMALL_CONST(14), SMALL_CONST(15), SMALL_CONST(16)};
#undef SMALL_CONST

IrExpr *ir_const(Arena *arena, int64_t value) {
  if (value >= -1 && value <= 16) return &small_consts[value + 1];
  IrExpr *e = ARENA_NEW(arena, IrExpr);
  e->kind = IX_CONST;
  e->value = value;
  e->size = 1;
  return e;
}

IrExpr *ir_leaf(Arena *arena, IrExprKind kind, int id) {
  IrExpr *e = ARENA_NEW(arena, IrExpr);
  e->kind = kind;
  e->id = id;
  e->size = 1;
  return e;
}

IrExpr *ir_load(Arena *arena, int array, IrExpr *index, int op, int line) {
  IrExpr *e = ir_leaf(arena, IX_LOAD, array);
  e->a = index;
  e->value = op;
  e->line = line;
  e->size = tree_size(index, NULL);
  return e;
}

static int is_const(const IrExpr *e, int64_t v) { return e->kind == IX_CONST && e->value == v; }

uint64_t ir_trips(int64_t lo, int64_t hi) { return hi > lo ? (uint64_t)hi - (uint64_t)lo : 0; }

/* The value of kind over two constants, or 0 when folding is unsafe
 * (overflow, a zero divisor: those are left for run time to report). */
static int fold(IrExprKind kind, int64_t a, int64_t b, int64_t *out) {
  switch (kind) {
  case IX_ADD: return !__builtin_add_overflow(a, b, out);
  case IX_SUB: return !__builtin_sub_overflow(a, b, out);
  case IX_MUL: return !__builtin_mul_overflow(a, b, out);
  case IX_MAX: *out = a > b ? a : b; return 1;
  case IX_TRIPS:
    if (ir_trips(a, b) > IR_MAX_TRIPS) return 0; /* left for run time to report */
    *out = (int64_t)ir_trips(a, b);
    return 1;
  case IX_LT: *out = a < b; return 1;
  case IX_LE: *out = a <= b; return 1;
  case IX_GT: *out = a > b; return 1;
  case IX_GE: *out = a >= b; return 1;
  case IX_EQ: *out = a == b; return 1;
  case IX_NE: *out = a != b; return 1;
  case IX_AND: *out = a && b; return 1;
  case IX_OR: *out = a || b; return 1;
  case IX_DIV:
  case IX_MOD:
    if (b == 0) return 0; /* left for run time to report */
    *out = kind == IX_DIV ? int_floor_div(a, b) : int_floor_mod(a, b);
    return 1;
  default: bug("fold: not a binary kind %d", kind);
  }
}

static IrExpr *make_binary(Arena *arena, IrExprKind kind, IrExpr *a, IrExpr *b, int line) {
  IrExpr *e = ARENA_NEW(arena, IrExpr);
  e->kind = kind;
  e->a = a;
  e->b = b;
  e->line = line;
  e->size = tree_size(a, b);
  return e;
}

/* (x + k) + c = x + (k + c), so positions stay `base + constant`. */
static IrExpr *add_const(Arena *arena, IrExpr *x, int64_t c) {
  int64_t sum;
  if (c == 0) return x;
  if (x->kind == IX_ADD && x->b->kind == IX_CONST && !__builtin_add_overflow(x->b->value, c, &sum))
    return sum ? make_binary(arena, IX_ADD, x->a, ir_const(arena, sum), 0) : x->a;
  return make_binary(arena, IX_ADD, x, ir_const(arena, c), 0);
}

/* x + c with c a non-zero constant (the shape add_const builds). */
static int has_offset(const IrExpr *e) { return e->kind == IX_ADD && e->b->kind == IX_CONST; }

IrExpr *ir_binary(Arena *arena, IrExprKind kind, IrExpr *a, IrExpr *b, int line) {
  int64_t v;
  if (a->kind == IX_CONST && b->kind == IX_CONST && fold(kind, a->value, b->value, &v))
    return ir_const(arena, v);
  switch (kind) {
  case IX_ADD:
    if (a->kind == IX_CONST) return add_const(arena, b, a->value);
    if (b->kind == IX_CONST) return add_const(arena, a, b->value);
    /* constants move outward: (x + c) + y = (x + y) + c */
    if (has_offset(a)) return add_const(arena, ir_binary(arena, IX_ADD, a->a, b, line), a->b->value);
    if (has_offset(b)) return add_const(arena, ir_binary(arena, IX_ADD, a, b->a, line), b->b->value);
    break;
  case IX_SUB:
    if (b->kind == IX_CONST && b->value != INT64_MIN) return add_const(arena, a, -b->value);
    if (ir_expr_equal(a, b) && a->kind != IX_LOAD) return ir_const(arena, 0);
    if (has_offset(a)) return add_const(arena, ir_binary(arena, IX_SUB, a->a, b, line), a->b->value);
    if (has_offset(b) && b->b->value != INT64_MIN)
      return add_const(arena, ir_binary(arena, IX_SUB, a, b->a, line), -b->b->value);
    break;
  case IX_MUL:
    if (is_const(a, 0) || is_const(b, 0)) return ir_const(arena, 0);
    if (is_const(a, 1)) return b;
    if (is_const(b, 1)) return a;
    break;
  case IX_MAX:
    if (ir_expr_equal(a, b)) return a;
    break;
  case IX_LT:
  case IX_GT:
  case IX_NE: /* x op x: false (and C compilers warn about the comparison) */
    if (ir_expr_equal(a, b) && a->kind != IX_LOAD) return ir_const(arena, 0);
    break;
  case IX_LE:
  case IX_GE:
  case IX_EQ:
    if (ir_expr_equal(a, b) && a->kind != IX_LOAD) return ir_const(arena, 1);
    break;
  case IX_AND: /* operands are 0 or 1 */
    if (a->kind == IX_CONST) return a->value ? b : a;
    if (is_const(b, 1)) return a;
    break;
  case IX_OR:
    if (a->kind == IX_CONST) return a->value ? a : b;
    if (is_const(b, 0)) return a;
    break;
  default: break;
  }
  return make_binary(arena, kind, a, b, line);
}

IrExpr *ir_elem(Arena *arena, int tensor, IrExpr *row, IrExpr *col, int line) {
  IrExpr *e = make_binary(arena, IX_ELEM, row, col, line);
  e->id = tensor;
  return e;
}

IrExpr *ir_tile_at(Arena *arena, int tile, int dim, IrExpr *at, int64_t n, int op, int line) {
  IrExpr *e = make_binary(arena, IX_TILE_AT, at, ir_const(arena, n), line);
  e->id = tile;
  e->value = op;
  e->c = ir_const(arena, dim);
  e->size = tree_size(at, NULL);
  return e;
}

IrExpr *ir_rows(Arena *arena, int tensor, const IrRows *rows, IrExpr *a, IrExpr *b, IrExpr *c, int line) {
  IrExpr *e = make_binary(arena, IX_ROWS, a, b ? b : ir_const(arena, rows->n), line);
  e->id = tensor;
  e->c = c;
  e->rows = rows;
  e->size = tree_size3(a, e->b, c);
  return e;
}

IrExpr *ir_hbm_row(Arena *arena, int tensor, int tile, IrExpr *row, IrExpr *col, int op, int line) {
  IrExpr *e = make_binary(arena, IX_HBM_ROW, row, col, line);
  e->id = tensor;
  e->value = op;
  e->c = ir_const(arena, tile);
  e->size = tree_size(row, col);
  return e;
}

IrExpr *ir_not(Arena *arena, IrExpr *a) {
  if (a->kind == IX_CONST) return ir_const(arena, !a->value);
  if (a->kind == IX_NOT) return a->a;
  IrExpr *e = ARENA_NEW(arena, IrExpr);
  e->kind = IX_NOT;
  e->a = a;
  e->size = tree_size(a, NULL);
  return e;
}

/* The base of e = base + offset, and the offset (0 when e has none). */
static IrExpr *split_offset(IrExpr *e, int64_t *offset) {
  *offset = has_offset(e) ? e->b->value : 0;
  return has_offset(e) ? e->a : e;
}

IrExpr *ir_select(Arena *arena, IrExpr *cond, IrExpr *x, IrExpr *y) {
  if (cond->kind == IX_CONST) return cond->value ? x : y;
  if (ir_expr_equal(x, y)) return x;
  /* cond ? b + j : b + k is b + (cond ? j : k): a position after a branch
   * then holds one copy of the position before it, so positions grow
   * linearly with the branches in a row, not exponentially (issue 9) */
  int64_t j, k;
  IrExpr *bx = split_offset(x, &j), *by = split_offset(y, &k);
  if (bx->kind != IX_CONST && ir_expr_equal(bx, by))
    return ir_binary(arena, IX_ADD, bx, ir_select(arena, cond, ir_const(arena, j), ir_const(arena, k)), 0);
  IrExpr *e = ARENA_NEW(arena, IrExpr);
  e->kind = IX_SELECT;
  e->a = cond;
  e->b = x;
  e->c = y;
  e->size = tree_size3(cond, x, y);
  return e;
}

IrExpr *ir_from_cond(const Program *p, const Cond *c) {
  static const IrExprKind compare[] = {[COND_LT] = IX_LT, [COND_LE] = IX_LE, [COND_GT] = IX_GT,
                                       [COND_GE] = IX_GE, [COND_EQ] = IX_EQ, [COND_NE] = IX_NE};
  switch (c->kind) {
  case COND_CMP:
    return ir_binary(p->arena, compare[c->op], ir_from_expr(p, c->lhs), ir_from_expr(p, c->rhs), 0);
  case COND_NOT: return ir_not(p->arena, ir_from_cond(p, c->left));
  case COND_AND:
  case COND_OR:
    return ir_binary(p->arena, c->kind == COND_AND ? IX_AND : IX_OR, ir_from_cond(p, c->left),
                     ir_from_cond(p, c->right), 0);
  }
  bug("ir_from_cond: condition kind %d", (int)c->kind);
}

IrExpr *ir_from_expr(const Program *p, const Expr *e) {
  static const IrExprKind binary[] = {[EX_ADD] = IX_ADD, [EX_SUB] = IX_SUB, [EX_MUL] = IX_MUL,
                                      [EX_DIV] = IX_DIV, [EX_MOD] = IX_MOD};
  switch (e->kind) {
  case EX_INT: return ir_const(p->arena, e->value);
  case EX_NAME:
    if (e->sym == SYM_PARAM) return ir_leaf(p->arena, IX_PARAM, e->index);
    if (e->sym == SYM_LOOPVAR) return ir_leaf(p->arena, IX_LOOPVAR, e->index);
    bug("ir_from_expr: unresolved name %s", e->name);
  case EX_NEG:
    return ir_binary(p->arena, IX_SUB, ir_const(p->arena, 0), ir_from_expr(p, e->lhs), 0);
  case EX_ELEM:
    return ir_elem(p->arena, e->index, ir_from_expr(p, e->lhs), ir_from_expr(p, e->rhs),
                   source_line(&p->src, e->span.begin));
  case EX_MIN:
  case EX_MAX: { /* a < b ? a : b (a > b for max): the one chosen is evaluated twice */
    IrExpr *a = ir_from_expr(p, e->lhs), *b = ir_from_expr(p, e->rhs);
    return ir_select(p->arena, ir_binary(p->arena, e->kind == EX_MIN ? IX_LT : IX_GT, a, b, 0), a, b);
  }
  default:
    return ir_binary(p->arena, binary[e->kind], ir_from_expr(p, e->lhs), ir_from_expr(p, e->rhs),
                     source_line(&p->src, e->span.begin));
  }
}

int ir_new_var(Arena *arena, IrStream *s, const char *name) {
  if (s->nvars == s->vars_cap) {
    s->vars_cap = s->vars_cap ? 2 * s->vars_cap : 8;
    const char **names = ARENA_ARRAY(arena, const char *, s->vars_cap);
    if (s->nvars) memcpy(names, s->var_names, sizeof(char *) * (size_t)s->nvars);
    s->var_names = names;
  }
  s->var_names[s->nvars] = name;
  return s->nvars++;
}

IrNode *ir_node(Arena *arena, IrKind kind, int line) {
  IrNode *n = ARENA_NEW(arena, IrNode);
  n->kind = kind;
  n->line = line;
  return n;
}

/* max(0, min(n, end - lo)): a ragged view's extent. */
IrExpr *ir_clipped_extent(Arena *a, IrExpr *end, IrExpr *lo, int64_t n) {
  IrExpr *t = ir_binary(a, IX_SUB, end, lo, 0), *c = ir_const(a, n);
  IrExpr *low = ir_select(a, ir_binary(a, IX_LT, t, c, 0), t, c);
  return ir_select(a, ir_binary(a, IX_LT, low, ir_const(a, 0), 0), ir_const(a, 0), low);
}

IrNode *ir_op(const Program *p, const Stmt *instr, int line) {
  IrNode *n = ir_node(p->arena, IR_OP, line);
  n->instr = instr;
  n->op = instr->op;
  n->noperands = instr->noperands;
  n->operands = ARENA_ARRAY(p->arena, IrOperand, instr->noperands);
  for (int i = 0; i < instr->noperands; i++) {
    const Operand *o = &instr->operands[i];
    IrOperand *io = &n->operands[i];
    io->kind = o->kind;
    io->decl = o->decl;
    io->imm = o->imm;
    io->word = o->vocab ? o->name : NULL;
    if (o->kind == OPND_TILE) io->slot = o->slot ? ir_from_expr(p, o->slot) : ir_const(p->arena, 0);
    if (o->view) io->v = ARENA_NEW(p->arena, IrView);
    for (int d = 0; o->view && d < 2; d++) {
      io->v->lo[d] = o->lo[d] ? ir_from_expr(p, o->lo[d]) : ir_const(p->arena, 0);
      io->v->ext[d] = o->ext[d];
      if (o->clip[d]) io->v->n[d] = ir_clipped_extent(p->arena, ir_from_expr(p, o->clip[d]), io->v->lo[d], o->ext[d]);
    }
    if (o->view) { /* a view's or slice's steps */
      io->v->step[0] = o->rstep ? ir_from_expr(p, o->rstep) : NULL;
      io->v->step[1] = o->cstep > 1 ? ir_const(p->arena, o->cstep) : NULL;
    }
    if (o->kind == OPND_HBM && !o->view) {
      io->row = ir_from_expr(p, o->row);
      io->col = ir_from_expr(p, o->col);
    }
    if (o->gather) { /* the index run's first element */
      io->gather = o->gather->tensor + 1;
      io->gaxis = o->gather->axis;
      io->row = ir_from_expr(p, o->gather->elem->lhs);
      io->col = ir_from_expr(p, o->gather->elem->rhs);
    }
  }
  return n;
}

_Static_assert(BFRT_MAX_ENGINES <= 32, "ir_tracks: one bit per engine in a uint32_t");

static uint32_t nodes_tracks(const IrNode *n) {
  uint32_t bits = 0;
  for (; n; n = n->next) {
    if (n->kind == IR_WAIT) bits |= UINT32_C(1) << n->engine;
    if (n->kind == IR_LOOP || n->kind == IR_IF) bits |= nodes_tracks(n->body) | nodes_tracks(n->orelse);
  }
  return bits;
}

uint32_t ir_tracks(const IrStream *s) { return nodes_tracks(s->body); }

int ir_node_fields(IrNode *n, IrExpr **fields[IR_NODE_EXPRS]) {
  int k = 0;
  switch (n->kind) {
  case IR_OP:
    if (n->noperands > IR_MAX_OPERANDS) bug("ir: line %d: %d operands", n->line, n->noperands);
    for (int i = 0; i < n->noperands; i++) {
      fields[k++] = &n->operands[i].slot;
      fields[k++] = &n->operands[i].row;
      fields[k++] = &n->operands[i].col;
      for (int d = 0; n->operands[i].v && d < 2; d++) {
        fields[k++] = &n->operands[i].v->lo[d];
        fields[k++] = &n->operands[i].v->n[d];
      }
    }
    break;
  case IR_WAIT: fields[k++] = &n->threshold; break;
  case IR_SET: fields[k++] = &n->value; break;
  case IR_STORE:
    fields[k++] = &n->index;
    fields[k++] = &n->value;
    break;
  case IR_LOOP:
    fields[k++] = &n->lo;
    fields[k++] = &n->hi;
    break;
  case IR_IF: fields[k++] = &n->cond; break;
  case IR_BARRIER: break;
  }
  return k;
}

int ir_node_exprs(const IrNode *n, const IrExpr *xs[IR_NODE_EXPRS]) {
  IrExpr **fields[IR_NODE_EXPRS];
  int k = ir_node_fields((IrNode *)n, fields); /* only read here */
  for (int i = 0; i < k; i++) xs[i] = *fields[i];
  return k;
}

int ir_index_in_range(const IrExpr *index, const IrExpr *len) {
  if (len->kind != IX_CONST) return 0;
  if (index->kind == IX_CONST) return index->value >= 0 && index->value < len->value;
  return index->kind == IX_MOD && index->b->kind == IX_CONST && index->b->value > 0 &&
         index->b->value <= len->value;
}

int ir_expr_equal(const IrExpr *a, const IrExpr *b) {
  if (a == b) return 1;
  if (!a || !b || a->kind != b->kind) return 0;
  switch (a->kind) {
  case IX_CONST: return a->value == b->value;
  case IX_PARAM:
  case IX_LOOPVAR:
  case IX_VAR: return a->id == b->id;
  case IX_LOAD: return a->id == b->id && ir_expr_equal(a->a, b->a);
  case IX_ELEM: return a->id == b->id && ir_expr_equal(a->a, b->a) && ir_expr_equal(a->b, b->b);
  case IX_ROWS:
    return a->id == b->id && a->rows == b->rows && ir_expr_equal(a->a, b->a) &&
           ir_expr_equal(a->b, b->b) && ir_expr_equal(a->c, b->c);
  case IX_HBM_ROW:
  case IX_TILE_AT:
    return a->id == b->id && a->value == b->value && ir_expr_equal(a->a, b->a) && ir_expr_equal(a->b, b->b) &&
           ir_expr_equal(a->c, b->c);
  default: return ir_expr_equal(a->a, b->a) && ir_expr_equal(a->b, b->b) && ir_expr_equal(a->c, b->c);
  }
}

/* ---- Printing. */

static int precedence(const IrExpr *e) {
  switch (e->kind) {
  case IX_ADD:
  case IX_SUB: return 1;
  case IX_MUL:
  case IX_DIV:
  case IX_MOD: return 2;
  default: return 3;
  }
}

static void print_operand_expr(const Program *p, const IrStream *s, const IrExpr *e, int min_prec,
                               FILE *out) {
  int paren = precedence(e) < min_prec;
  if (paren) fputc('(', out);
  ir_print_expr(p, s, e, out);
  if (paren) fputc(')', out);
}

static const char *const condition_symbol[] = {" < ", " <= ", " > ", " >= ", " == ", " != ", " && ", " || "};

void ir_print_expr(const Program *p, const IrStream *s, const IrExpr *e, FILE *out) {
  static const char *const symbol[] = {[IX_ADD] = " + ", [IX_SUB] = " - ", [IX_MUL] = " * ",
                                       [IX_DIV] = " / ", [IX_MOD] = " % "};
  switch (e->kind) {
  case IX_CONST: fprintf(out, "%" PRId64, e->value); return;
  case IX_PARAM: fputs(p->kernel->params[e->id].name, out); return;
  case IX_LOOPVAR: fputs(p->kernel->loops[e->id]->var, out); return;
  case IX_VAR: fputs(s->var_names[e->id], out); return;
  case IX_LOAD:
    fprintf(out, "%s[", s->arrays[e->id].name);
    ir_print_expr(p, s, e->a, out);
    fputc(']', out);
    return;
  case IX_MAX:
  case IX_TRIPS:
    fputs(e->kind == IX_MAX ? "max(" : "trips(", out);
    ir_print_expr(p, s, e->a, out);
    fputs(", ", out);
    ir_print_expr(p, s, e->b, out);
    fputc(')', out);
    return;
  case IX_NOT:
    fputc('!', out);
    ir_print_expr(p, s, e->a, out);
    return;
  case IX_ELEM:
    fprintf(out, "%s[", p->kernel->tensors[e->id].name);
    ir_print_expr(p, s, e->a, out);
    fputs(", ", out);
    ir_print_expr(p, s, e->b, out);
    fputc(']', out);
    return;
  case IX_TILE_AT: /* a view's start or a slot, checked */
    ir_print_expr(p, s, e->a, out);
    return;
  case IX_ROWS: /* rows(X: IDX[r +p, c] +: n, cells c0 +: kc) or rows(X: r +: n, ...) */
    fprintf(out, "rows(%s: ", p->kernel->tensors[e->id].name);
    if (e->rows->gather) {
      fprintf(out, "%s[", p->kernel->tensors[e->rows->gather - 1].name);
      ir_print_expr(p, s, e->a, out);
      fputs(e->rows->axis ? ", " : " +p, ", out);
      ir_print_expr(p, s, e->b, out);
      fprintf(out, "%s] +: %" PRId64, e->rows->axis ? " +p" : "", e->rows->n);
    } else {
      ir_print_expr(p, s, e->a, out);
      fputs(" +: ", out);
      ir_print_expr(p, s, e->b, out);
    }
    fputs(", cells ", out);
    ir_print_expr(p, s, e->c, out);
    fprintf(out, " +: %" PRId64 ")", e->rows->kc);
    return;
  case IX_HBM_ROW: /* the row of X[r, c], checked */
    fprintf(out, "row(%s[", p->kernel->tensors[e->id].name);
    ir_print_expr(p, s, e->a, out);
    fputs(", ", out);
    ir_print_expr(p, s, e->b, out);
    fputs("])", out);
    return;
  case IX_SELECT:
    fputc('(', out);
    ir_print_expr(p, s, e->a, out);
    fputs(" ? ", out);
    ir_print_expr(p, s, e->b, out);
    fputs(" : ", out);
    ir_print_expr(p, s, e->c, out);
    fputc(')', out);
    return;
  case IX_LT:
  case IX_LE:
  case IX_GT:
  case IX_GE:
  case IX_EQ:
  case IX_NE:
  case IX_AND:
  case IX_OR:
    fputc('(', out);
    ir_print_expr(p, s, e->a, out);
    fputs(condition_symbol[e->kind - IX_LT], out);
    ir_print_expr(p, s, e->b, out);
    fputc(')', out);
    return;
  default:
    if (e->kind == IX_ADD && e->b->kind == IX_CONST && e->b->value < 0 && e->b->value != INT64_MIN) {
      print_operand_expr(p, s, e->a, precedence(e), out);
      fprintf(out, " - %" PRId64, -e->b->value);
      return;
    }
    /* left-associative: the right operand needs parentheses at equal precedence */
    print_operand_expr(p, s, e->a, precedence(e), out);
    fputs(symbol[e->kind], out);
    print_operand_expr(p, s, e->b, precedence(e) + 1, out);
  }
}

static void indent(FILE *out, int depth) { fprintf(out, "%*s", 2 * depth, ""); }

/* One dimension of a view or slice: lo +: ext [step k] [clipped to n]. */
static void print_view_dim(const Program *p, const IrStream *s, const IrView *v, int d, FILE *out) {
  ir_print_expr(p, s, v->lo[d], out);
  fprintf(out, " +: %" PRId64, v->ext[d]);
  if (v->step[d]) {
    fputs(" step ", out);
    ir_print_expr(p, s, v->step[d], out);
  }
  if (v->n[d]) {
    fputs(" clipped to ", out);
    ir_print_expr(p, s, v->n[d], out);
  }
}

static void print_operand(const Program *p, const IrStream *s, const IrOperand *o, FILE *out) {
  const Kernel *k = p->kernel;
  switch (o->kind) {
  case OPND_TILE:
    fputs(k->tiles[o->decl].name, out);
    if (k->tiles[o->decl].slotted) {
      fputc('[', out);
      ir_print_expr(p, s, o->slot, out);
      fputc(']', out);
    }
    for (int d = 0; o->v && d < 2; d++) {
      fputs(d ? ", " : "[", out);
      print_view_dim(p, s, o->v, d, out);
    }
    if (o->v) fputc(']', out);
    return;
  case OPND_HBM:
    if (o->v) {
      fprintf(out, "%s[", k->tensors[o->decl].name);
      for (int d = 0; d < 2; d++) {
        if (d) fputs(", ", out);
        if (d == 0 && o->gather) { /* IDX[row + p, col] +: n */
          fprintf(out, "%s[", k->tensors[o->gather - 1].name);
          ir_print_expr(p, s, o->row, out);
          fputs(o->gaxis ? ", " : " +p, ", out);
          ir_print_expr(p, s, o->col, out);
          fprintf(out, "%s] +: %" PRId64, o->gaxis ? " +p" : "", o->v->ext[0]);
          continue;
        }
        print_view_dim(p, s, o->v, d, out);
      }
      fputc(']', out);
      return;
    }
    fprintf(out, "%s[", k->tensors[o->decl].name);
    ir_print_expr(p, s, o->row, out);
    fputs(", ", out);
    ir_print_expr(p, s, o->col, out);
    fputc(']', out);
    return;
  case OPND_IMM:
    if (o->word) fputs(o->word, out);
    else fprintf(out, "%g", (double)o->imm);
    return;
  default: bug("print_operand: kind %d", o->kind);
  }
}

static const char *engine_name(const Program *p, int e) { return p->target->engines[e].name; }

static void print_wait(const Program *p, const IrStream *s, const IrNode *n, FILE *out) {
  fprintf(out, "wait %s >= ", engine_name(p, n->engine));
  ir_print_expr(p, s, n->threshold, out);
  if (n->why) {
    fprintf(out, "  // %s, line %d <- line", n->why->kind, n->why->consumer_line);
    for (int i = 0; i < n->why->nproducers; i++)
      fprintf(out, "%s %d", i ? "," : "", n->why->producer_lines[i]);
    fprintf(out, ", %s", n->why->distance);
  }
}

static void print_nodes(const Program *p, const IrStream *s, const IrNode *n, int depth, FILE *out);

static void print_node(const Program *p, const IrStream *s, const IrNode *n, int depth, FILE *out) {
  indent(out, depth);
  switch (n->kind) {
  case IR_OP:
    fputs(n->instr->op_name, out);
    for (int i = 0; i < n->noperands; i++) {
      fputs(i ? ", " : " ", out);
      print_operand(p, s, &n->operands[i], out);
    }
    fprintf(out, "  // line %d\n", n->line);
    return;
  case IR_WAIT:
    print_wait(p, s, n, out);
    fputc('\n', out);
    return;
  case IR_SET:
    fprintf(out, "set %s = ", s->var_names[n->var]);
    ir_print_expr(p, s, n->value, out);
    fputc('\n', out);
    return;
  case IR_STORE:
    fprintf(out, "store %s[", s->arrays[n->array].name);
    ir_print_expr(p, s, n->index, out);
    fputs("] = ", out);
    ir_print_expr(p, s, n->value, out);
    fputc('\n', out);
    return;
  case IR_LOOP:
    fprintf(out, "for %s in ", p->kernel->loops[n->loop_id]->var);
    ir_print_expr(p, s, n->lo, out);
    fputs(" .. ", out);
    ir_print_expr(p, s, n->hi, out);
    fprintf(out, " {  // line %d\n", n->line);
    print_nodes(p, s, n->body, depth + 1, out);
    indent(out, depth);
    fputs("}\n", out);
    return;
  case IR_BARRIER: fprintf(out, "barrier  // line %d\n", n->line); return;
  case IR_IF:
    fputs("if ", out);
    ir_print_expr(p, s, n->cond, out);
    fprintf(out, " {  // line %d\n", n->line);
    print_nodes(p, s, n->body, depth + 1, out);
    if (n->orelse) {
      indent(out, depth);
      fputs("} else {\n", out);
      print_nodes(p, s, n->orelse, depth + 1, out);
    }
    indent(out, depth);
    fputs("}\n", out);
    return;
  }
  bug("print_node: kind %d", n->kind);
}

static void print_nodes(const Program *p, const IrStream *s, const IrNode *n, int depth, FILE *out) {
  for (; n; n = n->next) print_node(p, s, n, depth, out);
}

static void print_declarations(const Program *p, const IrStream *s, FILE *out) {
  for (int a = 0; a < s->narrays; a++) {
    fprintf(out, "  array %s[", s->arrays[a].name);
    ir_print_expr(p, s, s->arrays[a].length, out);
    fputs("]\n", out);
  }
  for (int v = 0; v < s->nvars; v++) fprintf(out, "  var %s\n", s->var_names[v]);
}

void ir_print(const Program *p, FILE *out) {
  const IrProgram *ir = p->ir;
  fprintf(out, "// kernel %s, sync %s, target %s\n", p->kernel->name,
          sync_name(ir->sync), p->target->name);
  fmt_storage(p->kernel, out);
  for (int e = 0; e < ir->nengines; e++) {
    const IrStream *s = &ir->streams[e];
    fprintf(out, "engine %s {\n", engine_name(p, e));
    print_declarations(p, s, out);
    print_nodes(p, s, s->body, 1, out);
    fputs("}\n", out);
  }
}

/* ---- Explaining. */

static void explain_wait(const Program *p, const IrStream *s, int engine, const IrNode *n, FILE *out) {
  const WaitWhy *w = n->why;
  fprintf(out, "%s line %d: wait %s >= ", engine_name(p, engine), n->line,
          engine_name(p, n->engine));
  ir_print_expr(p, s, n->threshold, out);
  fputc('\n', out);
  if (!w) return;
  fprintf(out, "  %s: consumer line %d, producer line%s", w->kind, w->consumer_line,
          w->nproducers > 1 ? "s" : "");
  for (int i = 0; i < w->nproducers; i++) fprintf(out, "%s %d", i ? "," : "", w->producer_lines[i]);
  fprintf(out, " on %s; distance: %s\n", engine_name(p, n->engine), w->distance);
  if (w->fallback) fprintf(out, "  fallback: %s\n", w->fallback);
}

static void explain_nodes(const Program *p, const IrStream *s, int engine, const IrNode *n,
                          FILE *out) {
  for (; n; n = n->next) {
    if (n->kind == IR_WAIT) explain_wait(p, s, engine, n, out);
    if (n->kind == IR_LOOP || n->kind == IR_IF) explain_nodes(p, s, engine, n->body, out);
    if (n->kind == IR_IF) explain_nodes(p, s, engine, n->orelse, out);
  }
}

/* The back-pressure the runtime keeps for the counter window: each
 * producer holds an op only while a consumer that is running has seen
 * 2^counter_bits - 1 or less of its counter behind (docs/algorithm.md 7). */
static void explain_backpressure(const Program *p, FILE *out) {
  const IrProgram *ir = p->ir;
  for (int e = 0; e < ir->nengines; e++) {
    const char *sep = "";
    for (int c = 0; c < ir->nengines; c++) {
      if (c == e || !(ir_tracks(&ir->streams[c]) >> e & 1)) continue;
      if (!*sep)
        fprintf(out, "%s back-pressure: holds an op while its counter is 2^%d - 1 past what ",
                p->target->engines[e].name, p->target->counter_bits);
      fprintf(out, "%s%s", sep, p->target->engines[c].name);
      sep = ", ";
    }
    if (*sep) fputs(" last saw of it (counter window)\n", out);
  }
}

void ir_explain(const Program *p, FILE *out) {
  const IrProgram *ir = p->ir;
  fprintf(out, "// waits of kernel %s, sync %s: engine line: wait, then its provenance\n",
          p->kernel->name, sync_name(ir->sync));
  queues_explain(p, out);
  for (int e = 0; e < ir->nengines; e++) {
    for (int i = 0; i < ir->streams[e].nnotes; i++) fprintf(out, "%s follows %s\n", engine_name(p, e), ir->streams[e].notes[i]);
    explain_nodes(p, &ir->streams[e], e, ir->streams[e].body, out);
  }
  explain_backpressure(p, out);
}

/* ---- Validation. */

typedef struct Checker {
  const Program *p;
  const IrStream *s;
  int engine;
} Checker;

static void check_expr(const Checker *c, const IrExpr *e) {
  if (!e) bug("ir_validate: engine %d: missing expression", c->engine);
  switch (e->kind) {
  case IX_CONST: return;
  case IX_PARAM:
    if (e->id < 0 || e->id >= c->p->kernel->nparams) bug("ir_validate: parameter %d", e->id);
    return;
  case IX_LOOPVAR:
    if (e->id < 0 || e->id >= c->p->kernel->nloops) bug("ir_validate: loop %d", e->id);
    return;
  case IX_VAR:
    if (e->id < 0 || e->id >= c->s->nvars) bug("ir_validate: engine %d: var %d", c->engine, e->id);
    return;
  case IX_LOAD:
    if (e->id < 0 || e->id >= c->s->narrays || e->value < 0 || e->value >= BFRT_NOPS)
      bug("ir_validate: engine %d: load of array %d for op %lld", c->engine, e->id, (long long)e->value);
    check_expr(c, e->a);
    return;
  case IX_ADD:
  case IX_SUB:
  case IX_MUL:
  case IX_DIV:
  case IX_MOD:
  case IX_MAX:
  case IX_TRIPS:
  case IX_LT:
  case IX_LE:
  case IX_GT:
  case IX_GE:
  case IX_EQ:
  case IX_NE:
  case IX_AND:
  case IX_OR:
    check_expr(c, e->a);
    check_expr(c, e->b);
    return;
  case IX_NOT: check_expr(c, e->a); return;
  case IX_ELEM:
    if (e->id < 0 || e->id >= c->p->kernel->ntensors || !c->p->kernel->tensors[e->id].ints)
      bug("ir_validate: element of tensor %d, not an i32 tensor", e->id);
    check_expr(c, e->a);
    check_expr(c, e->b);
    return;
  case IX_TILE_AT:
    if (!e->c || e->c->kind != IX_CONST || e->c->value < 0 || e->c->value > 4 || e->id < 0 ||
        e->id >= (e->c->value < 3 ? c->p->kernel->ntiles : c->p->kernel->ntensors) || e->value < 0 ||
        e->value >= BFRT_NOPS || !e->b || e->b->kind != IX_CONST)
      bug("ir_validate: engine %d: checked index of tile %d", c->engine, e->id);
    check_expr(c, e->a);
    return;
  case IX_ROWS:
    if (e->id < 0 || e->id >= c->p->kernel->ntensors || !e->rows || !e->a || !e->b || !e->c || e->rows->n < 1 ||
        e->rows->kc < 1 || !e->rows->ncols || e->rows->op < 0 || e->rows->op >= BFRT_NOPS ||
        (e->rows->gather && (e->rows->gather > c->p->kernel->ntensors || !c->p->kernel->tensors[e->rows->gather - 1].ints)))
      bug("ir_validate: engine %d: rows of tensor %d", c->engine, e->id);
    check_expr(c, e->a);
    check_expr(c, e->b);
    check_expr(c, e->c);
    return;
  case IX_HBM_ROW:
    if (e->id < 0 || e->id >= c->p->kernel->ntensors || e->value < 0 || e->value >= BFRT_NOPS || !e->c ||
        e->c->kind != IX_CONST || e->c->value < 0 || e->c->value >= c->p->kernel->ntiles)
      bug("ir_validate: engine %d: hbm row of tensor %d", c->engine, e->id);
    check_expr(c, e->a);
    check_expr(c, e->b);
    return;
  case IX_SELECT:
    check_expr(c, e->a);
    check_expr(c, e->b);
    check_expr(c, e->c);
    return;
  }
  bug("ir_validate: expression kind %d", e->kind);
}

static void check_operand(const Checker *c, const IrOperand *o) {
  const Kernel *k = c->p->kernel;
  switch (o->kind) {
  case OPND_TILE:
    if (o->decl < 0 || o->decl >= k->ntiles) bug("ir_validate: tile %d", o->decl);
    check_expr(c, o->slot);
    for (int d = 0; o->v && d < 2; d++) {
      int64_t size = d ? k->tiles[o->decl].cols : k->tiles[o->decl].rows;
      if (!o->v->lo[d] || o->v->ext[d] < 1 || o->v->ext[d] > size) bug("ir_validate: view of tile %d", o->decl);
      check_expr(c, o->v->lo[d]);
      if (o->v->n[d]) check_expr(c, o->v->n[d]);
    }
    return;
  case OPND_HBM:
    if (o->decl < 0 || o->decl >= k->ntensors) bug("ir_validate: tensor %d", o->decl);
    if ((!o->v == !o->row && !o->gather) || (o->gather && (!o->v || !o->row || !o->col)) ||
        (o->gather && (o->gather > k->ntensors || !k->tensors[o->gather - 1].ints)) ||
        (o->v && (!o->v->lo[0] || !o->v->lo[1] || o->v->ext[0] < 1 || o->v->ext[1] < 1)))
      bug("ir_validate: operand of tensor %d", o->decl);
    if (o->gather) {
      check_expr(c, o->row);
      check_expr(c, o->col);
    }
    for (int d = 0; o->v && d < 2; d++) {
      check_expr(c, o->v->lo[d]);
      if (o->v->n[d]) check_expr(c, o->v->n[d]);
    }
    if (o->v) return;
    check_expr(c, o->row);
    check_expr(c, o->col);
    return;
  case OPND_IMM: return;
  default: bug("ir_validate: operand kind %d", o->kind);
  }
}

static void check_nodes(const Checker *c, const IrNode *n);

static void check_node(const Checker *c, const IrNode *n) {
  switch (n->kind) {
  case IR_OP:
    if (!n->instr || !target_can_run(c->p->target, c->engine, n->op))
      bug("ir_validate: line %d: op %d on engine %d", n->line, n->op, c->engine);
    for (int i = 0; i < n->noperands; i++) check_operand(c, &n->operands[i]);
    return;
  case IR_WAIT:
    if (n->engine < 0 || n->engine >= c->p->ir->nengines || n->engine == c->engine)
      bug("ir_validate: engine %d waits on engine %d", c->engine, n->engine);
    check_expr(c, n->threshold);
    return;
  case IR_SET:
    if (n->var < 0 || n->var >= c->s->nvars) bug("ir_validate: set of var %d", n->var);
    check_expr(c, n->value);
    return;
  case IR_STORE:
    if (n->array < 0 || n->array >= c->s->narrays) bug("ir_validate: store to array %d", n->array);
    if (n->op < 0 || n->op >= BFRT_NOPS) bug("ir_validate: store for op %d", n->op);
    check_expr(c, n->index);
    check_expr(c, n->value);
    return;
  case IR_LOOP:
    if (n->loop_id < 0 || n->loop_id >= c->p->kernel->nloops) bug("ir_validate: loop %d", n->loop_id);
    check_expr(c, n->lo);
    check_expr(c, n->hi);
    check_nodes(c, n->body);
    return;
  case IR_BARRIER:
    if (c->p->ir->sync != SYNC_BARRIER && c->p->ir->sync != SYNC_PAPER)
      bug("ir_validate: barrier in a %s program", sync_name(c->p->ir->sync));
    return;
  case IR_IF:
    check_expr(c, n->cond);
    check_nodes(c, n->body);
    check_nodes(c, n->orelse);
    return;
  }
  bug("ir_validate: node kind %d", n->kind);
}

static void check_nodes(const Checker *c, const IrNode *n) {
  for (; n; n = n->next) check_node(c, n);
}

void ir_validate(Program *p) {
  if (!p->ir) bug("ir_validate: no IR");
  if (p->ir->nengines != p->target->nengines) bug("ir_validate: %d streams", p->ir->nengines);
  for (int e = 0; e < p->ir->nengines; e++) {
    const IrStream *s = &p->ir->streams[e];
    Checker c = {p, s, e};
    for (int a = 0; a < s->narrays; a++) {
      check_expr(&c, s->arrays[a].length);
      if (s->arrays[a].tile < -1 || s->arrays[a].tile >= p->kernel->ntiles)
        bug("ir_validate: engine %d: array %d tracks tile %d", e, a, s->arrays[a].tile);
    }
    check_nodes(&c, s->body);
  }
}

static const char *nodes_fallback(const IrNode *n, bool (*accepted)(const char *why)) {
  for (const char *why = NULL; n; n = n->next) {
    if (n->kind == IR_WAIT && n->why && n->why->fallback && !(accepted && accepted(n->why->fallback)))
      return n->why->fallback;
    if ((n->kind == IR_LOOP || n->kind == IR_IF) && (why = nodes_fallback(n->body, accepted))) return why;
    if (n->kind == IR_IF && (why = nodes_fallback(n->orelse, accepted))) return why;
  }
  return NULL;
}

const char *ir_fallback(const IrProgram *ir, bool (*accepted)(const char *why)) {
  const char *why = NULL;
  for (int e = 0; e < ir->nengines && !why; e++) why = nodes_fallback(ir->streams[e].body, accepted);
  return why;
}
