/* fmt.c: the kernel printed back in canonical form (bfsync fmt).
 *
 * One declaration or statement per line, two-space indentation, engine
 * blocks kept as written, single spaces around binary operators and after
 * commas, and only the parentheses that precedence requires. Printing walks
 * the AST, so comments are not kept. The output parses back to the same
 * tree, which is what makes fmt of fmt's output identical. */
#include "frontend/program.h"

static const char *const io_name[] = {[IO_IN] = "in", [IO_OUT] = "out", [IO_INOUT] = "inout"};
static const char *const mem_name[] = {[MEM_SBUF] = "sbuf", [MEM_PSUM] = "psum"};
static const char *const cond_name[] = {[COND_LT] = "<",  [COND_LE] = "<=", [COND_GT] = ">",
                                        [COND_GE] = ">=", [COND_EQ] = "==", [COND_NE] = "!="};

enum { PREC_ADD = 1, PREC_MUL, PREC_NEG, PREC_PRIMARY };

static int precedence(ExprKind kind) {
  switch (kind) {
  case EX_ADD:
  case EX_SUB: return PREC_ADD;
  case EX_MUL:
  case EX_DIV:
  case EX_MOD: return PREC_MUL;
  case EX_NEG: return PREC_NEG;
  default: return PREC_PRIMARY;
  }
}

static char operator_char(ExprKind kind) {
  switch (kind) {
  case EX_ADD: return '+';
  case EX_SUB: return '-';
  case EX_MUL: return '*';
  case EX_DIV: return '/';
  case EX_MOD: return '%';
  default: bug("fmt: expression kind %d is not a binary operator", kind);
  }
}

/* e, parenthesized when it binds more loosely than min_prec. Operators are
 * left-associative, so a right operand of equal precedence keeps its
 * parentheses: a - (b - c). */
static void print_expr(FILE *out, const Expr *e, int min_prec) {
  bool parens = precedence(e->kind) < min_prec;
  if (parens) fputc('(', out);
  switch (e->kind) {
  case EX_INT: fprintf(out, "%lld", (long long)e->value); break;
  case EX_NAME: fputs(e->name, out); break;
  case EX_NEG:
    fputc('-', out);
    print_expr(out, e->lhs, PREC_PRIMARY);
    break;
  default:
    print_expr(out, e->lhs, precedence(e->kind));
    fprintf(out, " %c ", operator_char(e->kind));
    print_expr(out, e->rhs, precedence(e->kind) + 1);
  }
  if (parens) fputc(')', out);
}

static void print_operand(FILE *out, const Operand *o) {
  if (o->kind == OPND_IMM) {
    fputs(o->imm_text, out);
    return;
  }
  fputs(o->name, out);
  for (int i = 0; i < o->nindex; i++) {
    fputs(i ? ", " : "[", out);
    print_expr(out, o->index[i], 0);
  }
  if (o->nindex) fputc(']', out);
}

static void indent(FILE *out, int depth) { fprintf(out, "%*s", 2 * depth, ""); }

static void print_stmts(FILE *out, const Stmt *list, int depth);

/* "{", the statements one level deeper, and "}" on a line of its own. */
static void print_body(FILE *out, const Stmt *body, int depth) {
  fputs(" {\n", out);
  print_stmts(out, body, depth + 1);
  indent(out, depth);
  fputc('}', out);
}

static void print_instr(FILE *out, const Stmt *in) {
  if (in->engine_name) fprintf(out, "%s: ", in->engine_name);
  fputs(in->op_name, out);
  for (int i = 0; i < in->noperands; i++) {
    fputs(i ? ", " : " ", out);
    print_operand(out, &in->operands[i]);
  }
  fputc(';', out);
}

static void print_stmt(FILE *out, const Stmt *st, int depth) {
  indent(out, depth);
  switch (st->kind) {
  case ST_FOR:
    fprintf(out, "for %s in ", st->var);
    print_expr(out, st->lo, 0);
    fputs(" .. ", out);
    print_expr(out, st->hi, 0);
    print_body(out, st->body, depth);
    break;
  case ST_BLOCK:
    fputs(st->engine_name, out);
    print_body(out, st->body, depth);
    break;
  case ST_INSTR: print_instr(out, st); break;
  case ST_IF:
    fputs("if (", out);
    print_expr(out, st->cond->lhs, 0);
    fprintf(out, " %s ", cond_name[st->cond->op]);
    print_expr(out, st->cond->rhs, 0);
    fputc(')', out);
    print_body(out, st->body, depth);
    if (st->orelse) {
      fputs(" else", out);
      print_body(out, st->orelse, depth);
    }
    break;
  }
  fputc('\n', out);
}

static void print_stmts(FILE *out, const Stmt *list, int depth) {
  for (const Stmt *st = list; st; st = st->next) print_stmt(out, st, depth);
}

static void print_shape(FILE *out, const Expr *rows, const Expr *cols) {
  fputs(": f32[", out);
  print_expr(out, rows, 0);
  fputs(", ", out);
  print_expr(out, cols, 0);
  fputs("];\n", out);
}

static void print_decls(FILE *out, const Kernel *k) {
  for (int i = 0; i < k->ntensors; i++) {
    const Tensor *t = &k->tensors[i];
    fprintf(out, "  hbm %s %s", io_name[t->io], t->name);
    print_shape(out, t->rows, t->cols);
  }
  for (int i = 0; i < k->ntiles; i++) {
    const Tile *t = &k->tiles[i];
    fprintf(out, "  %s %s", mem_name[t->mem], t->name);
    if (t->slots_expr) {
      fputc('[', out);
      print_expr(out, t->slots_expr, 0);
      fputc(']', out);
    }
    print_shape(out, t->rows_expr, t->cols_expr);
  }
}

void fmt(const Program *p, FILE *out) {
  const Kernel *k = p->kernel;
  if (!k) bug("fmt: no kernel");
  fprintf(out, "kernel %s(", k->name);
  for (int i = 0; i < k->nparams; i++) fprintf(out, "%s%s: int", i ? ", " : "", k->params[i].name);
  fputs(") {\n", out);
  print_decls(out, k);
  if ((k->ntensors || k->ntiles) && k->body) fputc('\n', out);
  print_stmts(out, k->body, 1);
  fputs("}\n", out);
}
