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
 * it, or before the closing brace of its body. A trailing comment keeps
 * its column when the code before it leaves room (two spaces at least), so
 * comments aligned in a column stay aligned. These rules give the same
 * placement again on fmt's own output, so fmt of fmt is the identity.
 * Blank lines between statements (or comments) are kept, one for any run
 * of them, except at the start of a body; declarations and statements are
 * always separated by one. */
#include <stdlib.h>

#include "frontend/program.h"

static const char *const io_name[] = {[IO_IN] = "in", [IO_OUT] = "out", [IO_INOUT] = "inout"};
static const char *const mem_name[] = {[MEM_SBUF] = "sbuf", [MEM_PSUM] = "psum"};
static const char *const cond_name[] = {[COND_LT] = "<",  [COND_LE] = "<=", [COND_GT] = ">",
                                        [COND_GE] = ">=", [COND_EQ] = "==", [COND_NE] = "!="};

/* A trailing comment: where its "  " separator was printed, and the column
 * (from 0) it had in the source. */
typedef struct Trailing {
  long at;
  int column;
} Trailing;

typedef struct Printer {
  FILE *out; /* a memory stream; the trailing comments are aligned at the end */
  Trailing *trailing;
  size_t ntrailing, trailing_cap;
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
  if (e->let) { /* a let's expression, substituted at its use */
    fputs(e->let, out);
    return;
  }
  bool parens = precedence(e->kind) < min_prec;
  if (parens) fputc('(', out);
  switch (e->kind) {
  case EX_INT:
    if (e->name) fputs(e->name, out);
    else fprintf(out, "%lld", (long long)e->value);
    break;
  case EX_FLOAT: fputs(e->name, out); break;
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
  case EX_MIN:
  case EX_MAX:
    fputs(e->kind == EX_MIN ? "min(" : "max(", out);
    print_expr(out, e->lhs, 0);
    fputs(", ", out);
    print_expr(out, e->rhs, 0);
    fputc(')', out);
    break;
  default:
    print_expr(out, e->lhs, precedence(e->kind));
    fprintf(out, " %c ", operator_char(e->kind));
    print_expr(out, e->rhs, precedence(e->kind) + 1);
  }
  if (parens) fputc(')', out);
}

/* A literal or a name: lo:hi is written tight between two of them, and
 * spaced as lo : hi otherwise (the numpy style guides' rule). */
static bool simple(const Expr *e) { return e->kind == EX_INT || e->kind == EX_NAME; }

static void print_slice(FILE *out, const Slice *d) {
  if (!d->lo) fputc(':', out);
  if (d->lo) print_expr(out, d->lo, 0);
  if (d->hi) fputs(simple(d->lo) && simple(d->hi) ? ":" : " : ", out);
  if (d->hi) print_expr(out, d->hi, 0);
}

