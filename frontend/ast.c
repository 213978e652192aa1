/* ast.c: building the AST, and evaluating its integer expressions.
 *
 * The builders are what the grammar's actions call, one call per action, so
 * the grammar reads as grammar. They only allocate and link: every check
 * belongs to sema. Lists append at their tail so a 5 MB kernel builds in
 * linear time. Each expression records its height, which lets sema reject
 * an absurdly deep expression before any pass recurses into it.
 *
 * expr_eval is the one definition of integer arithmetic in the compiler:
 * 64-bit, wrapping on overflow (never undefined), with / and % rounding
 * toward negative infinity so (i - 1) % 2 is a valid slot when i = 0. */
#include <stdlib.h>
#include <string.h>

#include "frontend/ast.h"
#include "util/diag.h"
#include "util/numbers.h"
#include "runtime/bfrt.h"
#include "runtime/ops.h"

static Expr *new_expr(Arena *a, ExprKind kind, Span span, int height) {
  Expr *e = ARENA_NEW(a, Expr);
  e->kind = kind;
  e->span = span;
  e->height = height;
  return e;
}

Expr *expr_int(Arena *a, Span span, int64_t value) {
  Expr *e = new_expr(a, EX_INT, span, 1);
  e->value = value;
  return e;
}

Expr *expr_float(Arena *a, Span span, const char *text) {
  Expr *e = new_expr(a, EX_FLOAT, span, 1);
  e->name = text;
  if (parse_real(text, strlen(text), &e->real) < 0) bug("expr_float: '%s' is not a decimal number", text);
  return e;
}

Expr *expr_name(Arena *a, Span span, const char *name) {
  Expr *e = new_expr(a, EX_NAME, span, 1);
  e->name = name;
  return e;
}

Expr *expr_negs(Arena *a, Span minus_span, int count, Expr *operand) {
  for (int i = count - 1; i >= 0; i--) {
    Span span = {minus_span.begin + (uint32_t)i, operand->span.end};
    Expr *neg = new_expr(a, EX_NEG, span, operand->height + 1);
    neg->lhs = operand;
    operand = neg;
  }
  return operand;
}

Expr *expr_binary(Arena *a, ExprKind kind, Expr *lhs, Expr *rhs) {
  int height = (lhs->height > rhs->height ? lhs->height : rhs->height) + 1;
  Expr *e = new_expr(a, kind, span_join(lhs->span, rhs->span), height);
  e->lhs = lhs;
  e->rhs = rhs;
  return e;
}

Expr *expr_elem(Arena *a, Span span, const char *name, Expr *row, Expr *col) {
  int height = (row->height > col->height ? row->height : col->height) + 1;
  Expr *e = new_expr(a, EX_ELEM, span, height);
  e->name = name;
  e->lhs = row;
  e->rhs = col;
  return e;
}

Cond *cond_new(Arena *a, Span span, CondOp op, Expr *lhs, Expr *rhs) {
  Cond *c = ARENA_NEW(a, Cond);
  c->op = op;
  c->span = span;
  c->lhs = lhs;
  c->rhs = rhs;
  c->height = 1;
  return c;
}

Cond *cond_binary(Arena *a, CondKind kind, Cond *left, Cond *right) {
  Cond *c = ARENA_NEW(a, Cond);
  c->kind = kind;
  c->span = span_join(left->span, right->span);
  c->left = left;
  c->right = right;
  c->height = (left->height > right->height ? left->height : right->height) + 1;
  return c;
}

Cond *cond_not(Arena *a, Span span, Cond *operand) {
  Cond *c = ARENA_NEW(a, Cond);
  c->kind = COND_NOT;
  c->span = span_join(span, operand->span);
  c->left = operand;
  c->height = operand->height + 1;
  return c;
}

Operand operand_name(Span span, const char *name, int nindex, Expr *i0, Expr *i1) {
  Operand o = {.kind = OPND_NAME, .span = span, .name = name, .nindex = nindex};
  o.index[0] = i0;
  o.index[1] = i1;
  return o;
}

