/* sema.c: semantic analysis. It resolves every name, places every
 * instruction on an engine, checks every rule of the language that the
 * grammar cannot express, and numbers instructions and loops in program
 * order so later passes can keep side tables indexed by id.
 *
 * Beyond the grammar's rules it evaluates `const` declarations (integers
 * substituted into integer expressions, reals only in immediates, which it
 * computes in real arithmetic), picks the form of an op the operands fit
 * (add with a tile or an immediate), enforces the target's hardware limits
 * (partitions, SBUF and PSUM capacity, PSUM banks, which engines reach
 * PSUM, matmul writing f32 PSUM) and requires every out tensor to be stored to; it warns of tile
 * slots read before anything can have written them (frontend/written.c).
 * Last, on a checked kernel, it gives each `dma:` transfer its DMA queue
 * (assign_queues, frontend/queues.c), so every later pass sees each
 * instruction on the engine that runs it.
 *
 * Each rule has its own positioned message, and checking goes on after an
 * error so one run reports as much as it sensibly can; a construct that
 * already failed (an unknown op, an operand that did not resolve) is not
 * checked further, so one mistake gives one message.
 *
 * Names live in three places: declarations (parameters, tensors, tiles,
 * constants) in a hash table that doubles before it is half full, since a
 * generated kernel may declare thousands; loop variables on a stack of the
 * enclosing loops, at most MAX_NESTING deep; lets on a stack of those in
 * scope, at most MAX_OPEN_LETS, each use of one replaced by its checked
 * expression (its root copied, its name kept for fmt). At an operand
 * position whose role in ops.def is a name (an ALU op, an activation
 * function, negate) a bare name is looked up in that vocabulary first and
 * becomes an immediate holding its code.
 * Recursion is bounded: statements by MAX_NESTING (checked again here for
 * ASTs not built by the parser), expressions by MAX_EXPR_DEPTH, which is
 * checked on each expression's recorded height before walking it, and by
 * MAX_EXPR_C_STACK, the values the emitted C keeps pending (c_stack_of_operand). */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "runtime/ops.h"
#include "frontend/program.h"
#include "frontend/slices.h"

typedef enum DeclKind { DECL_PARAM, DECL_TENSOR, DECL_TILE, DECL_CONST } DeclKind;

typedef struct Decl {
  const char *name; /* NULL: an empty slot of the table */
  DeclKind kind;
  int index;
  Span span;
} Decl;

/* Which names an expression may use. */
typedef enum ExprScope {
  IN_CONSTANT, /* none: tile shapes and slot counts */
  IN_PARAMS,   /* parameters: tensor shapes */
  IN_LOOPS,    /* parameters and the enclosing loops' variables */
  IN_REAL,     /* an immediate or a const's value: consts only, real numbers allowed */
} ExprScope;

/* The most lets in scope at once (a positioned error beyond). */
enum { MAX_OPEN_LETS = 4096 };

typedef struct Sema {
  Program *p;
  Kernel *k;
  Diag *diag;
  Decl *decls; /* hash table, open addressing, at most half full */
  size_t ndecl_slots, ndecl_used;
  bool *tile_ok; /* the tile's shape and slots evaluated */
  Stmt *loops[MAX_NESTING + 1]; /* enclosing loops, outermost first */
  int nloops_open;
  int depth; /* enclosing loops, blocks and conditionals */
  Stmt *block; /* the enclosing engine block, or NULL */
  int instr_cap, loop_cap;
  int consts_defined; /* consts[0 .. consts_defined) have their values */
  Stmt **lets;        /* every let seen, in program order (the first nlets_open in scope) ... */
  int nlets, lets_cap;
  Stmt *open_lets[MAX_OPEN_LETS]; /* the lets in scope, outermost first */
  int nlets_open;
} Sema;

static const char *const decl_kind_name[] = {"parameter", "tensor", "tile", "constant"};

/* ---- The declaration table. */
static size_t name_hash(const char *name) {
  size_t h = 14695981039346656037u;
  for (const unsigned char *c = (const unsigned char *)name; *c; c++) h = (h ^ *c) * 1099511628211u;
  return h;
}

/* The slot of name, or the empty slot where it would go. The table is kept
 * at most half full (grow_decls), so the probe meets an empty slot within
 * ndecl_slots steps. */
static Decl *decl_slot(Sema *s, const char *name) {
  size_t i = name_hash(name) & (s->ndecl_slots - 1);
  for (size_t probes = 0; probes < s->ndecl_slots; probes++, i = (i + 1) & (s->ndecl_slots - 1))
    if (!s->decls[i].name || !strcmp(s->decls[i].name, name)) break;
  return &s->decls[i];
}

/* Doubles the table once another name would fill it past half, whatever
 * declares names (parameters, tensors, tiles, constants), so no count made
 * in advance can be wrong. */
static void grow_decls(Sema *s) {
  if (2 * (s->ndecl_used + 1) <= s->ndecl_slots) return;
  Decl *old = s->decls;
  size_t nold = s->ndecl_slots;
  s->ndecl_slots *= 2;
  s->decls = ARENA_ARRAY(s->p->arena, Decl, s->ndecl_slots);
  for (size_t i = 0; i < nold; i++)
    if (old[i].name) *decl_slot(s, old[i].name) = old[i];
}

static const Decl *find_decl(Sema *s, const char *name) {
  const Decl *d = decl_slot(s, name);
  return d->name ? d : NULL;
}

static void declare(Sema *s, const char *name, Span span, DeclKind kind, int index) {
  grow_decls(s);
  Decl *d = decl_slot(s, name);
  if (d->name) {
    diag_error(s->diag, span, "duplicate name '%s'", name);
    diag_note(s->diag, d->span, "'%s' is first declared here, as a %s", name,
              decl_kind_name[d->kind]);
    return;
  }
  *d = (Decl){name, kind, index, span};
  s->ndecl_used++;
}

static Stmt *find_loop(Sema *s, const char *name) {
  for (int i = s->nloops_open - 1; i >= 0; i--)
    if (!strcmp(s->loops[i]->var, name)) return s->loops[i];
  return NULL;
}

static Stmt *find_let(Sema *s, const char *name) {
  for (int i = s->nlets_open - 1; i >= 0; i--)
    if (!strcmp(s->open_lets[i]->var, name)) return s->open_lets[i];
  return NULL;
}

/* ---- Expressions. */

static bool is_constant(const Expr *e) {
  switch (e->kind) {
  case EX_INT: return true;
  case EX_NAME:
  case EX_ELEM: return false;
  case EX_NEG: return is_constant(e->lhs);
  default: return is_constant(e->lhs) && is_constant(e->rhs);
  }
}

/* The height of e with its lets expanded, or cap + 1 once it is taller
 * (the recursion stops there). */
static int expanded_height(const Expr *e, int cap) {
  if (!e || cap < 0) return 0;
  if (!e->lhs) return 1;
  int l = expanded_height(e->lhs, cap - 1), r = e->rhs ? expanded_height(e->rhs, cap - 1) : 0;
  int h = 1 + (l > r ? l : r);
  return h > cap + 1 ? cap + 1 : h;
}

/* The node at which e first grows taller than MAX_EXPR_DEPTH. */
static const Expr *too_deep_at(const Expr *e) {
  while (e->height > MAX_EXPR_DEPTH + 1)
    e = e->rhs && e->rhs->height > e->lhs->height ? e->rhs : e->lhs;
  return e;
}

/* A const's name becomes its value, keeping the name for fmt. */
static bool substitute_const(Sema *s, Expr *e, ExprScope scope, const Decl *d) {
  const Const *c = &s->k->consts[d->index];
  if (d->index >= s->consts_defined) {
    diag_error(s->diag, e->span, "constant '%s' is used before its value is defined", e->name);
    diag_note(s->diag, d->span, "'%s' is declared here", e->name);
    return false;
  }
  if (!c->ok) return false;
  if (c->real && scope != IN_REAL) {
    diag_error(s->diag, e->span, "'%s' is a real constant, but an integer is needed here", e->name);
    return false;
  }
  e->kind = c->real ? EX_FLOAT : EX_INT;
  e->value = c->integer;
  e->real = c->number;
  return true;
}

/* A use of a let in scope becomes the let's (checked) expression: its root
 * copied here, its operands shared, the name kept for fmt. Its value is
 * the one it has where the let stands, since nothing it reads can change
 * in the let's scope (docs/language.md, "Integer names"). */
static bool substitute_let(Sema *s, Expr *e, ExprScope scope, const char *what, const Stmt *let) {
  if (scope != IN_LOOPS) {
    diag_error(s->diag, e->span, "%s must be a constant, but uses '%s', a let", what, e->name);
    diag_note(s->diag, let->var_span, "'%s' is named here", e->name);
    return false;
  }
  Span at = e->span;
  const char *name = e->name;
  *e = *let->lo;
  e->span = at;
  e->let = name;
  return true;
}

/* A name that is not in scope but names a let elsewhere: say so. */
static bool let_out_of_scope(Sema *s, const Expr *e) {
  for (int i = s->nlets - 1; i >= 0; i--)
    if (!strcmp(s->lets[i]->var, e->name)) {
      diag_error(s->diag, e->span, "'%s' is not in scope here: a let names its expression for the rest of its body", e->name);
      diag_note(s->diag, s->lets[i]->var_span, "'%s' is named here", e->name);
      return true;
    }
  return false;
}

static bool resolve_name(Sema *s, Expr *e, ExprScope scope, const char *what) {
  Stmt *loop = scope == IN_LOOPS ? find_loop(s, e->name) : NULL;
  if (loop) {
    e->sym = SYM_LOOPVAR;
    e->index = loop->loop_id;
    return true;
  }
  const Stmt *let = find_let(s, e->name);
  if (let) return substitute_let(s, e, scope, what, let);
  const Decl *d = find_decl(s, e->name);
  if (d && d->kind == DECL_CONST) return substitute_const(s, e, scope, d);
  if (!d && let_out_of_scope(s, e)) return false;
  if (!d) {
    diag_error(s->diag, e->span, "undeclared name '%s'", e->name);
  } else if (d->kind != DECL_PARAM) {
    diag_error(s->diag, e->span, "'%s' is a %s, not an integer", e->name, decl_kind_name[d->kind]);
  } else if (scope == IN_CONSTANT || scope == IN_REAL) {
    diag_error(s->diag, e->span, "%s must be a constant, but uses parameter '%s'", what, e->name);
  } else {
    e->sym = SYM_PARAM;
    e->index = d->index;
    return true;
  }
  return false;
}

