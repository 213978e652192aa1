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
#include "frontend/ast.h"

#include <stdlib.h>

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
  e->real = strtod(text, NULL);
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

Cond *cond_new(Arena *a, Span span, CondOp op, Expr *lhs, Expr *rhs) {
  Cond *c = ARENA_NEW(a, Cond);
  c->op = op;
  c->span = span;
  c->lhs = lhs;
  c->rhs = rhs;
  return c;
}

Operand operand_name(Span span, const char *name, int nindex, Expr *i0, Expr *i1) {
  Operand o = {.kind = OPND_NAME, .span = span, .name = name, .nindex = nindex};
  o.index[0] = i0;
  o.index[1] = i1;
  return o;
}

Operand operand_expr(Span span, Expr *e) {
  Operand o = {.kind = e->kind == EX_NAME ? OPND_NAME : OPND_IMM, .span = span, .imm_expr = e};
  if (e->kind == EX_NAME) o.name = e->name;
  return o;
}

OperandList operand_list_add(Arena *a, OperandList list, Operand operand) {
  list.items = arena_grow(a, list.items, sizeof(Operand), list.n, &list.cap);
  list.items[list.n++] = operand;
  return list;
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
  s->operands = operands.items;
  return s;
}

Stmt *stmt_place(Stmt *instr, Span span, const char *engine, Span engine_span) {
  instr->span = span;
  instr->engine_name = engine;
  instr->engine_span = engine_span;
  return instr;
}

Stmt *stmt_if(Arena *a, Span span, Cond *cond, StmtList then, StmtList orelse) {
  Stmt *s = new_stmt(a, ST_IF, span);
  s->cond = cond;
  s->body = then.head;
  s->orelse = orelse.head;
  return s;
}

void kernel_add_param(Arena *a, Kernel *k, int *cap, const char *name, Span span) {
  k->params = arena_grow(a, k->params, sizeof(Param), k->nparams, cap);
  k->params[k->nparams++] = (Param){name, span};
}

void kernel_add_tensor(Arena *a, Kernel *k, int *cap, IoKind io, const char *name, Span span,
                       Expr *rows, Expr *cols) {
  k->tensors = arena_grow(a, k->tensors, sizeof(Tensor), k->ntensors, cap);
  k->tensors[k->ntensors++] = (Tensor){name, span, io, rows, cols};
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

int expr_eval(const Expr *e, const int64_t *params, const int64_t *loopvars, int64_t *out,
              const Expr **bad) {
  int64_t l = 0, r = 0;
  switch (e->kind) {
  case EX_INT:
    *out = e->value;
    return 0;
  case EX_NAME:
    if (e->sym == SYM_PARAM) *out = params[e->index];
    else if (e->sym == SYM_LOOPVAR) *out = loopvars[e->index];
    else bug("expr_eval: unresolved name '%s'", e->name);
    return 0;
  case EX_NEG:
    if (expr_eval(e->lhs, params, loopvars, &l, bad)) return -1;
    *out = wrap_sub(0, l);
    return 0;
  default:
    break;
  }
  if (expr_eval(e->lhs, params, loopvars, &l, bad) || expr_eval(e->rhs, params, loopvars, &r, bad))
    return -1;
  switch (e->kind) {
  case EX_ADD: *out = wrap_add(l, r); return 0;
  case EX_SUB: *out = wrap_sub(l, r); return 0;
  case EX_MUL: *out = wrap_mul(l, r); return 0;
  case EX_DIV:
  case EX_MOD:
    if (r == 0) {
      if (bad) *bad = e;
      return -1;
    }
    *out = e->kind == EX_DIV ? int_floor_div(l, r) : int_floor_mod(l, r);
    return 0;
  default:
    bug("expr_eval: expression kind %d", e->kind);
  }
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