Operand operand_expr(Span span, Expr *e) {
  /* NAME[r, c] parses as an element read; as an operand it is an hbm tile */
  if (e->kind == EX_ELEM) return operand_name(span, e->name, 2, e->lhs, e->rhs);
  Operand o = {.kind = e->kind == EX_NAME ? OPND_NAME : OPND_IMM, .span = span, .imm_expr = e};
  if (e->kind == EX_NAME) o.name = e->name;
  return o;
}

Expr *expr_call(Arena *a, Span span, const char *name, Expr *lhs, Expr *rhs) {
  ExprKind kind = strcmp(name, "min") == 0 ? EX_MIN : strcmp(name, "max") == 0 ? EX_MAX : EX_INT;
  if (kind == EX_INT) return NULL;
  Expr *e = expr_binary(a, kind, lhs, rhs);
  e->span = span;
  return e;
}

Operand operand_view(Arena *a, Span span, const char *name, Expr *slot, Slice d0, Slice d1) {
  Operand o = operand_name(span, name, slot ? 1 : 0, slot, NULL);
  o.view = true;
  o.dim = ARENA_ARRAY(a, Slice, 2); /* out of line: most operands have no view */
  o.dim[0] = d0;
  o.dim[1] = d1;
  o.ndim = 2;
  return o;
}

Slice slice_of(Span span, Expr *lo, Expr *hi) { return (Slice){lo, hi, span, NULL}; }

Slice slice_step(Span span, Slice sl, Expr *k) {
  sl.span = span;
  sl.step = k;
  return sl;
}

SliceList slice_list_add(SliceList l, Slice s) {
  if (l.n < MAX_LISTED) l.s[l.n] = s;
  l.n++;
  return l;
}

ExprList expr_list_add(ExprList l, Expr *e) {
  if (l.n < MAX_LISTED) l.e[l.n] = e;
  l.n++;
  return l;
}

Operand operand_nd(Arena *a, Span span, const char *name, Slice d0, Slice d1, const SliceList *rest) {
  Operand o = operand_name(span, name, 0, NULL, NULL);
  int n = 2 + (rest->n < MAX_LISTED ? rest->n : MAX_LISTED);
  o.view = true;
  o.ndim = 2 + rest->n; /* as written: sema refuses more than MAX_RANK */
  o.dim = ARENA_ARRAY(a, Slice, n);
  o.dim[0] = d0;
  o.dim[1] = d1;
  for (int i = 2; i < n; i++) o.dim[i] = rest->s[i - 2];
  return o;
}

Operand operand_gather(Arena *a, Span span, const char *name, Gather g, Slice d1) {
  Operand o = operand_view(a, span, name, NULL, slice_of(g.span, NULL, NULL), d1);
  o.gather = ARENA_NEW(a, Gather);
  *o.gather = g;
  return o;
}

Gather gather_of(Span span, const char *name, Span name_span, Slice d0, Slice d1) {
  return (Gather){.name = name, .span = span, .name_span = name_span, .dim = {d0, d1}, .tensor = -1};
}

bool expr_equal(const Expr *a, const Expr *b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case EX_INT: return a->value == b->value;
  case EX_FLOAT: return a->real == b->real;
  case EX_NAME:
    return a->sym == b->sym && (a->sym == SYM_UNRESOLVED ? strcmp(a->name, b->name) == 0 : a->index == b->index);
  case EX_ELEM: return strcmp(a->name, b->name) == 0 && expr_equal(a->lhs, b->lhs) && expr_equal(a->rhs, b->rhs);
  default: return expr_equal(a->lhs, b->lhs) && expr_equal(a->rhs, b->rhs);
  }
}

/* A linear combination sum(coef * atom) + c of subexpressions that are not
 * sums, differences, negations or products by a constant. */
enum { MAX_ATOMS = 16 };
typedef struct Linear {
  int64_t c;
  int n;
  bool ok;
  const Expr *atom[MAX_ATOMS];
  int64_t coef[MAX_ATOMS];
} Linear;