/* Resolves e's names; reports constant divisions by zero. *constant: e uses
 * no name. Returns whether e is well formed. */
static bool resolve_elem(Sema *s, Expr *e, ExprScope scope, const char *what) {
  const Decl *d = find_decl(s, e->name);
  if (!d) {
    diag_error(s->diag, e->span, "undeclared tensor '%s'", e->name);
  } else if (d->kind == DECL_TENSOR && scope != IN_LOOPS) {
    /* before the tensor's type: constants and shapes are checked before
     * the tensors, and no element of any tensor could be read here */
    diag_error(s->diag, e->span, "%s cannot read device integers: it is evaluated before the kernel runs",
               what);
  } else if (d->kind != DECL_TENSOR || !s->k->tensors[d->index].ints) {
    diag_error(s->diag, e->span, "'%s' is not an i32 tensor: only elements of i32 tensors are integers",
               e->name);
  } else {
    e->index = d->index;
    return true;
  }
  return false;
}

static bool walk_expr(Sema *s, Expr *e, ExprScope scope, const char *what, bool *constant) {
  switch (e->kind) {
  case EX_INT:
    *constant = true;
    return true;
  case EX_FLOAT:
    *constant = true;
    if (scope == IN_REAL) return true;
    diag_error(s->diag, e->span, "%s must be an integer, not the real number %s", what, e->name);
    return false;
  case EX_NAME: {
    bool ok = resolve_name(s, e, scope, what);
    *constant = ok && !e->let && e->kind != EX_NAME; /* a const, substituted */
    if (e->let) *constant = ok && is_constant(e); /* a let of a constant expression */
    return ok;
  }
  case EX_NEG:
    return walk_expr(s, e->lhs, scope, what, constant);
  default:
    break;
  }
  if ((e->kind == EX_MIN || e->kind == EX_MAX) && (scope == IN_PARAMS || scope == IN_REAL)) {
    diag_error(s->diag, e->span, "%s cannot use %s: min and max are for integer expressions in statements and tile shapes",
               what, e->kind == EX_MIN ? "min" : "max");
    return false;
  }
  bool lconst, rconst;
  bool ok = walk_expr(s, e->lhs, scope, what, &lconst);
  ok &= walk_expr(s, e->rhs, scope, what, &rconst);
  *constant = lconst && rconst;
  if (e->kind == EX_ELEM) {
    *constant = false;
    return resolve_elem(s, e, scope, what) && ok;
  }
  int64_t divisor;
  if (ok && rconst && scope != IN_REAL && (e->kind == EX_DIV || e->kind == EX_MOD) &&
      expr_eval(e->rhs, NULL, NULL, &divisor, NULL) == 0 && divisor == 0) {
    diag_error(s->diag, e->span, "%s by zero", e->kind == EX_DIV ? "division" : "modulo");
    ok = false;
  }
  return ok;
}

/* The values the emitted C keeps pending while it evaluates e's operand
 * (rhs or not), e emitted as backend/emit_c.c does: bf_sub(a, b) and the
 * other macros hold a while computing b; bfrt_div(bf_cx, a, b, line) and
 * bfrt_mod hold the function and bf_cx, then a; bfrt_elem(bf_cx, id, row,
 * col, line) three, then four; -x is bf_sub(0, x). */
static int c_stack_of_operand(const Expr *e, bool rhs) {
  switch (e->kind) {
  case EX_NEG: return 1;
  case EX_DIV: case EX_MOD: return rhs ? 3 : 2;
  case EX_ELEM: return rhs ? 4 : 3;
  default: return rhs ? 1 : 0;
  }
}

/* The first node of e (depth first) at which more than MAX_EXPR_C_STACK
 * values would be pending, pending being those above e; or NULL. */
static const Expr *c_stack_overflow_at(const Expr *e, int pending) {
  if (pending > MAX_EXPR_C_STACK) return e;
  if (e->kind == EX_INT || e->kind == EX_FLOAT || e->kind == EX_NAME) return NULL;
  const Expr *at = c_stack_overflow_at(e->lhs, pending + c_stack_of_operand(e, false));
  return at || !e->rhs ? at : c_stack_overflow_at(e->rhs, pending + c_stack_of_operand(e, true));
}

/* Whether e would keep more than MAX_EXPR_C_STACK values pending in the
 * emitted C (reported). */
static bool c_stack_error(Sema *s, const Expr *e, ExprScope scope) {
  const Expr *over = scope == IN_LOOPS || scope == IN_PARAMS ? c_stack_overflow_at(e, 0) : NULL;
  if (!over) return false;
  diag_error(s->diag, over->span,
             "expression nested too deeply to compile: the C would keep more than %d values pending here (a "
             "right operand holds 1, a division's or modulo's 3, a device read's column 4; docs/language.md, "
             "\"Limits\")",
             MAX_EXPR_C_STACK);
  return true;
}

/* Checks e (what names it in messages); *constant as in walk_expr. */
static bool check_expr(Sema *s, Expr *e, ExprScope scope, const char *what, bool *constant) {
  *constant = false;
  if (e->height > MAX_EXPR_DEPTH) {
    diag_error(s->diag, too_deep_at(e)->span,
               "expression too deep: more than %d levels (each operator and each pair of parentheses is a level: "
               "a + b + c has two)",
               MAX_EXPR_DEPTH);
    return false;
  }
  if (c_stack_error(s, e, scope)) return false;
  if (!walk_expr(s, e, scope, what, constant)) return false;
  if (expanded_height(e, MAX_EXPR_DEPTH) > MAX_EXPR_DEPTH) {
    diag_error(s->diag, e->span, "expression too deep with its lets expanded: more than %d levels", MAX_EXPR_DEPTH);
    return false;
  }
  return !c_stack_error(s, e, scope); /* again with its lets expanded */
}

/* A constant, positive expression (tile shapes and slot counts): its value, or 0. */
static int64_t positive_constant(Sema *s, Expr *e, const char *what) {
  bool constant;
  int64_t value;
  if (!check_expr(s, e, IN_CONSTANT, what, &constant)) return 0;
  if (expr_eval(e, NULL, NULL, &value, NULL)) bug("constant with a zero divisor passed sema");
  if (value <= 0) {
    diag_error(s->diag, e->span, "%s must be positive, not %lld", what, (long long)value);
    return 0;
  }
  return value;
}

/* Whether e, checked, holds a real number anywhere. */
static bool has_real(const Expr *e) {
  if (e->kind == EX_FLOAT) return true;
  if (e->kind == EX_INT || e->kind == EX_NAME) return false;
  return has_real(e->lhs) || (e->rhs && has_real(e->rhs));
}

/* e (checked IN_REAL) in real arithmetic; false (reported) on a division by
 * zero or a %, which real numbers do not have. what names e in that
 * report: "an immediate" (computed in reals even of integers alone) or
 * "a constant holding a real number". */
static bool real_value(Sema *s, const Expr *e, const char *what, double *out) {
  double l, r;
  switch (e->kind) {
  case EX_INT: *out = (double)e->value; return true;
  case EX_FLOAT: *out = e->real; return true;
  case EX_NAME: bug("real_value: unresolved name '%s'", e->name);
  case EX_NEG:
    if (!real_value(s, e->lhs, what, &l)) return false;
    *out = -l;
    return true;
  default: break;
  }
  if (!real_value(s, e->lhs, what, &l) || !real_value(s, e->rhs, what, &r)) return false;
  switch (e->kind) {
  case EX_ADD: *out = l + r; return true;
  case EX_SUB: *out = l - r; return true;
  case EX_MUL: *out = l * r; return true;
  case EX_DIV:
    if (r == 0) {
      diag_error(s->diag, e->span, "division by zero");
      return false;
    }
    *out = l / r;
    return true;
  default:
    diag_error(s->diag, e->span, "'%%' needs integers, and %s is computed in real arithmetic", what);
    return false;
  }
}

/* decl = "const" IDENT "=" expr ";" : an integer const when its expression
 * has only integers (evaluated as integer expressions are), a real one
 * otherwise. */
static void check_const(Sema *s, Const *c) {
  bool constant;
  c->ok = false;
  if (!check_expr(s, c->value, IN_REAL, "a constant's value", &constant)) return;
  c->real = has_real(c->value);
  if (!c->real) {
    if (expr_eval(c->value, NULL, NULL, &c->integer, NULL)) {
      diag_error(s->diag, c->value->span, "division by zero");
      return;
    }
    c->number = (double)c->integer;
  } else if (!real_value(s, c->value, "a constant holding a real number", &c->number)) {
    return;
  } else if (!isfinite(c->number)) {
    diag_error(s->diag, c->value->span, "constant '%s' is out of range", c->name);
    return;
  }
  c->ok = true;
}

/* ---- Declarations. */

static const char *type_suggestion(Sema *s, const char *word);

#define FLOAT_TYPES "f32, bf16, fp16, fp8e4 or fp8e5"
/* The float types: the ones tiles may have. */
static const unsigned FLOAT_TYPE_MASK =
    1u << ELEM_F32 | 1u << ELEM_BF16 | 1u << ELEM_FP8E4 | 1u << ELEM_FP8E5 | 1u << ELEM_FP16;

/* The element type written as elem (NULL: the keyword f32), or -1 after an
 * error; allowed: the mask of types this declaration may have. */
static int resolve_elem_type(Sema *s, const char *elem, Span span, unsigned allowed, const char *what) {
  if (!elem) return ELEM_F32;
  int type = elem_type_of(elem);
  if (type >= 0 && (allowed >> type & 1)) return type;
  if (type == ELEM_I32)
    diag_error(s->diag, span, "%s cannot be i32: i32 is for hbm in tensors of device integers; %s are " FLOAT_TYPES,
               what, what);
  else
    diag_error(s->diag, span, "unknown element type '%s': %s are " FLOAT_TYPES "%s%s", elem, what,
               allowed >> ELEM_I32 & 1 ? ", or i32 (device integers)" : "", type_suggestion(s, elem));
  return -1;
}

/* An N-D tensor (3 or 4 dimensions): each dimension as a 2-D tensor's, and
 * its flattened [rows, cols] within the size limit. */
