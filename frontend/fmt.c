/* fmt.c: the kernel printed back in canonical form (bfsync fmt).
 *
 * One declaration or statement per line, two-space indentation, engine
 * blocks kept as written, declarations in source order, single spaces
 * around binary operators and after commas, and only the parentheses that
 * precedence requires. The output parses back to the same tree.
 *
 * Comments are kept, re-attached by position: a comment that starts on the
 * line where a statement ends stays at the end of that line; any other
 * comment goes on a line of its own before the next thing printed after
 * it, or before the closing brace of its body. Both rules give the same
 * placement again on fmt's own output, so fmt of fmt is the identity.
 * Blank lines between statements (or comments) are kept, one for any run
 * of them, except at the start of a body; declarations and statements are
 * always separated by one. */
#include "frontend/program.h"

static const char *const io_name[] = {[IO_IN] = "in", [IO_OUT] = "out", [IO_INOUT] = "inout"};
static const char *const mem_name[] = {[MEM_SBUF] = "sbuf", [MEM_PSUM] = "psum"};
static const char *const cond_name[] = {[COND_LT] = "<",  [COND_LE] = "<=", [COND_GT] = ">",
                                        [COND_GE] = ">=", [COND_EQ] = "==", [COND_NE] = "!="};

typedef struct Printer {
  FILE *out;
  const Source *src;
  const Kernel *k;
  int next_comment; /* the first comment not printed yet */
  uint32_t seen;    /* the source is printed up to this offset */
  bool fresh;       /* nothing printed yet in the current body */
} Printer;

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
  case EX_ELEM:
    fprintf(out, "%s[", e->name);
    print_expr(out, e->lhs, 0);
    fputs(", ", out);
    print_expr(out, e->rhs, 0);
    fputc(']', out);
    break;
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

/* Whether text[from, to) holds an empty line. */
static bool blank_line(const Source *src, uint32_t from, uint32_t to) {
  bool empty = false; /* only blanks since the last newline */
  for (uint32_t i = from; i < to && i < src->len; i++) {
    char c = src->text[i];
    if (c == '\n') {
      if (empty) return true;
      empty = true;
    } else if (c != ' ' && c != '\t' && c != '\r') {
      empty = false;
    }
  }
  return false;
}

/* Starts the line of what the source has at offset at: one blank line first
 * when the source has any since what was printed last. */
static void start_line(Printer *pr, uint32_t at, int depth) {
  if (!pr->fresh && blank_line(pr->src, pr->seen, at)) fputc('\n', pr->out);
  pr->fresh = false;
  indent(pr->out, depth);
}

/* ---- Comments. */
static void print_comment(Printer *pr, Span c) {
  uint32_t end = c.end;
  if (end > c.begin && pr->src->text[end - 1] == '\r') end--;
  fwrite(pr->src->text + c.begin, 1, end - c.begin, pr->out);
}

/* Every comment that starts before offset, each on its own line. */
static void comments_before(Printer *pr, uint32_t offset, int depth) {
  const Kernel *k = pr->k;
  for (; pr->next_comment < k->ncomments && k->comments[pr->next_comment].begin < offset;
       pr->next_comment++) {
    Span c = k->comments[pr->next_comment];
    start_line(pr, c.begin, depth);
    print_comment(pr, c);
    fputc('\n', pr->out);
    pr->seen = c.end;
  }
}

/* Comments that start on the line where something ends (at end) and
 * before the next thing printed (at limit). */
static void comments_trailing(Printer *pr, uint32_t end, uint32_t limit) {
  const Kernel *k = pr->k;
  int line = source_line(pr->src, end - 1);
  for (; pr->next_comment < k->ncomments && k->comments[pr->next_comment].begin >= end &&
         k->comments[pr->next_comment].begin < limit &&
         source_line(pr->src, k->comments[pr->next_comment].begin) == line;
       pr->next_comment++) {
    fputs("  ", pr->out);
    print_comment(pr, k->comments[pr->next_comment]);
    pr->seen = k->comments[pr->next_comment].end;
  }
}

/* ---- Statements. */
static void print_stmts(Printer *pr, const Stmt *list, uint32_t close, int depth);