static void linear_add(Linear *f, const Expr *e, int64_t scale) {
  int64_t v;
  Linear k = {.ok = true};
  if (!f->ok) return;
  switch (e->kind) {
  case EX_INT:
    f->ok = !__builtin_mul_overflow(e->value, scale, &v) && !__builtin_add_overflow(f->c, v, &f->c);
    return;
  case EX_NEG:
    if (scale == INT64_MIN) f->ok = false;
    else linear_add(f, e->lhs, -scale);
    return;
  case EX_ADD:
  case EX_SUB:
    linear_add(f, e->lhs, scale);
    if (e->kind == EX_SUB && scale == INT64_MIN) f->ok = false;
    else linear_add(f, e->rhs, e->kind == EX_SUB ? -scale : scale);
    return;
  case EX_MUL:
    linear_add(&k, e->lhs, 1);
    if (k.ok && k.n == 0) {
      if (__builtin_mul_overflow(k.c, scale, &v)) f->ok = false;
      else linear_add(f, e->rhs, v);
      return;
    }
    k = (Linear){.ok = true};
    linear_add(&k, e->rhs, 1);
    if (k.ok && k.n == 0) {
      if (__builtin_mul_overflow(k.c, scale, &v)) f->ok = false;
      else linear_add(f, e->lhs, v);
      return;
    }
    break;
  default: break;
  }
  for (int i = 0; i < f->n; i++)
    if (expr_equal(f->atom[i], e)) {
      f->ok = !__builtin_add_overflow(f->coef[i], scale, &f->coef[i]);
      return;
    }
  if (f->n == MAX_ATOMS) {
    f->ok = false;
    return;
  }
  f->atom[f->n] = e;
  f->coef[f->n++] = scale;
}

static int64_t magnitude(int64_t v) { return v == INT64_MIN ? 1 : v < 0 ? -v : v; }

int64_t expr_alignment(const Expr *e, const int64_t *params) {
  int64_t a, b, v;
  switch (e->kind) {
  case EX_INT: return magnitude(e->value);
  case EX_NAME: return e->sym == SYM_PARAM && params ? magnitude(params[e->index]) : 1;
  case EX_NEG: return expr_alignment(e->lhs, params);
  case EX_ADD:
  case EX_SUB:
  case EX_MIN:
  case EX_MAX: /* the value is one of the two */
    return gcd_i64(expr_alignment(e->lhs, params), expr_alignment(e->rhs, params));
  case EX_MUL:
    a = expr_alignment(e->lhs, params), b = expr_alignment(e->rhs, params);
    return __builtin_mul_overflow(a, b, &v) ? 1 : v;
  default: return 1;
  }
}

bool expr_const_difference(const Expr *hi, const Expr *lo, int64_t *out) {
  Linear f = {.ok = true};
  linear_add(&f, hi, 1);
  linear_add(&f, lo, -1);
  for (int i = 0; f.ok && i < f.n; i++)
    if (f.coef[i] != 0) return false;
  if (!f.ok) return false;
  *out = f.c;
  return true;
}

OperandList operand_list_add(OperandList list, Operand operand) {
  if (list.n == list.cap) {
    list.cap = list.cap ? 2 * list.cap : 4;
    list.items = realloc(list.items, sizeof(Operand) * (size_t)list.cap);
    if (!list.items) bug("out of memory (%d operands)", list.cap);
  }
  list.items[list.n++] = operand;
  return list;
}

void operand_list_free(OperandList *list) {
  free(list->items);
  *list = (OperandList){0};
}

StmtList stmt_list_add(StmtList list, Stmt *s) {
  if (!s) return list;
  if (list.tail) list.tail->next = s;
  else list.head = s;
  list.tail = s;
  return list;
}

static Stmt *new_stmt(Arena *a, StmtKind kind, Span span) {
  Stmt *s = ARENA_NEW(a, Stmt);
  s->kind = kind;
  s->span = span;
  s->engine = -1;
  s->op = -1;
  s->loop_id = -1;
  s->instr_id = -1;
  return s;
}