static void check_nd_tensor(Sema *s, Tensor *t) {
  int type = resolve_elem_type(s, t->elem, t->elem_span, ((1u << ELEM_NTYPES) - 1) & ~(1u << ELEM_I32),
                               "tensors of more than two dimensions");
  t->type = type < 0 ? ELEM_F32 : (ElemType)type;
  if (t->rank > MAX_RANK) {
    diag_error(s->diag, t->span, "tensor '%s' has %d dimensions: at most %d", t->name, t->rank, MAX_RANK);
    return;
  }
  int64_t cells = 4, value;
  bool known = true;
  for (int i = 0; i < t->rank; i++) {
    bool constant;
    if (!check_expr(s, t->dims[i], IN_PARAMS, "a tensor dimension", &constant)) return;
    if (!constant || expr_eval(t->dims[i], NULL, NULL, &value, NULL) != 0) {
      known = false;
      continue;
    }
    if (value <= 0) {
      diag_error(s->diag, t->dims[i]->span, "a tensor dimension must be positive, not %lld", (long long)value);
      return;
    }
    if (known && __builtin_mul_overflow(cells, value, &cells)) {
      diag_error(s->diag, t->span, "tensor '%s' is too large: in 4-byte cells it is more than 2^63 bytes", t->name);
      return;
    }
  }
}

/* decl = "hbm" io IDENT ":" ("f32" | "i32" | "bf16" | "fp16" | "fp8e4" | "fp8e5") "[" expr "," expr "]" ";" */
static void check_tensor(Sema *s, Tensor *t) {
  Expr *dims[2] = {t->rows, t->cols};
  if (t->rank > 2) {
    check_nd_tensor(s, t);
    return;
  }
  int type = resolve_elem_type(s, t->elem, t->elem_span, (1u << ELEM_NTYPES) - 1, "hbm tensors");
  t->type = type < 0 ? ELEM_F32 : (ElemType)type;
  t->ints = type == ELEM_I32;
  if (t->ints && t->io != IO_IN)
    diag_error(s->diag, t->span, "i32 tensor '%s' must be 'hbm in': device integers are read-only",
               t->name);
  int64_t value[2];
  int known = 0;
  for (int i = 0; i < 2; i++) {
    bool constant;
    if (check_expr(s, dims[i], IN_PARAMS, "a tensor dimension", &constant) && constant &&
        expr_eval(dims[i], NULL, NULL, &value[i], NULL) == 0 && ++known && value[i] <= 0)
      diag_error(s->diag, dims[i]->span, "a tensor dimension must be positive, not %lld",
                 (long long)value[i]);
  }
  int64_t bytes;
  if (known == 2 && value[0] > 0 && value[1] > 0 &&
      (__builtin_mul_overflow(value[0], value[1], &bytes) || __builtin_mul_overflow(bytes, 4, &bytes)))
    diag_error(s->diag, t->span, "tensor '%s' is too large: [%lld, %lld] in 4-byte cells is more than 2^63 bytes",
               t->name, (long long)value[0], (long long)value[1]);
}

/* decl = ("sbuf" | "psum") IDENT ["[" expr "]"] ":" ("f32" | "bf16" | "fp16" | "fp8e4" | "fp8e5") "[" expr "," expr "]" ";" */
static bool check_tile(Sema *s, Tile *t) {
  int type = resolve_elem_type(s, t->elem, t->elem_span, FLOAT_TYPE_MASK, "tiles");
  t->type = type < 0 ? ELEM_F32 : (ElemType)type;
  t->slots = t->slotted ? positive_constant(s, t->slots_expr, "a slot count") : 1;
  t->rows = positive_constant(s, t->rows_expr, "a tile dimension");
  t->cols = positive_constant(s, t->cols_expr, "a tile dimension");
  if (!t->slots || !t->rows || !t->cols) return false;
  if (t->rows > MAX_TILE_ELEMS || t->cols > MAX_TILE_ELEMS || t->slots > MAX_TILE_ELEMS ||
      t->rows * t->cols > MAX_TILE_ELEMS / t->slots) {
    diag_error(s->diag, t->span, "tile '%s' is too large: more than %lld elements", t->name,
               (long long)MAX_TILE_ELEMS);
    return false;
  }
  return true;
}

/* Where declaration i of kind starts (UINT32_MAX: past the last). */
static uint32_t decl_begin(const Kernel *k, DeclKind kind, int i) {
  if (kind == DECL_TENSOR) return i < k->ntensors ? k->tensors[i].span.begin : UINT32_MAX;
  if (kind == DECL_TILE) return i < k->ntiles ? k->tiles[i].span.begin : UINT32_MAX;
  return i < k->nconsts ? k->consts[i].span.begin : UINT32_MAX;
}

static void check_decls(Sema *s) {
  Kernel *k = s->k;
  for (int i = 0; i < k->nparams; i++) declare(s, k->params[i].name, k->params[i].span, DECL_PARAM, i);
  /* Tensors, tiles and consts in source order, so a duplicate is reported where it repeats. */
  int next[DECL_CONST + 1] = {0};
  for (;;) {
    DeclKind kind = DECL_TENSOR;
    if (decl_begin(k, DECL_TILE, next[DECL_TILE]) < decl_begin(k, kind, next[kind])) kind = DECL_TILE;
    if (decl_begin(k, DECL_CONST, next[DECL_CONST]) < decl_begin(k, kind, next[kind])) kind = DECL_CONST;
    if (decl_begin(k, kind, next[kind]) == UINT32_MAX) break;
    int i = next[kind]++;
    const char *name = kind == DECL_TENSOR ? k->tensors[i].name : kind == DECL_TILE ? k->tiles[i].name : k->consts[i].name;
    declare(s, name, (Span){decl_begin(k, kind, i), decl_begin(k, kind, i) + (uint32_t)strlen(name)}, kind, i);
  }
  for (int i = 0; i < k->nconsts; i++) {
    s->consts_defined = i;
    check_const(s, &k->consts[i]);
  }
  s->consts_defined = k->nconsts;
  for (int i = 0; i < k->ntensors; i++) check_tensor(s, &k->tensors[i]);
  for (int i = 0; i < k->ntiles; i++) s->tile_ok[i] = check_tile(s, &k->tiles[i]);
}

/* ---- Operands. */

/* operand = IDENT ["[" expr ["," expr] "]"] | ["-"] (INT | FLOAT) */
/* An immediate: a constant expression over numbers and consts, in real
 * arithmetic, which f32 must be able to hold. */
static bool resolve_immediate(Sema *s, Operand *o) {
  bool constant;
  o->kind = OPND_IMM;
  if (!check_expr(s, o->imm_expr, IN_REAL, "an immediate", &constant) ||
      !real_value(s, o->imm_expr, "an immediate", &o->imm_value))
    return false;
  if (!(fabs(o->imm_value) <= F32_LARGEST_FINITE)) { /* it would round to Inf */
    diag_error(s->diag, o->span, "immediate %.*s is out of range for f32", (int)(o->span.end - o->span.begin),
               s->p->src.text + o->span.begin);
    return false;
  }
  o->imm = (float)o->imm_value;
  return true;
}

/* A slice's step lo:hi:k: a positive constant. */
static bool check_step(Sema *s, const Operand *o, const Slice *sl) {
  bool constant;
  int64_t k;
  if (!check_expr(s, sl->step, IN_CONSTANT, "a slice step", &constant)) return false;
  if (expr_eval(sl->step, NULL, NULL, &k, NULL)) bug("constant with a zero divisor passed sema");
  if (k <= 0) {
    diag_error(s->diag, sl->step->span, "the step of a slice of '%s' must be positive, not %lld", o->name,
               (long long)k);
    return false;
  }
  return true;
}

static int64_t constant_dim(const Expr *e);

/* A gather's row selector IDX[r0:r1, c] or IDX[r, c0:c1]: IDX an i32
 * tensor, the run's first element an element read (g->elem) and its
 * length a positive constant. */
static bool resolve_gather(Sema *s, Gather *g) {
  const Decl *d = find_decl(s, g->name);
  if (!d || d->kind != DECL_TENSOR || !s->k->tensors[d->index].ints) {
    diag_error(s->diag, g->name_span,
               d ? "the rows of a gather or scatter are the elements of an i32 tensor, and '%s' is not one"
                 : "undeclared index tensor '%s'",
               g->name);
    return false;
  }
  const Tensor *t = &s->k->tensors[d->index];
  g->tensor = d->index;
  g->axis = g->dim[0].hi || !g->dim[0].lo ? 0 : 1;
  Slice *run = &g->dim[g->axis];
  bool ok = true, constant;
  for (int i = 0; i < 2; i++) {
    if (g->dim[i].lo) ok &= check_expr(s, g->dim[i].lo, IN_LOOPS, "an index of a gather", &constant);
    if (g->dim[i].hi) ok &= check_expr(s, g->dim[i].hi, IN_LOOPS, "an index of a gather", &constant);
    if (g->dim[i].step) { /* one index a partition, in a run */
      diag_error(s->diag, g->dim[i].span, "the indices of a gather or scatter are a run: they take no step");
      ok = false;
    }
  }
  if (!ok) return false;
  int64_t size = constant_dim(g->axis ? t->cols : t->rows);
  if (!run->lo && size < 0) {
    diag_error(s->diag, run->span, "the %s of index tensor '%s' are not a constant: write the range lo:hi",
               g->axis ? "columns" : "rows", g->name);
    return false;
  }
  g->n = size;
  if (run->lo && (!expr_const_difference(run->hi, run->lo, &g->n) || g->n <= 0)) {
    diag_error(s->diag, run->span, "the indices %.*s of a gather must be a constant, positive number of elements",
               (int)(run->span.end - run->span.begin), s->p->src.text + run->span.begin);
    return false;
  }
  Expr *at[2];
  for (int i = 0; i < 2; i++) at[i] = g->dim[i].lo ? g->dim[i].lo : expr_int(s->p->arena, g->dim[i].span, 0);
  g->elem = expr_elem(s->p->arena, g->span, g->name, at[0], at[1]);
  g->elem->index = g->tensor;
  return true;
}

