/* ir_dump.c: `bfsync compile --emit=proof`, the kernel and its streams in
 * the serialized form of the proof's extracted checker (docs/proof.md).
 *
 * The checker rebuilds the proof's model of the kernel from the first
 * part, runs the threshold function extracted from Coq on it, interprets
 * the streams of the second part on its own, and compares every wait. So
 * the dump says nothing the IR or the AST does not: a token stream of
 * words and integers, expressions in prefix form, blocks in braces.
 *
 *   dump    = "bfsync-proof 1" "params" N name* "engines" N
 *             "kernel" block stream*  "end"
 *   block   = "{" stmt* "}"
 *   stmt    = "for" loop expr expr block
 *           | "if" cond block block
 *           | "instr" id engine N access*
 *   cond    = "cmp" ("lt"|"le"|"gt"|"ge"|"eq"|"ne") expr expr
 *           | ("and"|"or") cond cond | "not" cond
 *   access  = resource write(0|1) row-expr rows col-expr cols
 *   stream  = "stream" engine "vars" N "arrays" N expr* nodes
 *   nodes   = "{" node* "}"
 *   node    = "op" id | "wait" engine fallback(0|1) expr | "set" var expr
 *           | "store" array expr expr | "loop" loop expr expr nodes | "barrier"
 *           | "if" expr nodes nodes
 *   expr    = "k" int | "p" param | "v" loop | "x" var | "ld" array expr
 *           | "neg" expr | ("add"|"sub"|"mul"|"div"|"mod"|"max"|"trips") expr expr
 *           | ("lt"|"le"|"gt"|"ge"|"eq"|"ne"|"and"|"or") expr expr | "not" expr
 *           | "sel" expr expr expr
 *
 * The kernel model has no device integers: a kernel with an i32 tensor is
 * outside it, and ir_dump_proof says so instead of a usable dump.
 *
 * (trips a b: the iterations of `for v in a .. b`, b - a when b > a, else 0.)
 *
 * An access is a rectangle of a resource (tiles, then hbm tensors):
 * rows [row * rows, row * rows + rows), columns likewise. A tile slot s is
 * [s, s + 1) x [0, 1); an hbm tile X[r, c] of shape h x w is
 * [r * h, r * h + h) x [c * w, c * w + w). Which operands are read and
 * written is deps.c's classification, the one the transform uses. */
#include "transform/ir_dump.h"

#include <inttypes.h>

#include "transform/deps.h"

/* What the proof's model lacks, when the kernel needs it (first found). */
static const char *outside_model;

static void dump_expr(const Expr *e, FILE *out);

static void dump_binary(const char *name, const Expr *e, FILE *out) {
  fprintf(out, " %s", name);
  dump_expr(e->lhs, out);
  dump_expr(e->rhs, out);
}

/* Every kind is listed, so that a new one is a compile error here. */
static void dump_expr(const Expr *e, FILE *out) {
  switch (e->kind) {
  case EX_INT: fprintf(out, " k %" PRId64, e->value); return;
  case EX_FLOAT: fprintf(out, " r %a", e->real); return;
  case EX_NAME: fprintf(out, " %s %d", e->sym == SYM_PARAM ? "p" : "v", e->index); return;
  case EX_NEG: fputs(" neg", out); dump_expr(e->lhs, out); return;
  case EX_ADD: dump_binary("add", e, out); return;
  case EX_SUB: dump_binary("sub", e, out); return;
  case EX_MUL: dump_binary("mul", e, out); return;
  case EX_DIV: dump_binary("div", e, out); return;
  case EX_MOD: dump_binary("mod", e, out); return;
  case EX_MIN:
  case EX_MAX:
    if (!outside_model) outside_model = "min and max";
    fputs(" k 0", out);
    return;
  case EX_ELEM:
    if (!outside_model) outside_model = "device integers (i32 tensors)";
    fputs(" k 0", out);
    return;
  }
}

static void dump_ir_expr(const IrExpr *e, FILE *out);