Stmt *stmt_for(Arena *a, Span span, const char *var, Span var_span, Expr *lo, Expr *hi,
               StmtList body) {
  Stmt *s = new_stmt(a, ST_FOR, span);
  s->var = var;
  s->var_span = var_span;
  s->lo = lo;
  s->hi = hi;
  s->body = body.head;
  return s;
}

Stmt *stmt_let(Arena *a, Span span, const char *word, Span word_span, const char *name, Span name_span, Expr *value) {
  Stmt *s = new_stmt(a, ST_LET, span);
  s->op_name = word;
  s->op_span = word_span;
  s->var = name;
  s->var_span = name_span;
  s->lo = value;
  return s;
}

Stmt *stmt_block(Arena *a, Span span, const char *engine, Span engine_span, StmtList body) {
  Stmt *s = new_stmt(a, ST_BLOCK, span);
  s->engine_name = engine;
  s->engine_span = engine_span;
  s->body = body.head;
  return s;
}

Stmt *stmt_instr(Arena *a, Span span, const char *op, Span op_span, OperandList operands) {
  Stmt *s = new_stmt(a, ST_INSTR, span);
  s->op_name = op;
  s->op_span = op_span;
  s->noperands = operands.n;
  s->operands = ARENA_ARRAY(a, Operand, operands.n);
  if (operands.n) memcpy(s->operands, operands.items, sizeof(Operand) * (size_t)operands.n);
  operand_list_free(&operands);
  return s;
}

Stmt *stmt_place(Stmt *instr, Span span, const char *engine, Span engine_span) {
  instr->span = span;
  instr->engine_name = engine;
  instr->engine_span = engine_span;
  return instr;
}

Stmt *stmt_if(Arena *a, Span span, Cond *cond, StmtList then, uint32_t then_close, StmtList orelse) {
  Stmt *s = new_stmt(a, ST_IF, span);
  s->cond = cond;
  s->body = then.head;
  s->then_close = then_close;
  s->orelse = orelse.head;
  return s;
}

StmtList stmt_else_if(Stmt *s) {
  s->chained = true;
  return (StmtList){s, s};
}

void kernel_add_typed_tensor(Arena *a, Kernel *k, int *cap, IoKind io, const char *name, Span span,
                             const char *elem, Span elem_span, Expr *rows, Expr *cols) {
  kernel_add_tensor(a, k, cap, io, name, span, rows, cols);
  Tensor *t = &k->tensors[k->ntensors - 1];
  t->elem = elem;
  t->elem_span = elem_span;
}

void kernel_add_typed_tile(Arena *a, Kernel *k, int *cap, MemKind mem, const char *name, Span span,
                           Expr *slots, const char *elem, Span elem_span, Expr *rows, Expr *cols) {
  kernel_add_tile(a, k, cap, mem, name, span, slots, rows, cols);
  Tile *t = &k->tiles[k->ntiles - 1];
  t->elem = elem;
  t->elem_span = elem_span;
}

_Static_assert((int)ELEM_NTYPES == (int)BFRT_NDTYPES, "ElemType numbers the runtime's BFRT_DTYPE_*");

int elem_type_of(const char *name) {
  for (int i = 0; i < ELEM_NTYPES; i++)
    if (!strcmp(name, bfrt_dtype_name(i))) return i;
  return -1;
}

const char *elem_type_name(ElemType type) { return bfrt_dtype_name((int)type); }

static int operand_elem_bytes(const Kernel *k, const Operand *o) {
  if (o->kind == OPND_TILE) return bfrt_dtype_bytes((int)k->tiles[o->decl].type);
  if (o->kind == OPND_HBM) return bfrt_dtype_bytes((int)k->tensors[o->decl].type);
  return 0;
}

int instr_elem_bytes(const Kernel *k, const Stmt *s) {
  int dst = operand_elem_bytes(k, &s->operands[0]);
  int src = operand_elem_bytes(k, &s->operands[bfrt_op_source(s->op)]);
  return bfrt_op_elem_bytes(s->op, dst, src);
}