static bool resolve_operand(Sema *s, Operand *o) {
  if (o->kind == OPND_IMM) return resolve_immediate(s, o);
  bool ok = true, constant;
  for (int i = 0; i < o->nindex; i++) ok &= check_expr(s, o->index[i], IN_LOOPS, "an index", &constant);
  for (int i = 0; o->view && i < o->ndim && i < MAX_LISTED; i++) {
    if (o->dim[i].lo) ok &= check_expr(s, o->dim[i].lo, IN_LOOPS, "a slice bound", &constant);
    if (o->dim[i].hi) ok &= check_expr(s, o->dim[i].hi, IN_LOOPS, "a slice bound", &constant);
    if (o->dim[i].step) ok &= check_step(s, o, &o->dim[i]);
  }
  if (o->gather) ok &= resolve_gather(s, o->gather);
  const Decl *d = find_decl(s, o->name);
  if (d && d->kind == DECL_CONST && o->nindex == 0 && !find_loop(s, o->name)) return resolve_immediate(s, o);
  if (d && d->kind == DECL_CONST) {
    diag_error(s->diag, o->span, "'%s' is a constant, not a tile or tensor", o->name);
    return false;
  }
  if (!d || d->kind == DECL_PARAM) {
    if (!d && find_let(s, o->name))
      diag_error(s->diag, o->span, "'%s' is a let, an integer known when the kernel runs: not a tile or tensor, nor an immediate (a constant)", o->name);
    else if (d || find_loop(s, o->name))
      diag_error(s->diag, o->span, "'%s' is an integer, not a tile or tensor", o->name);
    else
      diag_error(s->diag, o->span, "undeclared tile or tensor '%s'", o->name);
    return false;
  }
  o->decl = d->index;
  if (o->gather && d->kind != DECL_TENSOR) {
    diag_error(s->diag, o->span, "'%s' is a tile: rows by index (a gather or scatter) are rows of an hbm tensor, moved by load or store",
               o->name);
    return false;
  }
  if (d->kind == DECL_TENSOR && o->view && o->nindex) {
    diag_error(s->diag, o->span, "'%s' is an hbm tensor: it has no slots", o->name);
    return false;
  }
  if (d->kind == DECL_TENSOR) {
    o->kind = OPND_HBM;
    o->row = o->index[0];
    o->col = o->index[1];
    return ok;
  }
  o->kind = OPND_TILE;
  o->slot = o->nindex == 1 ? o->index[0] : NULL;
  return ok;
}

/* A tile operand's slot: present exactly when the tile has slots, and in
 * range when it is a constant. */
static bool check_slot(Sema *s, const Operand *o) {
  const Tile *t = &s->k->tiles[o->decl];
  int64_t slot;
  if (o->nindex > 1) {
    diag_error(s->diag, o->span, "tile '%s' takes one index (a slot), not %d", o->name, o->nindex);
  } else if (t->slotted && o->nindex == 0) {
    diag_error(s->diag, o->span, "tile '%s' has slots: write %s[SLOT]", o->name, o->name);
  } else if (!t->slotted && o->nindex == 1) {
    diag_error(s->diag, o->span, "tile '%s' has no slots: write %s without an index", o->name,
               o->name);
  } else if (o->slot && s->tile_ok[o->decl] && is_constant(o->slot) &&
             expr_eval(o->slot, NULL, NULL, &slot, NULL) == 0 && (slot < 0 || slot >= t->slots)) {
    diag_error(s->diag, o->slot->span, "slot %lld is out of range: tile '%s' has slots 0 .. %lld",
               (long long)slot, o->name, (long long)(t->slots - 1));
  } else {
    return true;
  }
  return false;
}

/* One dimension i of a tile view or an hbm element slice, named dim in
 * messages: its first index (NULL: 0), its step and its extent, the count
 * of indices lo, lo + k, .. below hi; hi - lo must be a positive constant
 * no larger than the dimension (size; -1: a tensor's, known at run time),
 * and a constant range must lie inside (a computed one is checked at run
 * time). A ragged end min(lo + C, E) sets *clip to E. */
static bool view_dim(Sema *s, Operand *o, int i, int64_t size, const char *dim, Expr **clip) {
  const Slice *sl = &o->dim[i];
  bool hbm = o->kind == OPND_HBM;
  const char *what = hbm ? "tensor" : "tile";
  const char *kind = hbm ? "slice" : "view";
  int64_t lo = 0, extent = 1, step = 1;
  if (sl->step && expr_eval(sl->step, NULL, NULL, &step, NULL)) bug("constant with a zero divisor passed sema");
  if (!o->nd) o->nd = ARENA_NEW(s->p->arena, SliceDims);
  o->nd->nlo[i] = sl->lo;
  o->nd->nstep[i] = step;
  if (!sl->lo && size < 0) {
    diag_error(s->diag, sl->span, "the %s of tensor '%s' are not a constant: write the range lo:hi", dim, o->name);
    return false;
  }
  if (!sl->lo) {
    o->nd->next[i] = (size + step - 1) / step;
    return true;
  }
  const Expr *hi = sl->hi;
  if (hi && hi->kind == EX_MIN) { /* ragged: lo : min(lo + C, E) or lo : min(E, lo + C) */
    bool left = expr_const_difference(hi->lhs, sl->lo, &extent);
    if (left || expr_const_difference(hi->rhs, sl->lo, &extent)) {
      *clip = left ? hi->rhs : hi->lhs;
      hi = NULL;
    }
  }
  if (hi && !expr_const_difference(hi, sl->lo, &extent)) {
    diag_error(s->diag, sl->span, "%s %.*s of %s '%s' has no constant extent: its end must be its start plus a constant",
               kind, (int)(sl->span.end - sl->span.begin), s->p->src.text + sl->span.begin, what, o->name);
    return false;
  }
  if (extent <= 0) {
    diag_error(s->diag, sl->span, "%s %.*s of %s '%s' is empty: a %s has at least one of its %s", kind,
               (int)(sl->span.end - sl->span.begin), s->p->src.text + sl->span.begin, what, o->name, kind, dim);
    return false;
  }
  if (*clip && step != 1) {
    diag_error(s->diag, sl->span, "ragged %s %.*s of %s '%s' takes no step: a clipped extent is counted in %s", kind,
               (int)(sl->span.end - sl->span.begin), s->p->src.text + sl->span.begin, what, o->name, dim);
    return false;
  }
  if (size >= 0 && extent > size) {
    diag_error(s->diag, sl->span, "%s of %lld %s of %s '%s', which has %lld", kind, (long long)extent, dim, what,
               o->name, (long long)size);
    return false;
  }
  o->nd->next[i] = (extent + step - 1) / step;
  if (is_constant(sl->lo) && expr_eval(sl->lo, NULL, NULL, &lo, NULL) == 0 &&
      (lo < 0 || (size >= 0 && lo > size - (*clip ? 0 : extent)))) {
    diag_error(s->diag, sl->span, "%s %lld:%lld is outside %s '%s', whose %s are 0:%lld", kind, (long long)lo,
               (long long)(lo + extent), what, o->name, dim, (long long)size);
    return false;
  }
  return true;
}

/* A constant tensor dimension's value, or -1. */
static int64_t constant_dim(const Expr *e) {
  int64_t v;
  return is_constant(e) && expr_eval(e, NULL, NULL, &v, NULL) == 0 && v >= 0 ? v : -1;
}

/* An hbm operand's element slice X[r0:r1, c0:c1] (rows and columns of the
 * tensor, in elements; a single index is one row or column), or of an N-D
 * tensor (frontend/slices.c lowers it onto the flattened tensor). */
static bool check_slice(Sema *s, Operand *o) {
  const Tensor *t = &s->k->tensors[o->decl];
  if (o->gather) { /* rows by index, checked when it runs; columns of a 2-D tensor, without a step */
    Expr *clip = NULL;
    if (t->rank != 2) {
      diag_error(s->diag, o->span, "rows by index are rows of a 2-D tensor, and '%s' has %d dimensions", o->name,
                 t->rank);
      return false;
    }
    o->ext[0] = o->gather->n;
    if (!view_dim(s, o, 1, constant_dim(t->cols), "columns", &clip)) return false;
    if (o->nd->nstep[1] != 1) {
      diag_error(s->diag, o->dim[1].span, "the columns of rows by index take no step");
      return false;
    }
    o->lo[1] = o->nd->nlo[1];
    o->ext[1] = o->nd->next[1];
    o->clip[1] = clip;
    o->cstep = 1;
    return true;
  }
  if (o->ndim != t->rank) {
    diag_error(s->diag, o->span, "tensor '%s' has %d dimensions: a slice of it takes %d indices, not %d", o->name,
               t->rank, t->rank, o->ndim);
    return false;
  }
  bool ok = true;
  Expr *clip[MAX_RANK] = {0};
  for (int i = 0; i < t->rank; i++) {
    const char *dim = t->rank == 2 ? (i ? "columns" : "rows") : arena_printf(s->p->arena, "indices of dimension %d", i);
    ok &= view_dim(s, o, i, constant_dim(t->dims[i]), dim, &clip[i]);
  }
  if (!ok) return false;
  const char *why = slices_lower(s->p->arena, t, o, clip);
  if (why) diag_error(s->diag, o->span, "slice of tensor '%s': %s", o->name, why);
  return !why;
}

/* A tile operand's view: the whole slot when none was written. */
static bool check_view(Sema *s, Operand *o) {
  const Tile *t = &s->k->tiles[o->decl];
  o->ext[0] = t->rows;
  o->ext[1] = t->cols;
  if (!o->view) return true;
  if (o->ndim != 2) {
    diag_error(s->diag, o->span, "tile '%s' has two dimensions: a view of it takes two, not %d", o->name, o->ndim);
    return false;
  }
  bool ok = true;
  for (int i = 0; i < 2; i++) {
    ok &= view_dim(s, o, i, i ? t->cols : t->rows, i ? "columns" : "partitions", &o->clip[i]);
    o->lo[i] = o->nd->nlo[i];
    o->ext[i] = o->nd->next[i];
  }
  /* The engines address a tile's partitions by the first and a count, and
   * step only within a partition (AWS Neuron documentation, "NKI Access
   * Patterns": the free-dimension pattern, its strides and sizes, is the
   * same in every partition; besides it, an offset and a number of
   * partitions): a view takes a step in its columns only. */
  if (ok && o->nd->nstep[0] != 1) {
    diag_error(s->diag, o->dim[0].span,
               "view of tile '%s' steps over partitions: the engines address a contiguous range of partitions "
               "(a first one and a count), and step only within a partition",
               o->name);
    return false;
  }
  o->rstep = NULL;
  o->cstep = ok ? o->nd->nstep[1] : 1;
  return ok;
}