static void dump_ir_binary(const char *name, const IrExpr *e, FILE *out) {
  fprintf(out, " %s", name);
  dump_ir_expr(e->a, out);
  dump_ir_expr(e->b, out);
}

static void dump_ir_expr(const IrExpr *e, FILE *out) {
  switch (e->kind) {
  case IX_CONST: fprintf(out, " k %" PRId64, e->value); return;
  case IX_PARAM: fprintf(out, " p %d", e->id); return;
  case IX_LOOPVAR: fprintf(out, " v %d", e->id); return;
  case IX_VAR: fprintf(out, " x %d", e->id); return;
  case IX_LOAD: fprintf(out, " ld %d", e->id); dump_ir_expr(e->a, out); return;
  case IX_ADD: dump_ir_binary("add", e, out); return;
  case IX_SUB: dump_ir_binary("sub", e, out); return;
  case IX_MUL: dump_ir_binary("mul", e, out); return;
  case IX_DIV: dump_ir_binary("div", e, out); return;
  case IX_MOD: dump_ir_binary("mod", e, out); return;
  case IX_MAX: dump_ir_binary("max", e, out); return;
  case IX_TRIPS: dump_ir_binary("trips", e, out); return;
  case IX_LT: dump_ir_binary("lt", e, out); return;
  case IX_LE: dump_ir_binary("le", e, out); return;
  case IX_GT: dump_ir_binary("gt", e, out); return;
  case IX_GE: dump_ir_binary("ge", e, out); return;
  case IX_EQ: dump_ir_binary("eq", e, out); return;
  case IX_NE: dump_ir_binary("ne", e, out); return;
  case IX_AND: dump_ir_binary("and", e, out); return;
  case IX_OR: dump_ir_binary("or", e, out); return;
  case IX_NOT: fputs(" not", out); dump_ir_expr(e->a, out); return;
  case IX_SELECT:
    fputs(" sel", out);
    dump_ir_expr(e->a, out);
    dump_ir_expr(e->b, out);
    dump_ir_expr(e->c, out);
    return;
  case IX_HBM_ROW: dump_ir_expr(e->a, out); return; /* the row; the check is outside the model */
  case IX_TILE_AT: dump_ir_expr(e->a, out); return; /* likewise */
  case IX_ELEM:
    if (!outside_model) outside_model = "device integers (i32 tensors)";
    fputs(" k 0", out);
    return;
  }
}

static void dump_access(const Deps *d, const Access *a, FILE *out) {
  fprintf(out, " %d %d", a->res, a->write);
  if (a->operand->view) { /* not a rectangle of the model's form: the dump is refused */
    if (!outside_model) outside_model = "views and element slices (x[p0:p1, f0:f1], X[r0:r1, c0:c1])";
    fputs(" k 0 1 k 0 1", out);
    return;
  }
  if (a->res < d->k->ntiles) {
    if (a->operand->slot) dump_expr(a->operand->slot, out);
    else fputs(" k 0", out);
    fputs(" 1 k 0 1", out);
    return;
  }
  dump_expr(a->operand->row, out);
  fprintf(out, " %" PRId64, a->rows);
  dump_expr(a->operand->col, out);
  fprintf(out, " %" PRId64, a->cols);
}

static const char *cmp_name(CondOp op) {
  static const char *const names[] = {[COND_LT] = "lt", [COND_LE] = "le", [COND_GT] = "gt",
                                      [COND_GE] = "ge", [COND_EQ] = "eq", [COND_NE] = "ne"};
  return names[op];
}

/* cond = "cmp" op expr expr | ("and"|"or") cond cond | "not" cond */
static void dump_cond(const Cond *c, FILE *out) {
  switch (c->kind) {
  case COND_CMP:
    fprintf(out, " cmp %s", cmp_name(c->op));
    dump_expr(c->lhs, out);
    dump_expr(c->rhs, out);
    return;
  case COND_AND:
  case COND_OR:
    fputs(c->kind == COND_AND ? " and" : " or", out);
    dump_cond(c->left, out);
    dump_cond(c->right, out);
    return;
  case COND_NOT:
    fputs(" not", out);
    dump_cond(c->left, out);
    return;
  }
}