void kernel_add_param(Arena *a, Kernel *k, int *cap, const char *name, Span span) {
  k->params = arena_grow(a, k->params, sizeof(Param), k->nparams, cap);
  k->params[k->nparams++] = (Param){name, span};
}

void kernel_add_tensor(Arena *a, Kernel *k, int *cap, IoKind io, const char *name, Span span,
                       Expr *rows, Expr *cols) {
  k->tensors = arena_grow(a, k->tensors, sizeof(Tensor), k->ntensors, cap);
  k->tensors[k->ntensors++] = (Tensor){name, span, io, rows, cols, 2, {rows, cols}, false, NULL, {0, 0}, ELEM_F32};
}

/* Stored flattened, row major: rows the product of every dimension but
 * the last (what the runtime, the references and the tracking see), the
 * dimensions as written kept for the slices and for fmt. */
void kernel_add_nd_tensor(Arena *a, Kernel *k, int *cap, IoKind io, const char *name, Span span,
                          const char *elem, Span elem_span, Expr *d0, Expr *d1, const ExprList *rest) {
  Expr *dims[MAX_LISTED + 2] = {d0, d1};
  int n = 2;
  for (int i = 0; i < rest->n && i < MAX_LISTED; i++) dims[n++] = rest->e[i];
  Expr *rows = dims[0];
  for (int i = 1; i < n - 1; i++) rows = expr_binary(a, EX_MUL, rows, dims[i]);
  kernel_add_typed_tensor(a, k, cap, io, name, span, elem, elem_span, rows, dims[n - 1]);
  Tensor *t = &k->tensors[k->ntensors - 1];
  t->rank = 2 + rest->n; /* as written: sema refuses more than MAX_RANK */
  for (int i = 0; i < n && i < MAX_LISTED; i++) t->dims[i] = dims[i];
}

void kernel_add_tile(Arena *a, Kernel *k, int *cap, MemKind mem, const char *name, Span span,
                     Expr *slots, Expr *rows, Expr *cols) {
  k->tiles = arena_grow(a, k->tiles, sizeof(Tile), k->ntiles, cap);
  k->tiles[k->ntiles++] = (Tile){.name = name, .span = span, .mem = mem, .slots_expr = slots,
                                 .rows_expr = rows, .cols_expr = cols, .slotted = slots != NULL};
}

void kernel_add_const(Arena *a, Kernel *k, int *cap, const char *name, Span span, Expr *value) {
  k->consts = arena_grow(a, k->consts, sizeof(Const), k->nconsts, cap);
  k->consts[k->nconsts++] = (Const){.name = name, .span = span, .value = value};
}

void kernel_add_comment(Arena *a, Kernel *k, int *cap, Span span) {
  k->comments = arena_grow(a, k->comments, sizeof(Span), k->ncomments, cap);
  k->comments[k->ncomments++] = span;
}

void kernel_finish(Kernel *k, const char *name, Span span, Span whole, StmtList body) {
  k->name = name;
  k->span = span;
  k->end = whole.end - 1;
  k->body = body.head;
}

/* ---- Evaluation. Wrapping arithmetic through uint64_t: overflow is the
 * user's business at run time, but never undefined behaviour here. */
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

int64_t int_floor_div(int64_t a, int64_t b) {
  if (b == -1) return wrap_sub(0, a);
  int64_t q = a / b;
  if (a % b != 0 && (a < 0) != (b < 0)) q--;
  return q;
}

int64_t int_floor_mod(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && (r < 0) != (b < 0)) r += b;
  return r;
}

/* An element read: row and col within the tensor, else EVAL_OUT_OF_RANGE. */
static int read_elem(const Expr *e, EvalEnv *env, int64_t row, int64_t col, int64_t *out,
                     const Expr **bad) {
  if (!env->ints || !env->ints[e->index]) bug("expr_eval: no values for tensor '%s'", e->name);
  const int64_t *shape = env->shape[e->index];
  if (row < 0 || row >= shape[0] || col < 0 || col >= shape[1]) {
    env->bad_at[0] = row;
    env->bad_at[1] = col;
    if (bad) *bad = e;
    return EVAL_OUT_OF_RANGE;
  }
  int32_t v;
  memcpy(&v, (const char *)env->ints[e->index] + 4 * (row * shape[1] + col), sizeof v);
  *out = v;
  return 0;
}