/* An hbm operand: two indices, and never written when `in` nor read when `out`. */
static bool check_hbm(Sema *s, Operand *o, bool written) {
  const Tensor *t = &s->k->tensors[o->decl];
  if (t->ints) {
    diag_error(s->diag, o->span,
               "'%s' is an i32 tensor: its elements are read in integer expressions (%s[ROW, COL]), "
               "not moved by instructions",
               o->name, o->name);
    return false;
  }
  if (o->view) {
    if (!check_slice(s, o)) return false;
  } else if (t->rank > 2) { /* tile units are a 2-D tensor's */
    diag_error(s->diag, o->span, "tensor '%s' has %d dimensions: move an element slice of it, one index or range per "
               "dimension", o->name, t->rank);
    return false;
  } else if (o->nindex != 2) {
    diag_error(s->diag, o->span, "hbm tensor '%s' needs two indices: %s[ROW, COL]", o->name, o->name);
    return false;
  }
  if ((written && t->io == IO_IN) || (!written && t->io == IO_OUT)) {
    diag_error(s->diag, o->span, "%s tensor '%s'", written ? "store to input" : "load from output",
               o->name);
    diag_note(s->diag, t->span, "'%s' is declared hbm %s here", o->name, written ? "in" : "out");
    return false;
  }
  return true;
}

/* What a signature letter asks for, in words. */
static const char *wanted(char letter) {
  return letter == 'T' ? "a tile" : letter == 'H' ? "an hbm tile X[ROW, COL]" : "a float immediate";
}

static const char *operand_is(const Operand *o) {
  return o->kind == OPND_TILE ? "a tile" : o->kind == OPND_HBM ? "an hbm tensor" : "an immediate";
}

static const char *vocab_what(char role) {
  return role == 'o' ? "an ALU op" : role == 'f' ? "an activation function" : "the word negate";
}

/* The names each vocabulary position admits: tensor_reduce reduces with
 * add, multiply, maximum or minimum, affine_select compares; a float
 * position takes no name, and a name position no number. */
static bool check_vocab_operand(Sema *s, const Stmt *in, int i) {
  const Operand *o = &in->operands[i];
  char role = op_info(in->op)->roles[i];
  bool named = role == 'o' || role == 'f' || role == 'n';
  if (named != (o->vocab != 0)) {
    if (named) diag_error(s->diag, o->span, "operand %d of '%s' must be %s, not a number", i + 1, in->op_name, vocab_what(role));
    else diag_error(s->diag, o->span, "operand %d of '%s' must be a float immediate, not %s '%s'", i + 1, in->op_name, vocab_what(o->vocab), o->name);
    return false;
  }
  if (!named) return true;
  int code = (int)o->imm_value;
  bool reduce = in->op == BFRT_TENSOR_REDUCE || in->op == BFRT_TENSOR_REDUCE_NEG;
  bool compare = code >= BFRT_ALU_EQUAL;
  if (reduce && !(code == BFRT_ALU_ADD || code == BFRT_ALU_MULTIPLY || code == BFRT_ALU_MAXIMUM || code == BFRT_ALU_MINIMUM)) {
    diag_error(s->diag, o->span, "'%s' reduces with add, multiply, maximum or minimum, not '%s'", in->op_name, o->name);
    return false;
  }
  if (in->op == BFRT_AFFINE_SELECT && !compare) {
    diag_error(s->diag, o->span,
               "'%s' compares its affine value with 0: operand %d must be equal, not_equal, greater, "
               "greater_equal, less or less_equal, not '%s'", in->op_name, i + 1, o->name);
    return false;
  }
  return true;
}

/* Operand i of the instruction against its letter in the op's signature. */
static bool check_operand_kind(Sema *s, Stmt *in, int i, char letter) {
  Operand *o = &in->operands[i];
  char got = o->kind == OPND_TILE ? 'T' : o->kind == OPND_HBM ? 'H' : 'F';
  if (got != letter) {
    diag_error(s->diag, o->span, "operand %d of '%s' must be %s, but this is %s", i + 1,
               in->op_name, wanted(letter), operand_is(o));
    return false;
  }
  if (o->kind == OPND_TILE) return check_slot(s, o) && check_view(s, o);
  if (o->kind == OPND_HBM) return check_hbm(s, o, bfrt_op_writes(in->op, i));
  return check_vocab_operand(s, in, i);
}

/* ---- Shapes. */

/* bn_stats reads at most this many elements a partition (NKI's
 * nl.tile_size.bn_stats_fmax, "Due to hardware limitation", nki.isa.bn_stats). */
enum { BN_STATS_FMAX = 512 };
typedef struct Shape {
  int64_t rows, cols;
} Shape;

/* A tile operand's shape: its view's extents (the whole slot's without one). */
static Shape shape_of(const Sema *s, const Operand *o) {
  (void)s;
  return (Shape){o->ext[0], o->ext[1]};
}

static bool same_shape(Shape a, Shape b) { return a.rows == b.rows && a.cols == b.cols; }

/* How a message names a tile operand: its name, or a view as written. */
static const char *shown(const Sema *s, const Operand *o) {
  if (!o->view) return o->name;
  return arena_printf(s->p->arena, "%.*s", (int)(o->span.end - o->span.begin), s->p->src.text + o->span.begin);
}

/* Reports that operand o is [have] where the rule wants [want]. */
static void shape_error(Sema *s, const Stmt *in, const Operand *o, Shape have, Shape want,
                        const char *why) {
  diag_error(s->diag, o->span, "shape mismatch in '%s': '%s' is [%lld, %lld] but %s [%lld, %lld]",
             in->op_name, shown(s, o), (long long)have.rows, (long long)have.cols, why,
             (long long)want.rows, (long long)want.cols);
}

/* Every tile operand, and an hbm element slice, has the shape of the
 * first of them (an hbm tile X[r, c] takes it). */
static void check_same_shapes(Sema *s, const Stmt *in) {
  const Operand *first = NULL;
  for (int i = 0; i < in->noperands; i++) {
    const Operand *o = &in->operands[i];
    if (o->kind != OPND_TILE && !(o->kind == OPND_HBM && o->view)) continue;
    if (!first) first = o;
    else if (!same_shape(shape_of(s, o), shape_of(s, first)))
      shape_error(s, in, o, shape_of(s, o), shape_of(s, first),
                  arena_printf(s->p->arena, "'%s' is", shown(s, first)));
  }
}

/* Every tile operand from operand `from` on is [rows, 1]: one value per
 * partition (tensor_scalar's vectors, activation's bias and accumulator,
 * a scan's initial). */
static void check_per_partition(Sema *s, const Stmt *in, int from, int64_t rows) {
  for (int i = from; i < in->noperands; i++) {
    const Operand *o = &in->operands[i];
    if (o->kind == OPND_TILE && !same_shape(shape_of(s, o), (Shape){rows, 1}))
      shape_error(s, in, o, shape_of(s, o), (Shape){rows, 1}, "a per-partition operand must be");
  }
}

/* The shape rules of the nki.isa instructions (ops.def's second part). */
static void check_isa_shapes(Sema *s, const Stmt *in, ShapeRule rule) {
  const Operand *o = in->operands;
  Shape d = shape_of(s, &o[0]);
  if (rule == SHAPE_NC_MATMUL) {
    Shape st = shape_of(s, &o[1]), mv = shape_of(s, &o[2]);
    if (st.rows != mv.rows)
      diag_error(s->diag, o[2].span,
                 "contraction dimensions differ in '%s': stationary '%s' is [%lld, %lld] and moving '%s' is "
                 "[%lld, %lld] (both carry K on the partitions)",
                 in->op_name, o[1].name, (long long)st.rows, (long long)st.cols, o[2].name, (long long)mv.rows,
                 (long long)mv.cols);
    else if (!same_shape(d, (Shape){st.cols, mv.cols}))
      shape_error(s, in, &o[0], d, (Shape){st.cols, mv.cols}, "stationary^T . moving is");
  } else if (rule == SHAPE_ROWREDUCE_OF) {
    Shape a = shape_of(s, &o[2]);
    if (!same_shape(d, (Shape){a.rows, 1})) shape_error(s, in, &o[0], d, (Shape){a.rows, 1}, "the reduction is");
  } else if (rule == SHAPE_SCALAR || rule == SHAPE_SCAN || rule == SHAPE_ACTIVATION || rule == SHAPE_SELECT) {
    int data = rule == SHAPE_ACTIVATION ? 2 : rule == SHAPE_SELECT ? 4 : 1;
    Shape a = shape_of(s, &o[data]);
    if (!same_shape(d, a)) shape_error(s, in, &o[data], a, d, "the destination is");
    else if (rule == SHAPE_SCAN && !same_shape(d, shape_of(s, &o[2])))
      shape_error(s, in, &o[2], shape_of(s, &o[2]), d, "the destination is");
    else if (rule != SHAPE_SELECT) check_per_partition(s, in, rule == SHAPE_SCALAR ? 2 : 3, d.rows);
  } else if (rule == SHAPE_BN_STATS || rule == SHAPE_BN_AGGR) {
    Shape a = shape_of(s, &o[1]);
    int64_t cols = rule == SHAPE_BN_STATS ? 6 : 2;
    if (!same_shape(d, (Shape){a.rows, cols}))
      shape_error(s, in, &o[0], d, (Shape){a.rows, cols},
                  rule == SHAPE_BN_STATS ? "bn_stats writes 6 values a partition:" : "bn_aggr writes a mean and a variance:");
    else if (rule == SHAPE_BN_AGGR && a.cols % 3)
      diag_error(s->diag, o[1].span, "'%s' reads (count, mean, variance * count) triples: '%s' has %lld columns, not a multiple of 3",
                 in->op_name, o[1].name, (long long)a.cols);
    else if (rule == SHAPE_BN_STATS && a.cols > BN_STATS_FMAX)
      diag_error(s->diag, o[1].span, "'%s' reads at most %d elements a partition (nl.tile_size.bn_stats_fmax): '%s' has %lld; "
                 "aggregate several with bn_aggr", in->op_name, BN_STATS_FMAX, o[1].name, (long long)a.cols);
  }
}

/* A gather or scatter moves one row a partition: its index run is as long
 * as the tile's partitions; false (reported) otherwise. */
static bool gather_fits(Sema *s, const Stmt *in) {
  const Operand *g = NULL, *t = NULL;
  for (int i = 0; i < in->noperands; i++) {
    if (in->operands[i].gather) g = &in->operands[i];
    if (in->operands[i].kind == OPND_TILE && !t) t = &in->operands[i];
  }
  if (!g || !t || g->gather->n == t->ext[0]) return true;
  diag_error(s->diag, g->gather->span,
             "a gather or scatter moves one row a partition: %.*s gives %lld indices, and '%s' has %lld partitions",
             (int)(g->gather->span.end - g->gather->span.begin), s->p->src.text + g->gather->span.begin,
             (long long)g->gather->n, shown(s, t), (long long)t->ext[0]);
  return false;
}