/* "{", the statements one level deeper, and "}" (at offset close) on a line of its own. */
static void print_body(Printer *pr, const Stmt *body, uint32_t close, int depth) {
  fputs(" {\n", pr->out);
  pr->fresh = true;
  print_stmts(pr, body, close, depth + 1);
  indent(pr->out, depth);
  fputc('}', pr->out);
  pr->fresh = false;
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

enum { PREC_OR = 1, PREC_AND, PREC_NOT };

static int cond_precedence(CondKind kind) {
  return kind == COND_OR ? PREC_OR : kind == COND_AND ? PREC_AND : PREC_NOT;
}

/* c, parenthesized when it binds more loosely than min_prec (a comparison
 * binds tightest, and both binary operators group left). */
static void print_cond(FILE *out, const Cond *c, int min_prec) {
  bool parens = cond_precedence(c->kind) < min_prec;
  if (parens) fputc('(', out);
  switch (c->kind) {
  case COND_CMP:
    print_expr(out, c->lhs, 0);
    fprintf(out, " %s ", cond_name[c->op]);
    print_expr(out, c->rhs, 0);
    break;
  case COND_NOT:
    fputc('!', out);
    print_cond(out, c->left, c->left->kind == COND_CMP ? PREC_NOT + 1 : PREC_NOT);
    break;
  case COND_AND:
  case COND_OR:
    print_cond(out, c->left, cond_precedence(c->kind));
    fputs(c->kind == COND_AND ? " && " : " || ", out);
    print_cond(out, c->right, cond_precedence(c->kind) + 1);
    break;
  }
  if (parens) fputc(')', out);
}

/* if (cond) { ... } [else { ... } | else if ...], as written. */
static void print_if(Printer *pr, const Stmt *st, int depth) {
  FILE *out = pr->out;
  fputs("if (", out);
  print_cond(out, st->cond, 0);
  fputc(')', out);
  print_body(pr, st->body, st->then_close, depth);
  if (!st->orelse) return;
  fputs(" else", out);
  if (st->orelse->chained) {
    fputc(' ', out);
    print_if(pr, st->orelse, depth);
  } else {
    print_body(pr, st->orelse, st->span.end - 1, depth);
  }
}

/* st, then the comments trailing it before limit. */
static void print_stmt(Printer *pr, const Stmt *st, uint32_t limit, int depth) {
  FILE *out = pr->out;
  /* An instruction is one line: comments inside it go before it. */
  comments_before(pr, st->kind == ST_INSTR ? st->span.end : st->span.begin, depth);
  start_line(pr, st->span.begin, depth);
  switch (st->kind) {
  case ST_FOR:
    fprintf(out, "for %s in ", st->var);
    print_expr(out, st->lo, 0);
    fputs(" .. ", out);
    print_expr(out, st->hi, 0);
    print_body(pr, st->body, st->span.end - 1, depth);
    break;
  case ST_BLOCK:
    fputs(st->engine_name, out);
    print_body(pr, st->body, st->span.end - 1, depth);
    break;
  case ST_INSTR: print_instr(out, st); break;
  case ST_IF: print_if(pr, st, depth); break;
  }
  if (pr->seen < st->span.end) pr->seen = st->span.end;
  comments_trailing(pr, st->span.end, limit);
  fputc('\n', out);
}

static void print_stmts(Printer *pr, const Stmt *list, uint32_t close, int depth) {
  for (const Stmt *st = list; st; st = st->next)
    print_stmt(pr, st, st->next ? st->next->span.begin : close, depth);
  comments_before(pr, close, depth);
}

/* ---- Declarations, in source order. */
static void print_shape(FILE *out, const char *elem, const Expr *rows, const Expr *cols) {
  fprintf(out, ": %s[", elem);
  print_expr(out, rows, 0);
  fputs(", ", out);
  print_expr(out, cols, 0);
  fputs("];", out);
}

static void print_tensor(Printer *pr, const Tensor *t, uint32_t limit) {
  comments_before(pr, t->cols->span.end, 1);
  start_line(pr, t->span.begin, 1);
  fprintf(pr->out, "hbm %s %s", io_name[t->io], t->name);
  print_shape(pr->out, t->ints ? "i32" : "f32", t->rows, t->cols);
  pr->seen = t->cols->span.end + 1;
  comments_trailing(pr, t->cols->span.end + 1, limit);
  fputc('\n', pr->out);
}

static void print_tile(Printer *pr, const Tile *t, uint32_t limit) {
  comments_before(pr, t->cols_expr->span.end, 1);
  start_line(pr, t->span.begin, 1);
  fprintf(pr->out, "%s %s", mem_name[t->mem], t->name);
  if (t->slots_expr) {
    fputc('[', pr->out);
    print_expr(pr->out, t->slots_expr, 0);
    fputc(']', pr->out);
  }
  print_shape(pr->out, "f32", t->rows_expr, t->cols_expr);
  pr->seen = t->cols_expr->span.end + 1;
  comments_trailing(pr, t->cols_expr->span.end + 1, limit);
  fputc('\n', pr->out);
}

/* Declarations merged from the two arrays by position; limit follows them. */
static void print_decls(Printer *pr, uint32_t limit) {
  const Kernel *k = pr->k;
  for (int i = 0, j = 0; i < k->ntensors || j < k->ntiles;) {
    bool tensor = j == k->ntiles ||
                  (i < k->ntensors && k->tensors[i].span.begin < k->tiles[j].span.begin);
    int ni = i + tensor, nj = j + !tensor;
    uint32_t next = limit;
    if (ni < k->ntensors) next = k->tensors[ni].span.begin;
    if (nj < k->ntiles && k->tiles[nj].span.begin < next) next = k->tiles[nj].span.begin;
    if (tensor) print_tensor(pr, &k->tensors[i], next);
    else print_tile(pr, &k->tiles[j], next);
    i = ni;
    j = nj;
  }
}

void fmt(const Program *p, FILE *out) {
  const Kernel *k = p->kernel;
  if (!k) bug("fmt: no kernel");
  Printer pr = {out, &p->src, k, 0, 0, true};
  comments_before(&pr, k->span.begin, 0);
  start_line(&pr, k->span.begin, 0);
  fprintf(out, "kernel %s(", k->name);
  for (int i = 0; i < k->nparams; i++) fprintf(out, "%s%s: int", i ? ", " : "", k->params[i].name);
  fputs(") {\n", out);
  pr.seen = k->span.end;
  pr.fresh = true;
  print_decls(&pr, k->body ? k->body->span.begin : k->end);
  if ((k->ntensors || k->ntiles) && k->body) {
    fputc('\n', out);
    pr.fresh = true;
  }
  print_stmts(&pr, k->body, k->end, 1);
  fputs("}", out);
  comments_trailing(&pr, k->end + 1, UINT32_MAX);
  fputc('\n', out);
  comments_before(&pr, UINT32_MAX, 0);
}