static void print_operand(FILE *out, const Operand *o) {
  if (o->kind == OPND_IMM) {
    print_expr(out, o->imm_expr, 0);
    return;
  }
  fputs(o->name, out);
  for (int i = 0; i < o->nindex; i++) {
    fputs(i ? ", " : "[", out);
    print_expr(out, o->index[i], 0);
  }
  if (o->nindex) fputc(']', out);
  for (int i = 0; o->view && i < 2; i++) {
    fputs(i ? ", " : "[", out);
    if (i == 0 && o->gather) { /* rows by index: IDX[d0, d1] */
      fprintf(out, "%s[", o->gather->name);
      print_slice(out, &o->gather->dim[0]);
      fputs(", ", out);
      print_slice(out, &o->gather->dim[1]);
      fputc(']', out);
      continue;
    }
    print_slice(out, &o->dim[i]);
  }
  if (o->view) fputc(']', out);
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
 * before the next thing printed (at limit). keep_column: the thing is one
 * line both in the source and printed (a declaration, an instruction), so
 * its comment may keep its source column; after a closing brace the source
 * column means nothing. */
static void comments_trailing(Printer *pr, uint32_t end, uint32_t limit, bool keep_column) {
  const Kernel *k = pr->k;
  int line = source_line(pr->src, end - 1);
  for (; pr->next_comment < k->ncomments && k->comments[pr->next_comment].begin >= end &&
         k->comments[pr->next_comment].begin < limit &&
         source_line(pr->src, k->comments[pr->next_comment].begin) == line;
       pr->next_comment++) {
    int line, column;
    source_position(pr->src, k->comments[pr->next_comment].begin, &line, &column);
    if (pr->ntrailing == pr->trailing_cap) {
      pr->trailing_cap = pr->trailing_cap ? 2 * pr->trailing_cap : 16;
      pr->trailing = realloc(pr->trailing, pr->trailing_cap * sizeof *pr->trailing);
      if (!pr->trailing) bug("fmt: out of memory");
    }
    fflush(pr->out);
    pr->trailing[pr->ntrailing++] = (Trailing){ftell(pr->out), keep_column ? column - 1 : 0};
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
  bool one_line = st->kind == ST_INSTR || st->kind == ST_LET;
  comments_before(pr, one_line ? st->span.end : st->span.begin, depth);
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
  case ST_LET:
    fprintf(out, "let %s = ", st->var);
    print_expr(out, st->lo, 0);
    fputc(';', out);
    break;
  }
  if (pr->seen < st->span.end) pr->seen = st->span.end;
  comments_trailing(pr, st->span.end, limit, one_line);
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
  print_shape(pr->out, t->elem ? t->elem : "f32", t->rows, t->cols);
  pr->seen = t->cols->span.end + 1;
  comments_trailing(pr, t->cols->span.end + 1, limit, true);
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
  print_shape(pr->out, t->elem ? t->elem : "f32", t->rows_expr, t->cols_expr);
  pr->seen = t->cols_expr->span.end + 1;
  comments_trailing(pr, t->cols_expr->span.end + 1, limit, true);
  fputc('\n', pr->out);
}

void fmt_storage(const Kernel *k, FILE *out) {
  for (int i = 0; i < k->ntensors; i++) {
    const Tensor *t = &k->tensors[i];
    fprintf(out, "hbm %s %s", io_name[t->io], t->name);
    print_shape(out, elem_type_name(t->type), t->rows, t->cols);
    fputc('\n', out);
  }
  for (int i = 0; i < k->ntiles; i++) {
    const Tile *t = &k->tiles[i];
    fprintf(out, "%s %s", mem_name[t->mem], t->name);
    if (t->slotted) fprintf(out, "[%lld]", (long long)t->slots);
    fprintf(out, ": %s[%lld, %lld];\n", elem_type_name(t->type), (long long)t->rows, (long long)t->cols);
  }
}

static void print_const(Printer *pr, const Const *c, uint32_t limit) {
  comments_before(pr, c->value->span.end, 1);
  start_line(pr, c->span.begin, 1);
  fprintf(pr->out, "const %s = ", c->name);
  print_expr(pr->out, c->value, 0);
  fputc(';', pr->out);
  pr->seen = c->value->span.end + 1;
  comments_trailing(pr, c->value->span.end + 1, limit, true);
  fputc('\n', pr->out);
}

enum { DECL_TENSOR, DECL_TILE, DECL_CONST, NDECL_KINDS };

/* Where the next declaration of each kind starts (UINT32_MAX: none left). */
static uint32_t decl_begin(const Kernel *k, int kind, int i) {
  int n[NDECL_KINDS] = {k->ntensors, k->ntiles, k->nconsts};
  if (i >= n[kind]) return UINT32_MAX;
  return kind == DECL_TENSOR ? k->tensors[i].span.begin
         : kind == DECL_TILE ? k->tiles[i].span.begin
                             : k->consts[i].span.begin;
}

/* Declarations of the three kinds merged by position; limit follows them.
 * (A const's span is its name, after the keyword, which is still before
 * anything declared after it.) */
static void print_decls(Printer *pr, uint32_t limit) {
  const Kernel *k = pr->k;
  int next[NDECL_KINDS] = {0};
  for (;;) {
    int kind = 0;
    for (int c = 1; c < NDECL_KINDS; c++)
      if (decl_begin(k, c, next[c]) < decl_begin(k, kind, next[kind])) kind = c;
    if (decl_begin(k, kind, next[kind]) == UINT32_MAX) return;
    int i = next[kind]++;
    uint32_t after = limit;
    for (int c = 0; c < NDECL_KINDS; c++)
      if (decl_begin(k, c, next[c]) < after) after = decl_begin(k, c, next[c]);
    if (kind == DECL_TENSOR) print_tensor(pr, &k->tensors[i], after);
    else if (kind == DECL_TILE) print_tile(pr, &k->tiles[i], after);
    else print_const(pr, &k->consts[i], after);
  }
}

/* text (n bytes) on out, each trailing comment moved right to its source
 * column when the code before it is short enough. */
static void align_trailing(const char *text, size_t n, const Trailing *t, size_t nt, FILE *out) {
  size_t from = 0;
  for (size_t i = 0; i < nt; i++) {
    size_t at = (size_t)t[i].at, line = at;
    while (line > 0 && text[line - 1] != '\n') line--;
    fwrite(text + from, 1, at - from, out);
    for (long col = (long)(at - line) + 2; col < t[i].column; col++) fputc(' ', out);
    from = at;
  }
  fwrite(text + from, 1, n - from, out);
}

static void print_kernel(Printer *pr);

void fmt(const Program *p, FILE *out) {
  if (!p->kernel) bug("fmt: no kernel");
  char *text = NULL;
  size_t n = 0;
  FILE *mem = open_memstream(&text, &n);
  if (!mem) bug("fmt: cannot open a memory stream");
  Printer pr = {.out = mem, .src = &p->src, .k = p->kernel, .fresh = true};
  print_kernel(&pr);
  fclose(mem);
  align_trailing(text, n, pr.trailing, pr.ntrailing, out);
  free(pr.trailing);
  free(text);
}

static void print_kernel(Printer *pr0) {
  Printer pr = *pr0;
  const Kernel *k = pr.k;
  FILE *out = pr.out;
  comments_before(&pr, k->span.begin, 0);
  start_line(&pr, k->span.begin, 0);
  fprintf(out, "kernel %s(", k->name);
  for (int i = 0; i < k->nparams; i++) fprintf(out, "%s%s: int", i ? ", " : "", k->params[i].name);
  fputs(") {\n", out);
  pr.seen = k->span.end;
  pr.fresh = true;
  print_decls(&pr, k->body ? k->body->span.begin : k->end);
  if ((k->ntensors || k->ntiles || k->nconsts) && k->body) {
    fputc('\n', out);
    pr.fresh = true;
  }
  print_stmts(&pr, k->body, k->end, 1);
  fputs("}", out);
  comments_trailing(&pr, k->end + 1, UINT32_MAX, false);
  fputc('\n', out);
  comments_before(&pr, UINT32_MAX, 0);
  *pr0 = pr;
}