static void check_shapes(Sema *s, const Stmt *in, ShapeRule rule) {
  const Operand *o = in->operands;
  if (!gather_fits(s, in)) return;
  if (rule == SHAPE_SAME) {
    check_same_shapes(s, in);
    return;
  }
  if (rule == SHAPE_NONE) return;
  Shape d = shape_of(s, &o[0]), a = shape_of(s, &o[1]);
  if (rule == SHAPE_MATMUL) {
    Shape b = shape_of(s, &o[2]);
    if (a.cols != b.rows)
      diag_error(s->diag, o[2].span,
                 "inner dimensions differ in '%s': '%s' is [%lld, %lld] and '%s' is [%lld, %lld]",
                 in->op_name, shown(s, &o[1]), (long long)a.rows, (long long)a.cols, shown(s, &o[2]),
                 (long long)b.rows, (long long)b.cols);
    else if (!same_shape(d, (Shape){a.rows, b.cols}))
      shape_error(s, in, &o[0], d, (Shape){a.rows, b.cols}, "the product is");
  } else if (rule == SHAPE_TRANSPOSE) {
    if (!same_shape(d, (Shape){a.cols, a.rows}))
      shape_error(s, in, &o[0], d, (Shape){a.cols, a.rows}, "the transpose is");
  } else if (rule == SHAPE_ROWREDUCE) {
    if (!same_shape(d, (Shape){a.rows, 1}))
      shape_error(s, in, &o[0], d, (Shape){a.rows, 1}, "the row reduction is");
  } else if (rule == SHAPE_COLBCAST) {
    Shape c = shape_of(s, &o[2]);
    if (!same_shape(d, a))
      shape_error(s, in, &o[1], a, d, "the destination is");
    else if (!same_shape(c, (Shape){1, d.cols}))
      shape_error(s, in, &o[2], c, (Shape){1, d.cols}, "the column operand must be");
  } else if (rule == SHAPE_ROWBCAST) {
    Shape r = shape_of(s, &o[2]);
    if (!same_shape(d, a))
      shape_error(s, in, &o[1], a, d, "the destination is");
    else if (!same_shape(r, (Shape){d.rows, 1}))
      shape_error(s, in, &o[2], r, (Shape){d.rows, 1}, "the row operand must be");
  } else {
    check_isa_shapes(s, in, rule);
  }
}

/* An hbm tile X[r, c] is in units of its partner tile's shape: a view of
 * part of a tile moves with an element slice instead, whose rows and
 * columns say where it goes (a ragged view's shape is known only at run
 * time, and a view's units would not be its tile's). */
static void check_view_partner(Sema *s, const Stmt *in) {
  const Operand *view = NULL, *tile_units = NULL;
  for (int i = 0; i < in->noperands; i++) {
    const Operand *o = &in->operands[i];
    const Tile *t = o->kind == OPND_TILE ? &s->k->tiles[o->decl] : NULL;
    if (t && (o->lo[0] || o->lo[1] || o->ext[0] != t->rows || o->ext[1] != t->cols)) view = o;
    if (o->kind == OPND_HBM && !o->view) tile_units = o;
  }
  if (view && tile_units)
    diag_error(s->diag, tile_units->span,
               "'%s' is a view of part of its tile: move it with an element slice %s[r0:r1, c0:c1], not a tile of %s",
               shown(s, view), tile_units->name, tile_units->name);
}

/* ---- Statements. */

/* ---- Suggestions for misspelled ops and engines. */

/* Edit distance between word and a short candidate, capped at cap + 1. */
static size_t edit_distance(const char *word, const char *candidate, size_t cap) {
  enum { LONGEST = 32 };
  size_t n = strlen(candidate), row[LONGEST + 1];
  if (n > LONGEST) return cap + 1;
  for (size_t j = 0; j <= n; j++) row[j] = j;
  for (size_t i = 1; word[i - 1]; i++) {
    size_t diagonal = row[0], best = row[0] = i;
    for (size_t j = 1; j <= n; j++) {
      size_t above = row[j];
      size_t cost = diagonal + (word[i - 1] != candidate[j - 1]);
      if (above + 1 < cost) cost = above + 1;
      if (row[j - 1] + 1 < cost) cost = row[j - 1] + 1;
      row[j] = cost;
      diagonal = above;
      if (cost < best) best = cost;
    }
    if (best > cap) return cap + 1;
  }
  return row[n];
}

/* "; did you mean 'x'?" for the closest of n names within two edits (and
 * fewer than either word's length), or "". */
static const char *suggestion(Sema *s, const char *word, const char *const *names, int n) {
  const char *best = NULL;
  size_t best_distance = 3;
  for (int i = 0; i < n; i++) {
    size_t d = edit_distance(word, names[i], 2);
    if (d < best_distance && d < strlen(names[i]) && d < strlen(word)) {
      best = names[i];
      best_distance = d;
    }
  }
  return best ? arena_printf(s->p->arena, "; did you mean '%s'?", best) : "";
}

static const char *op_suggestion(Sema *s, const char *word) {
  const char *names[BFRT_NOPS];
  for (int op = 0; op < BFRT_NOPS; op++) names[op] = op_info(op)->name;
  return suggestion(s, word, names, BFRT_NOPS);
}

static const char *type_suggestion(Sema *s, const char *word) {
  const char *names[ELEM_NTYPES];
  for (int i = 0; i < ELEM_NTYPES; i++) names[i] = elem_type_name((ElemType)i);
  return suggestion(s, word, names, ELEM_NTYPES);
}

static const char *engine_suggestion(Sema *s, const char *word) {
  const Target *t = s->p->target;
  const char *names[BFRT_MAX_ENGINES];
  for (int e = 0; e < t->nengines; e++) names[e] = t->engines[e].name;
  return suggestion(s, word, names, t->nengines);
}

/* The names of the engines that can run op (all engines when op < 0). */
static void engine_names(const Target *t, int op, char *buf, size_t size) { target_engine_names(t, op, buf, size); }

static int lookup_engine(Sema *s, const char *name, Span span) {
  int e = target_engine(s->p->target, name);
  if (e < 0) {
    char engines[256];
    engine_names(s->p->target, -1, engines, sizeof engines);
    diag_error(s->diag, span, "unknown engine '%s' (target %s has %s)%s", name,
               s->p->target->name, engines, engine_suggestion(s, name));
  }
  return e;
}

/* The engine an instruction runs on: its own prefix or its block's; -1 if
 * none could be decided (reported, unless an unknown engine already was). */
static int place_instr(Sema *s, Stmt *in) {
  if (!in->engine_name) {
    if (s->block) return s->block->engine;
    diag_error(s->diag, in->span,
               "instruction '%s' is not placed on an engine: write ENGINE: %s ... or put it in "
               "an ENGINE { ... } block",
               in->op_name, in->op_name);
    return -1;
  }
  int e = lookup_engine(s, in->engine_name, in->engine_span);
  if (e >= 0 && s->block && s->block->engine >= 0 && e != s->block->engine) {
    diag_error(s->diag, in->engine_span, "instruction placed on '%s' inside a block of engine '%s'",
               in->engine_name, s->block->engine_name);
    diag_note(s->diag, s->block->engine_span, "the '%s' block starts here", s->block->engine_name);
    return -1;
  }
  return e;
}

/* "; it can with OPERAND as operand N" when another entry of op's name,
 * differing in one operand, runs on engine; or "". */
static const char *other_form(Sema *s, int op, int engine) {
  const OpInfo *info = op_info(op);
  for (int other = 0; other < BFRT_NOPS; other++) {
    const OpInfo *o = op_info(other);
    if (other == op || strcmp(o->name, info->name) || !target_can_run(s->p->target, engine, other)) continue;
    for (int i = 0; o->operands[i] && info->operands[i]; i++)
      if (o->operands[i] != info->operands[i])
        return arena_printf(s->p->arena, "; it can with %s as operand %d", wanted(o->operands[i]), i + 1);
  }
  return "";
}

/* The op, and whether engine can run it; -1 (reported) otherwise. Of two
 * entries with the op's name, the one the operands' kinds fit. */
static int lookup_op(Sema *s, Stmt *in, int engine) {
  char kinds[8] = {0};
  for (int i = 0; i < in->noperands && i < 7; i++) {
    OperandKind k = in->operands[i].kind;
    kinds[i] = k == OPND_TILE ? 'T' : k == OPND_HBM ? 'H' : k == OPND_IMM ? 'F' : '?';
  }
  int op = op_lookup_for(in->op_name, kinds);
  if (op < 0) {
    diag_error(s->diag, in->op_span, "unknown op '%s'%s", in->op_name, op_suggestion(s, in->op_name));
    return -1;
  }
  if (strchr(kinds, '?')) return op; /* an operand failed (reported): nothing more to say */
  if (engine >= 0 && !target_can_run(s->p->target, engine, op)) {
    char engines[256];
    engine_names(s->p->target, op, engines, sizeof engines);
    diag_error(s->diag, in->op_span, "engine '%s' cannot run '%s' (%s%s)%s",
               s->p->target->engines[engine].name, in->op_name,
               engines[0] ? "it runs on " : "no engine of this target runs it", engines,
               other_form(s, op, engine));
    return -1;
  }
  return op;
}

static void number_instr(Sema *s, Stmt *in) {
  Kernel *k = s->k;
  k->instrs = arena_grow(s->p->arena, k->instrs, sizeof(Stmt *), k->ninstrs, &s->instr_cap);
  in->instr_id = k->ninstrs;
  k->instrs[k->ninstrs++] = in;
  in->parent_loop = s->nloops_open ? s->loops[s->nloops_open - 1] : NULL;
}

/* ---- Names as operands: ALU ops, activation functions, negate. */

/* The role letter some entry named name has at operand i, when it is a
 * vocabulary role (o, f, n), else 0. */
static char vocab_role(const char *name, int i) {
  for (int op = 0; op < BFRT_NOPS; op++) {
    const OpInfo *info = op_info(op);
    if (strcmp(info->name, name) || (int)strlen(info->roles) <= i) continue;
    char r = info->roles[i];
    if (r == 'o' || r == 'f' || r == 'n') return r;
  }
  return 0;
}

static const char *const negate_names[] = {"negate"};

