/* ir_dump.c: `bfsync compile --emit=proof`, the kernel in the serialized
 * form of the proof's extracted checker (docs/proof.md).
 *
 * The checker rebuilds the proof's model of the kernel from this dump,
 * derives each instruction's reads and writes from runtime/ops.def (its
 * own table, generated in the proof build: not deps.c's classification),
 * runs the threshold function and the validator extracted from Coq on it,
 * and compares them with the emitted C (`bfsync compile --emit=c`), which
 * it interprets itself. So the dump says only what the source says: each
 * instruction's op, line, engine and operands as written, with the
 * parameters, the tiles' shapes and the device integers' values. A token
 * stream of words and integers, expressions in prefix form, blocks in
 * braces.
 *
 *   dump    = "bfsync-proof 2" "params" N name* "engines" N name* "bits" B
 *             "tiles" N (rows cols)* "tensors" N
 *             ("device" tensor rows cols value*)* "kernel" block "end"
 *   block   = "{" stmt* "}"
 *   stmt    = "for" loop expr expr block
 *           | "if" cond block block
 *           | "instr" id engine OPID line N operand*
 *   operand = "t" tile slot-expr | "h" tensor row-expr col-expr | "f"
 *           | "vt" tile slot-expr dim dim | "vh" tensor dim dim
 *   dim     = "d" lo-expr extent | "r" lo-expr extent clip-expr
 *   cond    = "cmp" ("lt"|"le"|"gt"|"ge"|"eq"|"ne") expr expr
 *           | ("and"|"or") cond cond | "not" cond
 *   expr    = "k" int | "p" param | "v" loop | "e" tensor expr expr
 *           | "neg" expr | ("add"|"sub"|"mul"|"div"|"mod"|"min"|"max") expr expr
 *
 * OPID is the op's identifier in runtime/ops.def (MATMUL_ACC). A "device"
 * entry gives an i32 tensor's elements, row-major, when the values are
 * bound (compile with -p: bfsync run's defaults for seed 1; verify: its
 * --seed or --input values); "e t r c" reads element (r, c) of tensor t.
 * B is the target's counter width (counter_bits). A tile operand without
 * a slot is slot 0. "vt" is a view x[p0:p1, f0:f1] of a tile's slot, "vh"
 * an element slice X[r0:r1, c0:c1] of an hbm tensor: per dimension its
 * first index (0 for `:`) and its extent as sema fixed it, and for a
 * ragged one ("r", written lo:min(lo + C, E)) the clip E, whose run-time
 * extent is max(0, min(C, E - lo)) (docs/language.md, "Operands"). */
#include "transform/ir_dump.h"

#include <inttypes.h>
#include <string.h>

#include "util/diag.h"

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
  case EX_MIN: dump_binary("min", e, out); return;
  case EX_MAX: dump_binary("max", e, out); return;
  case EX_ELEM:
    fprintf(out, " e %d", e->index);
    dump_expr(e->lhs, out);
    dump_expr(e->rhs, out);
    return;
  }
}

static const char *const op_ids[] = {
#define OP(id, name, sig, engines, shape, cls, acc) #id,
#include "runtime/ops.def"
#undef OP
};

/* dim = "d" lo extent | "r" lo extent clip */
static void dump_dim(const Operand *o, int d, FILE *out) {
  fputs(o->clip[d] ? " r" : " d", out);
  if (o->lo[d]) dump_expr(o->lo[d], out);
  else fputs(" k 0", out);
  fprintf(out, " %" PRId64, o->ext[d]);
  if (o->clip[d]) dump_expr(o->clip[d], out);
}