static void dump_stmts(const Deps *d, const Stmt *s, int depth, FILE *out);

static void dump_block(const Deps *d, const Stmt *s, int depth, FILE *out) {
  fputs(" {\n", out);
  dump_stmts(d, s, depth + 1, out);
  fprintf(out, "%*s}", 2 * depth, "");
}

static void dump_stmts(const Deps *d, const Stmt *s, int depth, FILE *out) {
  for (; s; s = s->next) {
    if (s->kind == ST_BLOCK) {
      dump_stmts(d, s->body, depth, out);
      continue;
    }
    fprintf(out, "%*s", 2 * depth, "");
    switch (s->kind) {
    case ST_FOR:
      fprintf(out, "for %d", s->loop_id);
      dump_expr(s->lo, out);
      dump_expr(s->hi, out);
      dump_block(d, s->body, depth, out);
      break;
    case ST_LET: break; /* a let is a name: its uses are its expression (sema) */
    case ST_IF:
      fputs("if", out);
      dump_cond(s->cond, out);
      dump_block(d, s->body, depth, out);
      dump_block(d, s->orelse, depth, out);
      break;
    case ST_INSTR: {
      const InstrInfo *in = &d->instrs[s->instr_id];
      fprintf(out, "instr %d %d %d", s->instr_id, in->engine, in->naccesses);
      for (int i = 0; i < in->naccesses; i++) dump_access(d, &in->accesses[i], out);
      break;
    }
    case ST_BLOCK: break;
    }
    fputc('\n', out);
  }
}

static void dump_nodes(const IrNode *n, int depth, FILE *out) {
  fputs(" {\n", out);
  for (; n; n = n->next) {
    fprintf(out, "%*s", 2 * depth + 2, "");
    switch (n->kind) {
    case IR_OP: fprintf(out, "op %d", n->instr->instr_id); break;
    case IR_WAIT:
      fprintf(out, "wait %d %d", n->engine, n->why && n->why->fallback);
      dump_ir_expr(n->threshold, out);
      break;
    case IR_SET:
      fprintf(out, "set %d", n->var);
      dump_ir_expr(n->value, out);
      break;
    case IR_STORE:
      fprintf(out, "store %d", n->array);
      dump_ir_expr(n->index, out);
      dump_ir_expr(n->value, out);
      break;
    case IR_LOOP:
      fprintf(out, "loop %d", n->loop_id);
      dump_ir_expr(n->lo, out);
      dump_ir_expr(n->hi, out);
      dump_nodes(n->body, depth + 1, out);
      break;
    case IR_BARRIER: fputs("barrier", out); break;
    case IR_IF:
      fputs("if", out);
      dump_ir_expr(n->cond, out);
      dump_nodes(n->body, depth + 1, out);
      dump_nodes(n->orelse, depth + 1, out);
      break;
    }
    fputc('\n', out);
  }
  fprintf(out, "%*s}", 2 * depth, "");
}

const char *ir_dump_proof(Program *p, FILE *out) {
  const Kernel *k = p->kernel;
  outside_model = NULL;
  const Deps *d = deps_build(p);
  fprintf(out, "bfsync-proof 1\nparams %d", k->nparams);
  for (int i = 0; i < k->nparams; i++) fprintf(out, " %s", k->params[i].name);
  fprintf(out, "\nengines %d\nkernel", p->ir->nengines);
  dump_block(d, k->body, 0, out);
  fputc('\n', out);
  for (int e = 0; e < p->ir->nengines; e++) {
    const IrStream *s = &p->ir->streams[e];
    fprintf(out, "stream %d vars %d arrays %d", e, s->nvars, s->narrays);
    for (int a = 0; a < s->narrays; a++) dump_ir_expr(s->arrays[a].length, out);
    dump_nodes(s->body, 0, out);
    fputc('\n', out);
  }
  fputs("end\n", out);
  return outside_model;
}