static const char *const *vocab_names(char role, int *n) {
  *n = role == 'o' ? BFRT_NALU : role == 'f' ? BFRT_NFN : 1;
  return role == 'o' ? bfrt_alu_names : role == 'f' ? bfrt_fn_names : negate_names;
}

/* A bare name at a vocabulary position of the instruction's op becomes an
 * immediate holding its code; a name in no vocabulary and no declaration
 * is reported with the vocabulary. Returns whether it took the operand. */
static bool resolve_vocab(Sema *s, const Stmt *in, int i, bool *ok) {
  Operand *o = &in->operands[i];
  char role = vocab_role(in->op_name, i);
  if (!role || o->kind != OPND_NAME || o->nindex != 0) return false;
  int n;
  const char *const *names = vocab_names(role, &n);
  for (int code = 0; code < n; code++)
    if (!strcmp(names[code], o->name)) {
      *o = (Operand){.kind = OPND_IMM, .span = o->span, .name = o->name, .imm_expr = o->imm_expr,
                     .imm_value = code, .imm = (float)code, .vocab = role};
      return true;
    }
  if (find_decl(s, o->name) || find_loop(s, o->name)) return false; /* a tile or a const: checked below */
  char list[512];
  size_t len = 0;
  for (int code = 0; code < n && len < sizeof list; code++)
    len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", code ? ", " : "", names[code]);
  diag_error(s->diag, o->span, "operand %d of '%s' must be %s (%s), not '%s'%s", i + 1, in->op_name,
             vocab_what(role), list, o->name, suggestion(s, o->name, names, n));
  *ok = false;
  return true;
}

/* iota's and affine_select's pattern step, offset and channel multiplier
 * are integers (NKI's iota makes int32 values) of at most 2^24, so that
 * every affine value, at most 2^24 (1 + rows + cols) in magnitude, is
 * exact in double; and VectorE transposes at most 32 x 32 (nki.isa.nc_transpose). */
enum { AFFINE_MAX = 1 << 24, DVE_TRANSPOSE_MAX = 32 };

static void check_isa_operands(Sema *s, const Stmt *in) {
  if (in->op == BFRT_IOTA || in->op == BFRT_AFFINE_SELECT)
    for (int i = 1; i <= 3; i++) {
      const Operand *o = &in->operands[i];
      if (o->imm_value != floor(o->imm_value) || fabs(o->imm_value) > AFFINE_MAX)
        diag_error(s->diag, o->span, "operand %d of '%s' (%s) must be an integer of magnitude at most 2^24", i + 1,
                   in->op_name, i == 1 ? "the step along the free axis" : i == 2 ? "the offset" : "the channel multiplier");
    }
  if (in->op == BFRT_PERMUTE) {
    const Operand *o = &in->operands[2];
    int64_t cols = in->operands[0].ext[1]; /* the tile's, or its view's */
    if (o->imm_value != floor(o->imm_value) || o->imm_value < 1 || o->imm_value > (double)cols ||
        cols % (int64_t)o->imm_value)
      diag_error(s->diag, o->span,
                 "operand 3 of 'permute' (the groups A of the free axis, read as [A, N / A]) must be an integer "
                 "dividing the %lld columns", (long long)cols);
  }
  if (in->op == BFRT_NC_TRANSPOSE && in->engine >= 0 && s->p->target->engines[in->engine].kind == BFRT_KIND_DVE) {
    const Operand *o = &in->operands[1];
    if (o->ext[0] > DVE_TRANSPOSE_MAX || o->ext[1] > DVE_TRANSPOSE_MAX)
      diag_error(s->diag, o->span,
                 "'nc_transpose' on a vector engine transposes at most 32 x 32: '%s' is [%lld, %lld]; "
                 "transpose it on the pe, or in 32 x 32 blocks (views)", o->name, (long long)o->ext[0], (long long)o->ext[1]);
  }
}

/* Of the entries named like op, the one with n operands when op has not
 * (an operand that did not resolve leaves the kinds unknown): its errors
 * are about the operands, not their count. */
static int form_with_count(int op, int n) {
  if ((int)strlen(op_info(op)->operands) == n) return op;
  for (int other = 0; other < BFRT_NOPS; other++)
    if (!strcmp(op_info(other)->name, op_info(op)->name) && (int)strlen(op_info(other)->operands) == n) return other;
  return op;
}

/* "3", or "3 or 4": the operand counts of op's name. */
static const char *operand_counts(Sema *s, int op) {
  char buf[64] = "";
  size_t len = 0;
  unsigned seen = 0;
  for (int other = 0; other < BFRT_NOPS; other++) {
    int n = (int)strlen(op_info(other)->operands);
    if (strcmp(op_info(other)->name, op_info(op)->name) || (seen >> n & 1u)) continue;
    seen |= 1u << n;
  }
  int last = 0;
  for (int n = 0; n <= BFRT_MAX_OPERANDS; n++)
    if (seen >> n & 1u) last = n;
  for (int n = 0; n <= BFRT_MAX_OPERANDS; n++)
    if (seen >> n & 1u)
      len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%d", !len ? "" : n == last ? " or " : ", ", n);
  return arena_printf(s->p->arena, "%s", buf);
}

/* instr = [ENGINE ":"] op operand {"," operand} ";" */
static void check_instr(Sema *s, Stmt *in) {
  number_instr(s, in);
  in->engine = place_instr(s, in);
  bool resolved = true;
  for (int i = 0; i < in->noperands; i++)
    if (!resolve_vocab(s, in, i, &resolved)) resolved &= resolve_operand(s, &in->operands[i]);
  in->op = lookup_op(s, in, in->engine);
  if (in->op < 0) return;
  in->op = form_with_count(in->op, in->noperands);
  const OpInfo *info = op_info(in->op);
  int want = (int)strlen(info->operands);
  if (in->noperands != want) {
    diag_error(s->diag, in->op_span, "'%s' takes %s operands, not %d", in->op_name, operand_counts(s, in->op),
               in->noperands);
    return;
  }
  if (!resolved) return;
  bool kinds_ok = true;
  for (int i = 0; i < want; i++) kinds_ok &= check_operand_kind(s, in, i, info->operands[i]);
  for (int i = 0; i < want; i++)
    if (in->operands[i].kind == OPND_TILE && !s->tile_ok[in->operands[i].decl]) kinds_ok = false;
  if (kinds_ok) check_shapes(s, in, info->shape);
  if (kinds_ok) check_view_partner(s, in);
  if (kinds_ok) check_isa_operands(s, in);
}

static void check_stmts(Sema *s, Stmt *list);

/* Enters one more level of nesting; false (reported) past MAX_NESTING. */
static bool enter(Sema *s, const Stmt *st) {
  if (s->depth == MAX_NESTING) {
    diag_error(s->diag, st->span, "nested too deeply: more than %d levels of loops and blocks",
               MAX_NESTING);
    return false;
  }
  s->depth++;
  return true;
}

static void check_loop_var(Sema *s, const Stmt *loop) {
  const Decl *d = find_decl(s, loop->var);
  const Stmt *outer = find_loop(s, loop->var), *let = find_let(s, loop->var);
  if (let && !d && !outer) {
    diag_error(s->diag, loop->var_span, "loop variable '%s' shadows a let", loop->var);
    diag_note(s->diag, let->var_span, "'%s' is named here", loop->var);
    return;
  }
  if (!d && !outer) return;
  if (d)
    diag_error(s->diag, loop->var_span, "loop variable '%s' shadows %s '%s'", loop->var,
               decl_kind_name[d->kind], loop->var);
  else
    diag_error(s->diag, loop->var_span, "loop variable '%s' shadows an enclosing loop's variable",
               loop->var);
  diag_note(s->diag, d ? d->span : outer->var_span, "'%s' is declared here", loop->var);
}

/* for = "for" IDENT "in" expr ".." expr "{" {stmt} "}" */
static void check_for(Sema *s, Stmt *loop) {
  Kernel *k = s->k;
  k->loops = arena_grow(s->p->arena, k->loops, sizeof(Stmt *), k->nloops, &s->loop_cap);
  loop->loop_id = k->nloops;
  k->loops[k->nloops++] = loop;
  loop->depth = s->nloops_open;
  bool constant;
  check_expr(s, loop->lo, IN_LOOPS, "a loop bound", &constant);
  check_expr(s, loop->hi, IN_LOOPS, "a loop bound", &constant);
  check_loop_var(s, loop);
  if (!enter(s, loop)) return;
  s->loops[s->nloops_open++] = loop;
  check_stmts(s, loop->body);
  s->nloops_open--;
  s->depth--;
}

/* block = ENGINE "{" {stmt} "}" */
static void check_block(Sema *s, Stmt *block) {
  block->engine = lookup_engine(s, block->engine_name, block->engine_span);
  if (s->block) {
    diag_error(s->diag, block->engine_span, "engine block inside the block of engine '%s'",
               s->block->engine_name);
    diag_note(s->diag, s->block->engine_span, "the '%s' block starts here", s->block->engine_name);
  }
  if (!enter(s, block)) return;
  Stmt *outer = s->block;
  s->block = block;
  check_stmts(s, block->body);
  s->block = outer;
  s->depth--;
}

/* The node at which c first grows taller than MAX_EXPR_DEPTH. */
static const Cond *cond_too_deep_at(const Cond *c) {
  while (c->height > MAX_EXPR_DEPTH + 1)
    c = c->right && c->right->height > c->left->height ? c->right : c->left;
  return c;
}

/* cond = cond "||" cond | cond "&&" cond | "!" cond | "(" cond ")" | expr compare expr */
static void walk_cond(Sema *s, Cond *c) {
  bool constant;
  switch (c->kind) {
  case COND_CMP:
    check_expr(s, c->lhs, IN_LOOPS, "a condition", &constant);
    check_expr(s, c->rhs, IN_LOOPS, "a condition", &constant);
    return;
  case COND_NOT: walk_cond(s, c->left); return;
  case COND_AND:
  case COND_OR:
    walk_cond(s, c->left);
    walk_cond(s, c->right);
    return;
  }
}

static void check_cond(Sema *s, Cond *c) {
  if (c->height > MAX_EXPR_DEPTH) {
    diag_error(s->diag, cond_too_deep_at(c)->span, "condition nested too deeply: more than %d levels",
               MAX_EXPR_DEPTH);
    return;
  }
  walk_cond(s, c);
}

/* if = "if" "(" cond ")" "{" {stmt} "}" ["else" ("{" {stmt} "}" | if)]
 * A condition reads only parameters and loop variables, so every engine
 * evaluates it to the same value (it is engine-uniform). An `else if`
 * counts as one more level of nesting. */