int expr_eval_in(const Expr *e, EvalEnv *env, int64_t *out, const Expr **bad) {
  int64_t l = 0, r = 0;
  int status;
  switch (e->kind) {
  case EX_INT:
    *out = e->value;
    return 0;
  case EX_NAME:
    if (e->sym == SYM_PARAM) *out = env->params[e->index];
    else if (e->sym == SYM_LOOPVAR) *out = env->loopvars[e->index];
    else bug("expr_eval: unresolved name '%s'", e->name);
    return 0;
  case EX_NEG:
    if ((status = expr_eval_in(e->lhs, env, &l, bad))) return status;
    *out = wrap_sub(0, l);
    return 0;
  default:
    break;
  }
  if ((status = expr_eval_in(e->lhs, env, &l, bad)) || (status = expr_eval_in(e->rhs, env, &r, bad)))
    return status;
  switch (e->kind) {
  case EX_ADD: *out = wrap_add(l, r); return 0;
  case EX_SUB: *out = wrap_sub(l, r); return 0;
  case EX_MUL: *out = wrap_mul(l, r); return 0;
  case EX_DIV:
  case EX_MOD:
    if (r == 0) {
      if (bad) *bad = e;
      return EVAL_DIV_ZERO;
    }
    *out = e->kind == EX_DIV ? int_floor_div(l, r) : int_floor_mod(l, r);
    return 0;
  case EX_ELEM: return read_elem(e, env, l, r, out, bad);
  case EX_MIN: *out = l < r ? l : r; return 0;
  case EX_MAX: *out = l > r ? l : r; return 0;
  default:
    bug("expr_eval: expression kind %d", e->kind);
  }
}

int gather_row_eval(const Gather *g, EvalEnv *env, int64_t p, int64_t *out, const Expr **bad) {
  int64_t at[2];
  int status;
  if ((status = expr_eval_in(g->elem->lhs, env, &at[0], bad)) || (status = expr_eval_in(g->elem->rhs, env, &at[1], bad)))
    return status;
  at[g->axis] = wrap_add(at[g->axis], p);
  return read_elem(g->elem, env, at[0], at[1], out, bad);
}

int expr_eval(const Expr *e, const int64_t *params, const int64_t *loopvars, int64_t *out,
              const Expr **bad) {
  EvalEnv env = {.params = params, .loopvars = loopvars};
  return expr_eval_in(e, &env, out, bad);
}

bool cond_holds(CondOp op, int64_t a, int64_t b) {
  switch (op) {
  case COND_LT: return a < b;
  case COND_LE: return a <= b;
  case COND_GT: return a > b;
  case COND_GE: return a >= b;
  case COND_EQ: return a == b;
  case COND_NE: return a != b;
  }
  bug("unknown condition operator %d", (int)op);
}

int cond_eval(const Cond *c, EvalEnv *env, bool *out, const Expr **bad) {
  int64_t l, r;
  int status;
  switch (c->kind) {
  case COND_CMP:
    if ((status = expr_eval_in(c->lhs, env, &l, bad)) || (status = expr_eval_in(c->rhs, env, &r, bad)))
      return status;
    *out = cond_holds(c->op, l, r);
    return 0;
  case COND_NOT:
    if ((status = cond_eval(c->left, env, out, bad))) return status;
    *out = !*out;
    return 0;
  case COND_AND:
  case COND_OR:
    if ((status = cond_eval(c->left, env, out, bad))) return status;
    if (*out == (c->kind == COND_OR)) return 0;
    return cond_eval(c->right, env, out, bad);
  }
  bug("cond_eval: condition kind %d", (int)c->kind);
}