/* operand = "t" tile slot | "h" tensor row col | "f" | "vt" tile slot dim dim | "vh" tensor dim dim */
static void dump_operand(const Operand *o, FILE *out) {
  switch (o->kind) {
  case OPND_TILE:
    fprintf(out, " %s %d", o->view ? "vt" : "t", o->decl);
    if (o->slot) dump_expr(o->slot, out);
    else fputs(" k 0", out);
    break;
  case OPND_HBM:
    fprintf(out, " %s %d", o->view ? "vh" : "h", o->decl);
    if (o->view) break;
    dump_expr(o->row, out);
    dump_expr(o->col, out);
    return;
  case OPND_IMM: fputs(" f", out); return;
  case OPND_NAME: bug("ir_dump: unresolved operand");
  }
  for (int d = 0; o->view && d < 2; d++) dump_dim(o, d, out);
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

static void dump_stmts(const Program *p, const Stmt *s, int depth, FILE *out);

static void dump_block(const Program *p, const Stmt *s, int depth, FILE *out) {
  fputs(" {\n", out);
  dump_stmts(p, s, depth + 1, out);
  fprintf(out, "%*s}", 2 * depth, "");
}

static void dump_stmts(const Program *p, const Stmt *s, int depth, FILE *out) {
  for (; s; s = s->next) {
    if (s->kind == ST_BLOCK) {
      dump_stmts(p, s->body, depth, out);
      continue;
    }
    fprintf(out, "%*s", 2 * depth, "");
    switch (s->kind) {
    case ST_FOR:
      fprintf(out, "for %d", s->loop_id);
      dump_expr(s->lo, out);
      dump_expr(s->hi, out);
      dump_block(p, s->body, depth, out);
      break;
    case ST_LET: break; /* a let is a name: its uses are its expression (sema) */
    case ST_IF:
      fputs("if", out);
      dump_cond(s->cond, out);
      dump_block(p, s->body, depth, out);
      dump_block(p, s->orelse, depth, out);
      break;
    case ST_INSTR:
      fprintf(out, "instr %d %d %s %d %d", s->instr_id, s->engine, op_ids[s->op],
              source_line(&p->src, s->span.begin), s->noperands);
      for (int i = 0; i < s->noperands; i++) dump_operand(&s->operands[i], out);
      break;
    case ST_BLOCK: break;
    }
    fputc('\n', out);
  }
}

/* Why the proof's model cannot take operand o, or NULL. Its accesses are
 * boxes: one interval per dimension of a tile or of a tensor as [rows,
 * cols]; a gather's rows are data, and a step leaves gaps in the box. */
static const char *outside_model(const Operand *o) {
  if (o->gather) return "gathers and scatters by run-time index (X[IDX[..], ..]) are not in the proof's model yet (docs/proof.md, section 5)";
  if (o->rstep || o->cstep > 1)
    return "strided views and slices (a step, or partitions over a tensor's non-leading dimension) are not in the proof's model yet (docs/proof.md, section 5)";
  return NULL;
}

static const char *stmts_outside(const Stmt *s) {
  for (; s; s = s->next) {
    const char *why = NULL;
    for (int i = 0; s->kind == ST_INSTR && !why && i < s->noperands; i++) why = outside_model(&s->operands[i]);
    if (!why && s->kind != ST_INSTR && !(why = stmts_outside(s->body))) why = stmts_outside(s->orelse);
    if (why) return why;
  }
  return NULL;
}

const char *ir_dump_outside(const Program *p) { return stmts_outside(p->kernel->body); }

void ir_dump_proof(const Program *p, FILE *out) {
  const Kernel *k = p->kernel;
  fprintf(out, "bfsync-proof 2\nparams %d", k->nparams);
  for (int i = 0; i < k->nparams; i++) fprintf(out, " %s", k->params[i].name);
  fprintf(out, "\nengines %d", p->target->nengines);
  for (int e = 0; e < p->target->nengines; e++) fprintf(out, " %s", p->target->engines[e].name);
  fprintf(out, "\nbits %d", p->target->counter_bits);
  fprintf(out, "\ntiles %d", k->ntiles);
  for (int t = 0; t < k->ntiles; t++) fprintf(out, " %" PRId64 " %" PRId64, k->tiles[t].rows, k->tiles[t].cols);
  fprintf(out, "\ntensors %d\n", k->ntensors);
  for (int t = 0; t < k->ntensors; t++) {
    if (!k->tensors[t].ints || !p->device_ints || !p->device_ints[t]) continue;
    int64_t rows = p->device_shape[t][0], cols = p->device_shape[t][1];
    fprintf(out, "device %d %" PRId64 " %" PRId64, t, rows, cols);
    for (int64_t i = 0; i < rows * cols; i++) {
      int32_t v;
      memcpy(&v, (const char *)p->device_ints[t] + 4 * i, sizeof v);
      fprintf(out, " %" PRId32, v);
    }
    fputc('\n', out);
  }
  fputs("kernel", out);
  dump_block(p, k->body, 0, out);
  fputs("\nend\n", out);
}