static void check_if(Sema *s, Stmt *st) {
  Kernel *k = s->k;
  st->if_id = k->nifs++;
  check_cond(s, st->cond);
  if (!enter(s, st)) return;
  check_stmts(s, st->body);
  check_stmts(s, st->orelse);
  s->depth--;
}

/* let = "let" IDENT "=" expr ";": names expr for the rest of its body. The
 * name is new (no declaration, loop variable or let in scope has it). */
static void check_let(Sema *s, Stmt *let) {
  if (strcmp(let->op_name, "let")) {
    diag_error(s->diag, let->op_span, "syntax error: unexpected '=' after '%s %s': an integer name is written 'let %s = ...;'",
               let->op_name, let->var, let->var);
    return;
  }
  bool constant;
  bool ok = check_expr(s, let->lo, IN_LOOPS, "a let", &constant);
  const Decl *d = find_decl(s, let->var);
  const Stmt *loop = find_loop(s, let->var), *other = find_let(s, let->var);
  if (d || loop || other) {
    diag_error(s->diag, let->var_span, "let '%s' %s %s '%s'", let->var, other ? "redefines" : "shadows",
               other ? "the let" : d ? decl_kind_name[d->kind] : "the loop variable", let->var);
    diag_note(s->diag, other ? other->var_span : d ? d->span : loop->var_span, "'%s' is declared here", let->var);
    ok = false;
  }
  if (s->nlets_open == MAX_OPEN_LETS) {
    diag_error(s->diag, let->var_span, "more than %d lets in scope at once", MAX_OPEN_LETS);
    return;
  }
  if (!ok) return;
  s->lets = arena_grow(s->p->arena, s->lets, sizeof(Stmt *), s->nlets, &s->lets_cap);
  s->lets[s->nlets++] = let;
  s->open_lets[s->nlets_open++] = let;
}

static void check_stmts(Sema *s, Stmt *list) {
  int lets_open = s->nlets_open; /* the lets of this body end with it */
  for (Stmt *st = list; st; st = st->next) {
    switch (st->kind) {
    case ST_FOR: check_for(s, st); break;
    case ST_BLOCK: check_block(s, st); break;
    case ST_INSTR: check_instr(s, st); break;
    case ST_IF: check_if(s, st); break;
    case ST_LET: check_let(s, st); break;
    }
  }
  s->nlets_open = lets_open;
}

/* Every out tensor is the destination of some store: one that none writes
 * would hand the host whatever its buffer held. (An inout tensor's unstored
 * elements keep their input values, which is well defined.) Which elements
 * the stores cover depends on the parameters, so `bfsync run` checks the
 * rest (backend/reference_f64.c). */
static void check_tensors_stored(Sema *s) {
  const Kernel *k = s->k;
  bool *stored = ARENA_ARRAY(s->p->arena, bool, k->ntensors + 1);
  for (int i = 0; i < k->ninstrs; i++) {
    const Stmt *in = k->instrs[i];
    if (in->noperands > 0 && in->operands[0].kind == OPND_HBM) stored[in->operands[0].decl] = true;
  }
  for (int t = 0; t < k->ntensors; t++) {
    if (k->tensors[t].io == IO_OUT && !stored[t])
      diag_error(s->diag, k->tensors[t].span, "out tensor '%s' is never stored to", k->tensors[t].name);
  }
}

/* ---- Hardware limits (the target's [limits]; docs/targets.md). An
 * element takes 4 bytes (f32), 2 (bf16, fp16) or 1 (fp8e4, fp8e5); a tile's rows are its
 * partitions, so a slot takes cols elements of every partition it spans. */
static int64_t slot_bytes(const Tile *t) { return t->cols * bfrt_dtype_bytes((int)t->type); }

static void check_tile_limits(Sema *s) {
  const Kernel *k = s->k;
  const Target *target = s->p->target;
  const TargetLimits *l = &target->limits;
  int64_t bank = l->psum_banks ? l->psum_bytes_per_partition / l->psum_banks : 0;
  int64_t sbuf = 0, psum = 0, banks = 0;
  bool sbuf_reported = false, psum_reported = false;
  for (int i = 0; i < k->ntiles; i++) {
    const Tile *t = &k->tiles[i];
    if (!s->tile_ok[i]) continue;
    if (l->partitions && t->rows > l->partitions)
      diag_error(s->diag, t->span, "tile '%s' spans %lld partitions (rows); target %s has %lld (partitions)",
                 t->name, (long long)t->rows, target->name, (long long)l->partitions);
    if (t->mem == MEM_SBUF) {
      sbuf += t->slots * slot_bytes(t);
      if (l->sbuf_bytes_per_partition && sbuf > l->sbuf_bytes_per_partition && !sbuf_reported) {
        diag_error(s->diag, t->span,
                   "SBUF is full: the sbuf tiles up to '%s' take %lld bytes of each partition; target %s has "
                   "%lld (sbuf_bytes_per_partition)",
                   t->name, (long long)sbuf, target->name, (long long)l->sbuf_bytes_per_partition);
        sbuf_reported = true;
      }
      continue;
    }
    if (bank && slot_bytes(t) > bank) {
      diag_error(s->diag, t->span,
                 "psum tile '%s' takes %lld bytes of each partition per slot; a PSUM bank of target %s holds "
                 "%lld (psum_bytes_per_partition / psum_banks)",
                 t->name, (long long)slot_bytes(t), target->name, (long long)bank);
      continue;
    }
    psum += t->slots * slot_bytes(t);
    banks += t->slots;
    if (psum_reported) continue;
    if (l->psum_banks && banks > l->psum_banks) {
      diag_error(s->diag, t->span,
                 "PSUM is full: the psum tiles up to '%s' take %lld banks, one per slot; target %s has %lld "
                 "(psum_banks)",
                 t->name, (long long)banks, target->name, (long long)l->psum_banks);
      psum_reported = true;
    } else if (l->psum_bytes_per_partition && psum > l->psum_bytes_per_partition) {
      diag_error(s->diag, t->span,
                 "PSUM is full: the psum tiles up to '%s' take %lld bytes of each partition; target %s has "
                 "%lld (psum_bytes_per_partition)",
                 t->name, (long long)psum, target->name, (long long)l->psum_bytes_per_partition);
      psum_reported = true;
    }
  }
}

/* Which engines may read or write psum (DMA included: a load or store
 * whose tile is in psum is a DMA access to it). */
static void check_psum_access(Sema *s) {
  const Kernel *k = s->k;
  const Target *target = s->p->target;
  unsigned allowed = target->limits.psum_kinds;
  if (!allowed) return;
  for (int i = 0; i < k->ninstrs; i++) {
    const Stmt *in = k->instrs[i];
    if (in->engine < 0 || in->op < 0) continue;
    const Engine *e = &target->engines[in->engine];
    if (allowed & (1u << e->kind)) continue;
    for (int j = 0; j < in->noperands; j++) {
      const Operand *o = &in->operands[j];
      if (o->kind != OPND_TILE || k->tiles[o->decl].mem != MEM_PSUM) continue;
      char kinds[64] = "";
      size_t n = 0;
      for (int kind = 0; kind < BFRT_NKINDS; kind++)
        if (allowed & (1u << kind)) n += (size_t)snprintf(kinds + n, sizeof kinds - n, "%s%s", n ? "," : "", rt_kind_names[kind]);
      diag_error(s->diag, o->span,
                 "engine '%s' cannot access psum tile '%s': on target %s only engines of kinds %s do "
                 "(psum_engines)",
                 in->engine_name ? in->engine_name : e->name, o->name, target->name, kinds);
      break;
    }
  }
}

/* nki.isa.nc_matmul reads its stationary and moving operands from SBUF
 * and accumulates in f32, in PSUM. On a target that says so, matmul and
 * matmul_acc write an f32 psum tile (matmul_psum_f32; an sbuf or narrower
 * result is a copy from there) and read sbuf tiles (matmul_sbuf_inputs; a
 * psum result is copied to sbuf before it feeds another matmul). */
static void check_matmul_operand(Sema *s, const Stmt *in, int j) {
  const Target *target = s->p->target;
  const Operand *o = &in->operands[j];
  if (o->kind != OPND_TILE || o->decl < 0) return;
  const Tile *t = &s->k->tiles[o->decl];
  if (j == 0 && target->limits.matmul_psum_f32 && !(t->mem == MEM_PSUM && t->type == ELEM_F32))
    diag_error(s->diag, o->span,
               "'%s' must write an f32 psum tile on target %s (nc_matmul accumulates in f32, in PSUM): '%s' is %s %s tile "
               "(matmul_psum_f32)",
               in->op_name, target->name, o->name, t->mem == MEM_PSUM ? "a psum" : "an sbuf", elem_type_name(t->type));
  if (j > 0 && target->limits.matmul_sbuf_inputs && t->mem == MEM_PSUM)
    diag_error(s->diag, o->span,
               "'%s' must read sbuf tiles on target %s (nc_matmul reads its stationary and moving operands "
               "from SBUF): '%s' is a psum tile (matmul_sbuf_inputs)",
               in->op_name, target->name, o->name);
}

static void check_matmul_operands(Sema *s) {
  for (int i = 0; i < s->k->ninstrs; i++) {
    const Stmt *in = s->k->instrs[i];
    if (in->op != BFRT_MATMUL && in->op != BFRT_MATMUL_ACC && in->op != BFRT_NC_MATMUL && in->op != BFRT_NC_MATMUL_ACC)
      continue;
    for (int j = 0; j < in->noperands; j++) check_matmul_operand(s, in, j);
  }
}

void check(Program *p) {
  if (!p->kernel) return;
  Kernel *k = p->kernel;
  Sema s = {.p = p, .k = k, .diag = &p->diag};
  s.ndecl_slots = 16;
  s.decls = ARENA_ARRAY(p->arena, Decl, s.ndecl_slots);
  s.tile_ok = ARENA_ARRAY(p->arena, bool, k->ntiles);
  k->ninstrs = k->nloops = k->nifs = 0;
  check_decls(&s);
  check_stmts(&s, k->body);
  check_tile_limits(&s);
  check_psum_access(&s);
  check_matmul_operands(&s);
  if (!p->diag.errors) check_tensors_stored(&s);
  if (!p->diag.errors && p->diag.warn) check_tiles_written(p);
  assign_queues(p);
}
