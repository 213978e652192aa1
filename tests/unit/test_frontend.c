/* test_frontend.c: the frontend, from bytes to a checked kernel.
 *
 * Every diagnostic is captured (open_memstream) and compared by its exact
 * position and text, so a message that moves or changes fails here. The
 * pathological inputs (nesting, huge files, junk) are generated in the test
 * so the repository stays small. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/ops.h"
#include "frontend/program.h"

/* A compilation and what it printed. */
typedef struct Run {
  Program *p;
  char *diag;
  size_t diag_len;
} Run;

/* Parse and check len bytes of text (checking only when parsing succeeded). */
static Run run_bytes(const char *text, size_t len) {
  Run r = {0};
  FILE *out = open_memstream(&r.diag, &r.diag_len);
  assert_non_null(out);
  r.p = program_new("t.bfk", text, len, NULL, out);
  parse(r.p);
  if (!r.p->diag.errors) check(r.p);
  fclose(out);
  r.p->diag.out = NULL;
  return r;
}

static Run run(const char *text) { return run_bytes(text, strlen(text)); }

static void done(Run *r) {
  program_free(r->p);
  free(r->diag);
}

static void assert_clean(const char *text) {
  Run r = run(text);
  if (r.p->diag.errors) fprintf(stderr, "unexpected diagnostics:\n%s", r.diag);
  assert_int_equal(r.p->diag.errors, 0);
  assert_non_null(r.p->kernel);
  done(&r);
}

/* The first diagnostic is exactly "t.bfk:" + want (its first line). */
static void assert_first_error(const char *text, const char *want) {
  Run r = run(text);
  assert_true(r.p->diag.errors > 0);
  char *nl = strchr(r.diag, '\n');
  assert_non_null(nl);
  *nl = 0;
  char expected[512];
  snprintf(expected, sizeof expected, "t.bfk:%s", want);
  assert_string_equal(r.diag, expected);
  done(&r);
}

/* want appears somewhere among the diagnostics. */
static void assert_reports(const char *text, const char *want) {
  Run r = run(text);
  assert_true(r.p->diag.errors > 0);
  if (!strstr(r.diag, want)) fprintf(stderr, "missing '%s' in:\n%s", want, r.diag);
  assert_non_null(strstr(r.diag, want));
  done(&r);
}

/* ---- The language example from issue 2, verbatim. */
static const char softmax[] =
    "// comments: // to end of line, and /* ... */\n"
    "kernel softmax(R: int) {                 // parameters: int scalars, known only at run time\n"
    "  hbm in  X: f32[R * 32, 96];            // off-chip tensors: in | out | inout, 2-D f32, shape over parameters\n"
    "  hbm out Y: f32[R * 32, 96];\n"
    "  sbuf x[2]: f32[32, 96];                // on-chip tile with 2 slots, used as x[expr]\n"
    "  sbuf y: f32[32, 96];                   // sbuf | psum tiles: constant 2-D shapes\n"
    "  sbuf m: f32[32, 1];\n"
    "  sbuf s: f32[32, 1];\n"
    "\n"
    "  for r in 0 .. R {                      // half-open; bounds: integer expressions over parameters\n"
    "    dma: load x[r % 2], X[r, 0];         //   and enclosing loop variables, evaluated at loop entry;\n"
    "    dve: rowmax m, x[r % 2];             //   an empty or negative range runs no iteration\n"
    "    act { sub_row y, x[r % 2], m; exp y, y; }   // per-engine block: every instruction in it runs on act\n"
    "    dve { rowsum s, y; recip s, s; mul_row y, y, s; }\n"
    "    dma: store Y[r, 0], y;               // hbm operand X[r, c]: tile (r, c) in units of the other operand's shape\n"
    "  }\n"
    "}\n";

static void test_softmax_checks(void **state) {
  (void)state;
  Run r = run(softmax);
  assert_string_equal(r.diag, "");
  Kernel *k = r.p->kernel;
  assert_string_equal(k->name, "softmax");
  assert_int_equal(k->nparams, 1);
  assert_int_equal(k->ntensors, 2);
  assert_int_equal(k->ntiles, 4);
  assert_int_equal(k->tiles[0].slots, 2);
  assert_int_equal(k->tiles[0].rows, 32);
  assert_int_equal(k->tiles[0].cols, 96);
  assert_int_equal(k->tiles[1].slots, 1);
  assert_int_equal(k->nloops, 1);
  assert_int_equal(k->ninstrs, 8);
  const Target *t = target_default();
  /* `dma:` is any queue: the load and the store go round robin to dma0, dma1 */
  const char *engines[] = {"dma0", "dve", "act", "act", "dve", "dve", "dve", "dma1"};
  const int ops[] = {BFRT_LOAD, BFRT_ROWMAX, BFRT_SUB_ROW, BFRT_EXP,
                     BFRT_ROWSUM, BFRT_RECIP, BFRT_MUL_ROW, BFRT_STORE};
  for (int i = 0; i < 8; i++) {
    Stmt *in = k->instrs[i];
    assert_int_equal(in->instr_id, i);
    assert_int_equal(in->engine, target_engine(t, engines[i]));
    assert_int_equal(in->op, ops[i]);
    assert_ptr_equal(in->parent_loop, k->loops[0]);
  }
  Stmt *load = k->instrs[0];
  assert_int_equal(load->operands[0].kind, OPND_TILE);
  assert_int_equal(load->operands[0].decl, 0);
  assert_int_equal(load->operands[0].slot->kind, EX_MOD);
  assert_int_equal(load->operands[0].slot->lhs->sym, SYM_LOOPVAR);
  assert_int_equal(load->operands[0].slot->lhs->index, 0);
  assert_int_equal(load->operands[1].kind, OPND_HBM);
  assert_int_equal(load->operands[1].row->kind, EX_NAME);
  assert_int_equal(load->operands[1].col->value, 0);
  assert_null(k->instrs[1]->operands[0].slot);
  assert_int_equal(k->tensors[0].rows->lhs->sym, SYM_PARAM);
  assert_int_equal(k->loops[0]->depth, 0);
  assert_int_equal(k->loops[0]->hi->sym, SYM_PARAM);
  done(&r);
}

/* ---- Lexer and parser. */
static void test_good_syntax(void **state) {
  (void)state;
  assert_clean("kernel empty() {}");
  assert_clean("kernel k(A: int, B: int) { sbuf t: f32[4, 4]; /* a\n multi-line * / comment */ }");
  assert_clean("kernel k() { sbuf t: f32[2, 2]; dve: fill t, 0.5; dve: fill t, -2; "
               "dve: fill t, 1e-3; dve: fill t, 7; dve: scale t, t, -1.5e+2; }");
  assert_clean("kernel k(N: int) { sbuf t[3]: f32[1, 1];\n"
               "  for i in -N .. N * 2 - (1 + N) / 3 % 2 { for j in i .. i + 1 {\n"
               "    pool { copy t[(j - 1) % 3], t[-j % 3]; } } } }");
  assert_clean("kernel k(N: int) { sbuf t: f32[1, 1]; for i in 0 .. N { act { for j in 0 .. i { "
               "fill t, 1; } } } }");
  assert_clean("kernel k() { sbuf t: f32[9223372036854775807 / 9223372036854775807, 1]; }");
}

static void test_expression_trees(void **state) {
  (void)state;
  Run r = run("kernel k(N: int) { for i in 1 + 2 * 3 .. -N / 2 - - -1 { } }");
  Stmt *loop = r.p->kernel->body;
  assert_int_equal(loop->lo->kind, EX_ADD);
  assert_int_equal(loop->lo->rhs->kind, EX_MUL);
  assert_int_equal(loop->hi->kind, EX_SUB);
  assert_int_equal(loop->hi->lhs->kind, EX_DIV);
  assert_int_equal(loop->hi->lhs->lhs->kind, EX_NEG); /* unary minus binds tighter than / */
  assert_int_equal(loop->hi->rhs->kind, EX_NEG);
  assert_int_equal(loop->hi->rhs->lhs->kind, EX_NEG);
  assert_int_equal(loop->hi->rhs->lhs->lhs->kind, EX_INT);
  int64_t params[1] = {5}, v;
  assert_int_equal(expr_eval(loop->lo, params, NULL, &v, NULL), 0);
  assert_int_equal(v, 7);
  assert_int_equal(expr_eval(loop->hi, params, NULL, &v, NULL), 0);
  assert_int_equal(v, -3 - 1); /* floor(-5 / 2) = -3, minus --1 */
  done(&r);
}

static void test_syntax_errors(void **state) {
  (void)state;
  assert_first_error("", "1:1: error: syntax error: unexpected end of file, expected 'kernel'");
  assert_first_error("kernel k() { sbuf t: f32[1, 1] }",
                     "1:32: error: syntax error: unexpected '}', expected ';'");
  assert_first_error("kernel k() {\n  dve: fill t 0;\n}",
                     "2:15: error: syntax error: unexpected integer '0'");
  assert_first_error("kernel k() { for 3 in 0 .. 1 {} }",
                     "1:18: error: syntax error: unexpected integer '3', expected identifier");
  assert_first_error("kernel k() { /* open", "1:14: error: unterminated comment");
  assert_first_error("kernel k() { @ }", "1:14: error: unexpected character '@'");
  static const char nul_comment[] = "kernel k() { // a\0b\n}";
  Run nul = run_bytes(nul_comment, sizeof nul_comment - 1);
  assert_string_equal(nul.diag, "t.bfk:1:18: error: unexpected byte 0x00 in a comment\n"
                                "  kernel k() { // a?b\n                   ^\n");
  done(&nul);
  assert_first_error("kernel k() { sbuf t: f32[99999999999999999999, 1]; }",
                     "1:26: error: integer literal does not fit in 64 bits");
  assert_first_error("kernel k() {} kernel j() {}",
                     "1:15: error: syntax error: unexpected 'kernel', expected end of file");
  assert_first_error("kernel k() { hbm in X: f32[1, 1]; for i in 0 .. 1 { } sbuf t: f32[1, 1]; }",
                     "1:55: error: syntax error: unexpected 'sbuf', expected identifier, 'for', 'if' or '}'");
  /* Recovery: three broken statements, three errors. */
  Run r = run("kernel k() {\n  dve: fill t 0;\n  dve fill t, 0;\n  act: exp t t;\n}\n");
  assert_int_equal(r.p->diag.errors, 3);
  assert_non_null(strstr(r.diag, "t.bfk:2:15:"));
  assert_non_null(strstr(r.diag, "t.bfk:3:12:"));
  assert_non_null(strstr(r.diag, "t.bfk:4:14:"));
  assert_null(r.p->kernel);
  done(&r);
}

/* ---- Every semantic check, by its exact message and position. The
 * prelude declares lines 1-9; the statement under test is line 10. */
#define PRELUDE                             \
  "kernel k(N: int) {\n"                    \
  "  hbm in X: f32[N * 32, 32];\n"          \
  "  hbm out Y: f32[N * 32, 32];\n"         \
  "  hbm inout Z: f32[32, 32];\n"           \
  "  sbuf a[2]: f32[32, 32];\n"             \
  "  sbuf b: f32[32, 32];\n"                \
  "  sbuf r: f32[32, 1];\n"                 \
  "  psum acc: f32[32, 16];\n"              \
  "  sbuf w: f32[32, 16];\n"

static void assert_stmt_error(const char *stmt, const char *want) {
  char text[1024];
  snprintf(text, sizeof text, PRELUDE "%s\n}\n", stmt);
  assert_first_error(text, want);
}

static void test_prelude_is_clean(void **state) {
  (void)state;
  assert_clean(PRELUDE "  for i in 0 .. N { dma: load a[i % 2], X[i, 0]; dve: add b, a[i % 2], b;\n"
                       "  pe: matmul acc, b, w; pe: matmul_acc acc, a[0], w; pe: transpose b, b;\n"
                       "  dve: rowsum r, b; pool: rowmax r, a[1]; act: add_row b, b, r;\n"
                       "  dma: store Y[i, 0], b; dma: load b, Z[0, 0]; dma: store Z[0, 0], b; }\n}\n");
}

static void test_name_errors(void **state) {
  (void)state;
  assert_first_error("kernel k(N: int, N: int) {}", "1:18: error: duplicate name 'N'");
  assert_reports("kernel k(N: int, N: int) {}",
                 "t.bfk:1:10: note: 'N' is first declared here, as a parameter");
  assert_first_error("kernel k() { sbuf t: f32[1, 1]; hbm in t: f32[1, 1]; }",
                     "1:40: error: duplicate name 't'");
  assert_stmt_error("  for i in 0 .. M { }", "10:17: error: undeclared name 'M'");
  assert_stmt_error("  for i in 0 .. b { }", "10:17: error: 'b' is a tile, not an integer");
  assert_stmt_error("  for N in 0 .. 2 { }", "10:7: error: loop variable 'N' shadows parameter 'N'");
  assert_stmt_error("  for X in 0 .. 2 { }", "10:7: error: loop variable 'X' shadows tensor 'X'");
  assert_stmt_error("  for i in 0 .. 2 { for i in 0 .. 2 { } }",
                    "10:25: error: loop variable 'i' shadows an enclosing loop's variable");
  assert_stmt_error("  for i in 0 .. i { }", "10:17: error: undeclared name 'i'");
  assert_stmt_error("  for i in 0 .. 2 { } dve: copy a[i], b;", "10:35: error: undeclared name 'i'");
  assert_stmt_error("  dve: copy q, b;", "10:13: error: undeclared tile or tensor 'q'");
  assert_stmt_error("  dve: copy N, b;", "10:13: error: 'N' is an integer, not a tile or tensor");
  assert_first_error("kernel k() { hbm in X: f32[M, 1]; }", "1:28: error: undeclared name 'M'");
  /* Sibling loops may reuse a name. */
  assert_clean(PRELUDE "  for i in 0 .. 2 { } for i in 0 .. 2 { } dma: store Y[0, 0], b;\n}\n");
}

static void test_engine_and_op_errors(void **state) {
  (void)state;
  assert_stmt_error("  gpu: copy b, b;",
                    "10:3: error: unknown engine 'gpu' (target trn1 has pe, act, dve, pool, dma0..dma15)");
  assert_stmt_error("  gpu { }", "10:3: error: unknown engine 'gpu' (target trn1 has pe, act, dve, pool, dma0..dma15)");
  assert_stmt_error("  dve: frob b, b;", "10:8: error: unknown op 'frob'");
  assert_stmt_error("  dve: rowmx r, b;", "10:8: error: unknown op 'rowmx'; did you mean 'rowmax'?");
  assert_stmt_error("  dve: m b, b, b;", "10:8: error: unknown op 'm'");
  assert_stmt_error("  act: gleu b, b;", "10:8: error: unknown op 'gleu'; did you mean 'gelu'?");
  assert_stmt_error("  dve: mul_cl b, b, r;", "10:8: error: unknown op 'mul_cl'; did you mean 'mul_col'?");
  /* the two forms of add: a tile on dve and pool, an immediate on act too */
  assert_stmt_error("  act: add b, b, b;", "10:8: error: engine 'act' cannot run 'add' (it runs on dve, pool); "
                                           "it can with a float immediate as operand 3");
  assert_stmt_error("  pe: add b, b, 1e-5;", "10:7: error: engine 'pe' cannot run 'add' (it runs on act, dve, pool)");
  assert_stmt_error("  act: add_col b, b, r;", "10:8: error: engine 'act' cannot run 'add_col' (it runs on dve, pool)");
  assert_stmt_error("  dve: add_col b, b, r;", "10:22: error: shape mismatch in 'add_col': 'r' is [32, 1] but the "
                                               "column operand must be [1, 32]");
  assert_stmt_error("  dev: copy b, b;", "10:3: error: unknown engine 'dev' (target trn1 has pe, act, "
                                         "dve, pool, dma0..dma15); did you mean 'dve'?");
  assert_stmt_error("  dve: exp b, b;", "10:8: error: engine 'dve' cannot run 'exp' (it runs on act)");
  assert_stmt_error("  pe: copy b, b;",
                    "10:7: error: engine 'pe' cannot run 'copy' (it runs on act, dve, pool, dma0..dma15)");
  assert_stmt_error("  copy b, b;",
                    "10:3: error: instruction 'copy' is not placed on an engine: write ENGINE: copy ... "
                    "or put it in an ENGINE { ... } block");
  assert_stmt_error("  act { dve: copy b, b; }",
                    "10:9: error: instruction placed on 'dve' inside a block of engine 'act'");
  assert_stmt_error("  act { pool { copy b, b; } }",
                    "10:9: error: engine block inside the block of engine 'act'");
  assert_stmt_error("  act { for i in 0 .. 2 { dve { } } }",
                    "10:27: error: engine block inside the block of engine 'act'");
  /* conditions: integers only, names resolved, constant zero divisors */
  assert_stmt_error("  if (N < 2 && b > 0) { dve: copy b, b; } else { }",
                    "10:16: error: 'b' is a tile, not an integer");
  assert_stmt_error("  if (N < 1 / 0 || !(M == 2)) { }", "10:11: error: division by zero");
  assert_stmt_error("  if (N < 1 || !(M == 2)) { }", "10:18: error: undeclared name 'M'");
  assert_stmt_error("  for i in 0 .. N { } if (i == 0) { }", "10:27: error: undeclared name 'i'");
  assert_stmt_error("  if (N < 2 & N > 1) { }", "10:13: error: unexpected character '&'");
  assert_stmt_error("  if (N) { }", "10:8: error: syntax error: unexpected ')'");
  assert_stmt_error("  act { if (N < 2) { dve: copy b, b; } }",
                    "10:22: error: instruction placed on 'dve' inside a block of engine 'act'");
  /* The same engine inside its own block is fine. */
  assert_clean(PRELUDE "  act { act: copy b, b; exp b, b; } dma: store Y[0, 0], b;\n}\n");
}

static void test_operand_errors(void **state) {
  (void)state;
  assert_stmt_error("  dve: add b, b;", "10:8: error: 'add' takes 3 operands, not 2");
  assert_stmt_error("  dve: recip;", "10:8: error: 'recip' takes 2 operands, not 0");
  assert_stmt_error("  dma: load b, a[0];",
                    "10:16: error: operand 2 of 'load' must be an hbm tile X[ROW, COL], but this is a tile");
  assert_stmt_error("  dve: copy b, X[0, 0];",
                    "10:16: error: operand 2 of 'copy' must be a tile, but this is an hbm tensor");
  assert_stmt_error("  dve: fill b, b;",
                    "10:16: error: operand 2 of 'fill' must be a float immediate, but this is a tile");
  assert_stmt_error("  dve: copy b, 1.5;",
                    "10:16: error: operand 2 of 'copy' must be a tile, but this is an immediate");
  assert_stmt_error("  dve: scale b, b, 1e39;", "10:20: error: immediate 1e39 is out of range for f32");
  assert_stmt_error("  dve: copy b, a;", "10:16: error: tile 'a' has slots: write a[SLOT]");
  assert_stmt_error("  dve: copy b[0], b;", "10:13: error: tile 'b' has no slots: write b without an index");
  assert_stmt_error("  dve: copy a[0, 1], b;", "10:13: error: tile 'a' takes one index (a slot), not 2");
  assert_stmt_error("  dve: copy a[2], b;", "10:15: error: slot 2 is out of range: tile 'a' has slots 0 .. 1");
  assert_stmt_error("  dve: copy a[-1], b;",
                    "10:15: error: slot -1 is out of range: tile 'a' has slots 0 .. 1");
  assert_stmt_error("  dma: load b, X[0];", "10:16: error: hbm tensor 'X' needs two indices: X[ROW, COL]");
  assert_stmt_error("  dma: store X[0, 0], b;", "10:14: error: store to input tensor 'X'");
  assert_reports(PRELUDE "  dma: store X[0, 0], b;\n}\n", "t.bfk:2:10: note: 'X' is declared hbm in here");
  assert_stmt_error("  dma: load b, Y[0, 0];", "10:16: error: load from output tensor 'Y'");
  /* A slot that is not constant is checked at run time, not here. */
  assert_clean(PRELUDE "  for i in 0 .. N { dve: copy a[i], b; dve: copy a[(i - 1) % 2], b; } dma: store Y[0, 0], b;\n}\n");
}

static void test_shape_errors(void **state) {
  (void)state;
  assert_stmt_error("  dve: add b, b, r;",
                    "10:18: error: shape mismatch in 'add': 'r' is [32, 1] but 'b' is [32, 32]");
  assert_stmt_error("  dve: copy w, b;",
                    "10:16: error: shape mismatch in 'copy': 'b' is [32, 32] but 'w' is [32, 16]");
  assert_stmt_error("  pe: matmul acc, w, b;",
                    "10:22: error: inner dimensions differ in 'matmul': 'w' is [32, 16] and 'b' is [32, 32]");
  assert_stmt_error("  pe: matmul acc, b, b;",
                    "10:14: error: shape mismatch in 'matmul': 'acc' is [32, 16] but the product is [32, 32]");
  assert_stmt_error("  pe: transpose w, w;",
                    "10:17: error: shape mismatch in 'transpose': 'w' is [32, 16] but the transpose is [16, 32]");
  assert_stmt_error("  dve: rowsum w, b;",
                    "10:15: error: shape mismatch in 'rowsum': 'w' is [32, 16] but the row reduction is [32, 1]");
  assert_stmt_error("  dve: mul_row b, w, r;",
                    "10:19: error: shape mismatch in 'mul_row': 'w' is [32, 16] but the destination is [32, 32]");
  assert_stmt_error("  dve: sub_row b, b, b;",
                    "10:22: error: shape mismatch in 'sub_row': 'b' is [32, 32] but the row operand must be [32, 1]");
  /* load and store: only the tile has a shape. */
  assert_clean(PRELUDE "  dma: load w, X[0, 0]; dve: fill r, 0; dma: store Y[0, 0], b;\n}\n");
}

static void test_declaration_errors(void **state) {
  (void)state;
  assert_first_error("kernel k() { sbuf t: f32[0, 1]; }",
                     "1:26: error: a tile dimension must be positive, not 0");
  assert_first_error("kernel k() { sbuf t: f32[1, -4]; }",
                     "1:29: error: a tile dimension must be positive, not -4");
  assert_first_error("kernel k() { sbuf t[0]: f32[1, 1]; }",
                     "1:21: error: a slot count must be positive, not 0");
  assert_first_error("kernel k(N: int) { sbuf t: f32[N, 1]; }",
                     "1:32: error: a tile dimension must be a constant, but uses parameter 'N'");
  assert_first_error("kernel k(N: int) { sbuf t[N]: f32[1, 1]; }",
                     "1:27: error: a slot count must be a constant, but uses parameter 'N'");
  assert_first_error("kernel k() { sbuf t: f32[65536, 65536]; }",
                     "1:19: error: tile 't' is too large: more than 67108864 elements");
  assert_first_error("kernel k() { hbm in X: f32[0, 1]; }",
                     "1:28: error: a tensor dimension must be positive, not 0");
  assert_first_error("kernel k() { sbuf t: f32[4 / (2 - 2), 1]; }", "1:26: error: division by zero");
  assert_first_error("kernel k(N: int) { hbm in X: f32[N % 0, 1]; }", "1:34: error: modulo by zero");
  assert_stmt_error("  for i in 0 .. N / (1 - 1) { }", "10:17: error: division by zero");
  assert_stmt_error("  dve: copy a[N % (3 - 3)], b;", "10:15: error: modulo by zero");
  /* A non-constant divisor is the run time's business. */
  assert_clean(PRELUDE "  for i in 1 .. N { dve: copy a[N % i], b; } dma: store Y[0, 0], b;\n}\n");
}

static void test_several_errors(void **state) {
  (void)state;
  Run r = run(PRELUDE "  dve: exp b, b;\n  dve: copy q, b;\n  act: copy w, b;\n}\n");
  assert_int_equal(r.p->diag.errors, 3);
  assert_non_null(strstr(r.diag, "t.bfk:10:8: error:"));
  assert_non_null(strstr(r.diag, "t.bfk:11:13: error:"));
  assert_non_null(strstr(r.diag, "t.bfk:12:16: error:"));
  done(&r);
}

/* ---- Diagnostics themselves. */
static void test_caret_line(void **state) {
  (void)state;
  Run r = run("kernel k() {\n\tdve:\tfrob;\n}\n");
  assert_string_equal(r.diag, "t.bfk:2:7: error: unknown op 'frob'\n"
                              "  \tdve:\tfrob;\n"
                              "  \t    \t^~~~\n");
  done(&r);
  static const char nul[] = "kernel k() {\0 }";
  r = run_bytes(nul, sizeof nul - 1);
  assert_string_equal(r.diag, "t.bfk:1:13: error: unexpected byte 0x00\n"
                              "  kernel k() {? }\n"
                              "              ^\n");
  done(&r);
}

static void test_error_limit(void **state) {
  (void)state;
  char text[4096] = PRELUDE;
  for (int i = 0; i < 30; i++) strcat(text, "  dve: exp b, b;\n");
  strcat(text, "}\n");
  Run r = run(text);
  assert_int_equal(r.p->diag.errors, 30);
  assert_non_null(strstr(r.diag, "t.bfk:29:8: error:"));
  assert_null(strstr(r.diag, "t.bfk:30:8: error:"));
  assert_non_null(strstr(r.diag, "t.bfk: too many errors; not reporting the rest\n"));
  done(&r);
}

static void test_source_position(void **state) {
  (void)state;
  Source src = {"x", "ab\ncd\n\nef", 9, NULL, 0};
  int line, col;
  source_position(&src, 4, &line, &col);
  assert_int_equal(line, 2);
  assert_int_equal(col, 2);
  source_position(&src, 8, &line, &col);
  assert_int_equal(line, 4);
  assert_int_equal(col, 2);
  Program *p = program_new("x", src.text, src.len, NULL, stderr);
  assert_int_equal(p->src.nlines, 4);
  assert_int_equal(source_line(&p->src, 8), 4);
  assert_int_equal(source_line(&p->src, 6), 3);
  assert_int_equal(source_line(&p->src, 0), 1);
  program_free(p);
}

/* ---- expr_eval: floor division and modulo, and zero divisors. */
static int64_t eval2(ExprKind kind, int64_t a, int64_t b, int *status) {
  Arena *arena = arena_new();
  Span s = {0, 0};
  Expr *e = expr_binary(arena, kind, expr_int(arena, s, a), expr_int(arena, s, b));
  int64_t v = 0;
  const Expr *bad = NULL;
  *status = expr_eval(e, NULL, NULL, &v, &bad);
  if (*status) assert_ptr_equal(bad, e);
  arena_free(arena);
  return v;
}

static void test_expr_eval(void **state) {
  (void)state;
  int st;
  assert_int_equal(eval2(EX_DIV, 7, 2, &st), 3);
  assert_int_equal(eval2(EX_DIV, -7, 2, &st), -4);
  assert_int_equal(eval2(EX_DIV, 7, -2, &st), -4);
  assert_int_equal(eval2(EX_DIV, -7, -2, &st), 3);
  assert_int_equal(eval2(EX_MOD, -1, 2, &st), 1);
  assert_int_equal(eval2(EX_MOD, 7, -2, &st), -1);
  assert_int_equal(eval2(EX_MOD, -7, -2, &st), -1);
  assert_int_equal(eval2(EX_MOD, 6, 3, &st), 0);
  assert_int_equal(eval2(EX_DIV, INT64_MIN, -1, &st), INT64_MIN); /* wraps, never traps */
  assert_int_equal(eval2(EX_MOD, INT64_MIN, -1, &st), 0);
  assert_int_equal(eval2(EX_MUL, INT64_MAX, 2, &st), -2);
  assert_int_equal(st, 0);
  eval2(EX_DIV, 1, 0, &st);
  assert_int_equal(st, -1);
  eval2(EX_MOD, 1, 0, &st);
  assert_int_equal(st, -1);
}

/* ---- Ops and targets. */
static void test_ops_and_target(void **state) {
  (void)state;
  const Target *t = target_default();
  assert_string_equal(t->name, "trn1");
  assert_int_equal(t->nengines, 20); /* pe act dve pool, 16 DMA queues */
  assert_int_equal(target_engine(t, "pool"), 3);
  assert_int_equal(target_engine(t, "dma0"), 4);
  assert_int_equal(target_engine(t, "dma15"), 19);
  assert_int_equal(target_engine(t, "dma16"), -1);
  assert_int_equal(target_engine(t, "dma"), 4); /* any queue: the first until assign_queues */
  assert_true(target_any_queue(t, "dma"));
  assert_false(target_any_queue(t, "dma0"));
  assert_int_equal(target_nqueues(t), 16);
  assert_int_equal(target_queue(t, 15), 19);
  assert_int_equal(target_queue(t, 16), -1);
  assert_int_equal(op_lookup("matmul_acc"), BFRT_MATMUL_ACC);
  assert_int_equal(op_lookup("nope"), -1);
  assert_string_equal(op_info(BFRT_LOAD)->operands, "TH");
  assert_string_equal(op_info(BFRT_STORE)->operands, "HT");
  assert_string_equal(op_info(BFRT_SCALE)->operands, "TTF");
  assert_int_equal(op_info(BFRT_ROWSUM)->shape, SHAPE_ROWREDUCE);
  assert_true(target_can_run(t, target_engine(t, "pe"), BFRT_MATMUL));
  assert_false(target_can_run(t, target_engine(t, "pe"), BFRT_COPY));
  assert_true(target_can_run(t, target_engine(t, "dma"), BFRT_COPY));
  assert_true(target_can_run(t, target_engine(t, "act"), BFRT_RECIP));
  assert_false(target_can_run(t, target_engine(t, "pool"), BFRT_RECIP));
  assert_false(target_can_run(t, 99, BFRT_COPY));
}

/* ---- fmt. */
static char *format_bytes(const char *text, size_t len) {
  Run r = run_bytes(text, len);
  assert_int_equal(r.p->diag.errors, 0);
  char *out;
  size_t out_len;
  FILE *f = open_memstream(&out, &out_len);
  fmt(r.p, f);
  fclose(f);
  done(&r);
  return out;
}

static char *format(const char *text) { return format_bytes(text, strlen(text)); }

/* fmt(text) == want, and fmt of that is the same again. */
static void assert_formats(const char *text, const char *want) {
  char *once = format(text);
  assert_string_equal(once, want);
  char *twice = format(once);
  assert_string_equal(twice, once);
  free(once);
  free(twice);
}

static void test_fmt(void **state) {
  (void)state;
  assert_formats("kernel   k ( N:int,M : int ){hbm inout Z:f32[(N*32),M];psum p [ 2 ]:f32[4,4];"
                 "for i in 0..N{dve:copy p[i%2],p[(i+1)%2];act{exp p[0],p[1];fill p[1],-1e-3;}}"
                 "dma{}}",
                 "kernel k(N: int, M: int) {\n"
                 "  hbm inout Z: f32[N * 32, M];\n"
                 "  psum p[2]: f32[4, 4];\n"
                 "\n"
                 "  for i in 0 .. N {\n"
                 "    dve: copy p[i % 2], p[(i + 1) % 2];\n"
                 "    act {\n"
                 "      exp p[0], p[1];\n"
                 "      fill p[1], -1e-3;\n"
                 "    }\n"
                 "  }\n"
                 "  dma {\n"
                 "  }\n"
                 "}\n");
}

/* Comments stay where they were, by position; runs of blank lines become one. */
static void test_fmt_comments(void **state) {
  (void)state;
  assert_formats("// head\n\n\n// kernel\nkernel k(N: int) { // params\n"
                 "  sbuf a: f32[1, 1]; /* a */ sbuf b: f32[1, 1];\n"
                 "  // before the loop\n"
                 "  for i in 0 .. N { // header\n"
                 "    act { exp a, a; exp b, b; } // after the block\n\n\n"
                 "    dve: copy a, /* inside */ b; // trailing (its column kept)\n"
                 "    // last in the loop\n"
                 "  }\n"
                 "  // last in the kernel\n"
                 "} // after\n/* end */\n",
                 "// head\n"
                 "\n"
                 "// kernel\n"
                 "kernel k(N: int) {\n"
                 "  // params\n"
                 "  sbuf a: f32[1, 1];  /* a */\n"
                 "  sbuf b: f32[1, 1];\n"
                 "\n"
                 "  // before the loop\n"
                 "  for i in 0 .. N {\n"
                 "    // header\n"
                 "    act {\n"
                 "      exp a, a;\n"
                 "      exp b, b;\n"
                 "    }  // after the block\n"
                 "\n"
                 "    /* inside */\n"
                 "    dve: copy a, b;              // trailing (its column kept)\n"
                 "    // last in the loop\n"
                 "  }\n"
                 "  // last in the kernel\n"
                 "}  // after\n"
                 "/* end */\n");
}

static void assert_fmt(const char *src, const char *want) {
  Program *p = program_new("t.bfk", src, (uint32_t)strlen(src), NULL, stderr);
  parse(p);
  assert_non_null(p->kernel);
  char *out;
  size_t len;
  FILE *f = open_memstream(&out, &len);
  fmt(p, f);
  fclose(f);
  assert_string_equal(out, want);
  free(out);
  program_free(p);
}

/* Conditionals print canonically: an empty else dropped, `else if` kept,
 * only the parentheses && over || and ! need. */
static void test_fmt_if(void **state) {
  (void)state;
  assert_fmt("kernel k(N: int) { if(N>=2){act:exp t,t;}else{} }",
             "kernel k(N: int) {\n  if (N >= 2) {\n    act: exp t, t;\n  }\n}\n");
  assert_fmt("kernel k(N: int) { if(((N<1))||N>2&&!(N==3)){}else if(!(N<1||N>2)&&(N!=0)){}else{} }",
             "kernel k(N: int) {\n  if (N < 1 || N > 2 && !(N == 3)) {\n  } else if (!(N < 1 || N > 2) && N != 0) {\n  }\n}\n");
  assert_fmt("kernel k(N: int) { if((N<1||N>2)&&(N<0||N>3)){}else{if(N<1){}} }",
             "kernel k(N: int) {\n  if ((N < 1 || N > 2) && (N < 0 || N > 3)) {\n  } else {\n    if (N < 1) {\n    }\n  }\n}\n");
}

/* Parentheses: exactly those precedence and left-associativity need. */
static void test_fmt_parentheses(void **state) {
  (void)state;
  const char *cases[][2] = {
      {"(a + b) * c", "(a + b) * c"}, {"a + (b * c)", "a + b * c"},   {"(a - b) - c", "a - b - c"},
      {"a - (b - c)", "a - (b - c)"}, {"a / (b * c)", "a / (b * c)"}, {"-(a + b)", "-(a + b)"},
      {"- - a", "-(-a)"},             {"a - -b", "a - -b"},           {"-a * b", "-a * b"},
      {"-(a * b)", "-(a * b)"},       {"((a))", "a"},                 {"a % b % c", "a % b % c"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[256], want[512];
    snprintf(text, sizeof text, "kernel k(a: int, b: int, c: int) { for i in 0 .. %s { } }",
             cases[i][0]);
    snprintf(want, sizeof want, "kernel k(a: int, b: int, c: int) {\n  for i in 0 .. %s {\n  }\n}\n",
             cases[i][1]);
    assert_formats(text, want);
  }
}

static void test_fmt_softmax(void **state) {
  (void)state;
  char *once = format(softmax);
  assert_non_null(strstr(once, "// comments: // to end of line, and /* ... */\nkernel softmax(R: int) {\n"
                               "  // parameters: int scalars, known only at run time\n"
                               "  hbm in X: f32[R * 32, 96];             // off-chip tensors:"));
  assert_non_null(strstr(once, "  sbuf s: f32[32, 1];\n\n  for r in 0 .. R {\n    // half-open;"));
  assert_non_null(strstr(once, "    act {\n      sub_row y, x[r % 2], m;\n      exp y, y;\n"
                               "    }  // per-engine block: every instruction in it runs on act\n"));
  char *twice = format(once);
  assert_string_equal(once, twice);
  free(once);
  free(twice);
}

/* ---- Pathological inputs: no crash, no hang, a positioned error. */
static char *nested_loops(int depth) {
  size_t cap = (size_t)depth * 40 + 200, n = 0;
  char *text = malloc(cap);
  n += (size_t)sprintf(text + n, "kernel k(N: int) {\n  sbuf t: f32[1, 1];\n");
  for (int i = 0; i < depth; i++) n += (size_t)sprintf(text + n, "for i%d in 0 .. N {\n", i);
  n += (size_t)sprintf(text + n, "dve: fill t, 0;\n");
  for (int i = 0; i < depth; i++) text[n++] = '}';
  strcpy(text + n, "\n}\n");
  return text;
}

static void test_nesting_limit(void **state) {
  (void)state;
  char *text = nested_loops(MAX_NESTING);
  Run r = run(text);
  assert_int_equal(r.p->diag.errors, 0);
  assert_int_equal(r.p->kernel->nloops, MAX_NESTING);
  assert_int_equal(r.p->kernel->instrs[0]->parent_loop->depth, MAX_NESTING - 1);
  done(&r);
  free(text);
  int depths[] = {MAX_NESTING + 1, 20000, 100000};
  for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
    text = nested_loops(depths[i]);
    r = run(text);
    assert_int_equal(r.p->diag.errors, 1);
    assert_string_equal(r.diag, "t.bfk:203:20: error: nested too deeply: more than 200 levels of "
                                "loops and blocks\n  for i200 in 0 .. N {\n                     ^\n");
    assert_null(r.p->kernel);
    done(&r);
    free(text);
  }
}

/* One block of n copies of piece between head and tail. */
static char *repeat(const char *head, const char *piece, size_t n, const char *tail) {
  size_t len = strlen(piece);
  char *text = malloc(strlen(head) + len * n + strlen(tail) + 1);
  char *p = stpcpy(text, head);
  for (size_t i = 0; i < n; i++) p = stpcpy(p, piece);
  strcpy(p, tail);
  return text;
}

static void test_deep_expressions(void **state) {
  (void)state;
  char *open = repeat("kernel k() { sbuf t: f32[", "(", 20000, "1");
  char *text = repeat(open, ")", 20000, ", 1]; }");
  assert_first_error(text, "1:1025: error: nested too deeply: more than 1000 levels of parentheses and brackets");
  free(open);
  free(text);
  text = repeat("kernel k() { sbuf t: f32[", "-", 1000000, "1, 1]; }");
  assert_first_error(text, "1:999026: error: expression too deep: more than 1000 levels (each operator and each pair of parentheses is a level: a + b + c has two)");
  free(text);
  text = repeat("kernel k() { sbuf t: f32[1", " + 1", 1000000, ", 1]; }");
  assert_first_error(text, "1:26: error: expression too deep: more than 1000 levels (each operator and each pair of parentheses is a level: a + b + c has two)");
  free(text);
  text = repeat("kernel k() { sbuf t: f32[1, 1", " + 1", MAX_EXPR_DEPTH / 2, "]; }");
  assert_clean(text);
  free(text);
}

static void test_junk(void **state) {
  (void)state;
  static const char nuls[8] = {0};
  Run r = run_bytes(nuls, sizeof nuls);
  assert_string_equal(r.diag, "t.bfk:1:1: error: unexpected byte 0x00\n  ????????\n  ^~~~~~~~\n"
                              "t.bfk:1:9: error: syntax error: unexpected end of file, expected 'kernel'\n"
                              "  ????????\n          ^\n");
  done(&r);
  size_t n = 1 << 20;
  char *junk = malloc(n);
  uint32_t x = 12345;
  for (size_t i = 0; i < n; i++) junk[i] = (char)((x = x * 1103515245 + 12345) >> 16);
  r = run_bytes(junk, n);
  assert_true(r.p->diag.errors > 0);
  assert_null(r.p->kernel);
  done(&r);
  memcpy(junk, "kernel k() {", 12); /* junk inside a kernel body */
  r = run_bytes(junk, n);
  assert_true(r.p->diag.errors > 0);
  done(&r);
  free(junk);
}

static void test_long_identifier(void **state) {
  (void)state;
  char *name = repeat("", "a", 100000, "");
  char *text = malloc(4 * 100000 + 100);
  sprintf(text, "kernel k() {\n  sbuf %s: f32[1, 1];\n  dve: fill %s, 0;\n  dve: fill %sb, 0;\n}\n", name,
          name, name);
  Run r = run(text);
  assert_int_equal(r.p->diag.errors, 1);
  assert_non_null(strstr(r.diag, "t.bfk:4:13: error: undeclared tile or tensor 'aaaa"));
  assert_true(r.diag_len < 2000); /* the message and the line are cut, not 100,000 bytes */
  done(&r);
  free(text);
  free(name);
}

static void test_huge_kernel(void **state) {
  (void)state;
  const char *head = "kernel big(N: int) {\n  hbm in X: f32[N * 32, 32];\n  hbm out Y: f32[N * 32, 32];\n"
                     "  sbuf a[2]: f32[32, 32];\n  sbuf b: f32[32, 32];\n";
  const char *piece = "  for i in 0 .. N { dma: load a[i % 2], X[i, 0]; dve: add b, a[i % 2], b; "
                      "act: exp b, b; dma: store Y[i, 0], b; }\n";
  size_t n = 5000000 / strlen(piece) + 1;
  char *text = repeat(head, piece, n, "}\n");
  assert_true(strlen(text) > 5000000);
  Run r = run(text);
  assert_int_equal(r.p->diag.errors, 0);
  assert_int_equal(r.p->kernel->ninstrs, (int)(4 * n));
  assert_int_equal(r.p->kernel->nloops, (int)n);
  assert_int_equal(r.p->kernel->instrs[4 * n - 1]->instr_id, (int)(4 * n - 1));
  done(&r);
  free(text);
}

/* Thousands of random edits of the softmax kernel (deterministic): none
 * crashes, every one that still checks formats and round-trips. */
static void test_random_edits(void **state) {
  (void)state;
  static const char alphabet[] = "{}[]();:,.-+*/%<>=!0123456789 \n\tabxyz_\0\xff";
  uint32_t seed = 1;
  int clean = 0;
  for (int round = 0; round < 3000; round++) {
    char text[sizeof softmax + 16];
    size_t len = sizeof softmax - 1;
    memcpy(text, softmax, len);
    for (int edit = 0; edit < 1 + round % 3; edit++) {
      seed = seed * 1103515245 + 12345;
      size_t at = (seed >> 8) % len;
      char c = alphabet[(seed >> 20) % (sizeof alphabet - 1)];
      if (seed & 1) text[at] = c;
      else memmove(text + at, text + at + 1, len-- - at - 1);
    }
    Run r = run_bytes(text, len);
    if (!r.p->diag.errors) {
      clean++;
      char *once = format_bytes(text, len);
      char *twice = format(once);
      assert_string_equal(once, twice);
      free(once);
      free(twice);
    }
    done(&r);
  }
  assert_true(clean > 0);
}

/* The warnings of the read-before-write check for a kernel body (over
 * tiles a, b: f32[2, 2] and s[2]: f32[2, 2], parameter N), as the command
 * line's programs get them. */
static int unwritten_warnings(const char *body) {
  char text[2048];
  snprintf(text, sizeof text,
           "kernel k(N: int) {\n  sbuf a: f32[2, 2];\n  sbuf b: f32[2, 2];\n  sbuf s[2]: f32[2, 2];\n%s}\n", body);
  char *diag = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&diag, &len);
  Program *p = program_new("t.bfk", text, strlen(text), NULL, out);
  p->diag.warn = 1;
  parse(p);
  if (!p->diag.errors) check(p);
  fclose(out);
  assert_int_equal(p->diag.errors, 0);
  int warnings = p->diag.warnings;
  if (warnings) assert_non_null(strstr(diag, "warning: "));
  program_free(p);
  free(diag);
  return warnings;
}

static void test_reads_before_writes(void **state) {
  (void)state;
  /* straight-line: both orders, and a branch that may have written */
  assert_int_equal(unwritten_warnings("  dve: copy a, b;\n  dve: fill b, 1;\n"), 1);
  assert_int_equal(unwritten_warnings("  dve: fill b, 1;\n  dve: copy a, b;\n"), 0);
  assert_int_equal(unwritten_warnings("  if (N > 1) { dve: fill b, 1; }\n  dve: copy a, b;\n"), 0);
  assert_int_equal(unwritten_warnings("  if (N > 1) { dve: copy a, b; } else { dve: fill b, 1; }\n"), 1);
  /* a loop's first iteration; a read under a conditional sees earlier iterations */
  assert_int_equal(unwritten_warnings("  for i in 0 .. N { dve: copy a, b; dve: fill b, 1; }\n"), 1);
  assert_int_equal(unwritten_warnings("  for i in 0 .. N { if (i > 0) { dve: copy a, b; } dve: fill b, 1; }\n"), 0);
  /* an inner loop after which the outer body writes: an earlier outer iteration may have */
  assert_int_equal(unwritten_warnings("  for i in 0 .. N { for j in 0 .. 2 { dve: copy a, b; } dve: fill b, 1; }\n"), 0);
  assert_int_equal(unwritten_warnings("  for i in 0 .. N { for j in 0 .. 2 { dve: copy a, b; dve: fill b, 1; } }\n"), 1);
  /* slots: constant ones apart, a run-time one may be any */
  assert_int_equal(unwritten_warnings("  dve: fill s[0], 1;\n  dve: copy a, s[1];\n  dve: copy b, a;\n"), 1);
  assert_int_equal(unwritten_warnings("  for i in 0 .. N { dve: fill s[i % 2], 1; }\n  dve: copy a, s[1];\n"), 0);
  assert_int_equal(unwritten_warnings("  dve: fill s[0], 1;\n  for i in 0 .. N { dve: copy a, s[i % 2]; }\n"), 0);
  assert_int_equal(unwritten_warnings("  for i in 0 .. N { dve: copy a, s[i % 2]; }\n  dve: fill s[0], 1;\n"), 1);
  /* an op that reads and writes its destination reads it first */
  assert_int_equal(unwritten_warnings("  dve: add a, a, a;\n"), 1);
  /* programs that do not ask for warnings get none */
  Run r = run("kernel k() {\n  sbuf a: f32[2, 2];\n  sbuf b: f32[2, 2];\n  dve: copy a, b;\n}\n");
  assert_int_equal(r.p->diag.warnings, 0);
  assert_int_equal(r.diag_len, 0);
  done(&r);
}

/* A gather's rows: the run of its i32 tensor resolved (which tensor, which
 * axis, how long) and read for each partition, down a column or along a
 * row; an index element outside the index tensor is EVAL_OUT_OF_RANGE. */
static void test_gather(void **state) {
  (void)state;
  Run r = run("kernel k(N: int) {\n  hbm in X: f32[N, 5];\n  hbm in IDX: i32[3, 2];\n  hbm out Y: f32[N, 5];\n"
              "  sbuf x: f32[2, 5];\n  sbuf z: f32[3, 4];\n  for t in 0 .. 3 {\n"
              "    dma: load x, X[IDX[t, 0:2], :];\n    dma: load z, X[IDX[:, t - 1], 1:5];\n"
              "    dma: store Y[IDX[t, :], 0:5], x;\n  }\n}\n");
  if (r.p->diag.errors) fprintf(stderr, "%s", r.diag);
  assert_int_equal(r.p->diag.errors, 0);
  const Kernel *k = r.p->kernel;
  const Gather *a = k->instrs[0]->operands[1].gather, *b = k->instrs[1]->operands[1].gather,
               *c = k->instrs[2]->operands[0].gather;
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(c);
  assert_int_equal(a->tensor, 1);
  assert_int_equal(a->axis, 1);
  assert_int_equal(a->n, 2);
  assert_int_equal(b->axis, 0);
  assert_int_equal(b->n, 3);
  assert_int_equal(c->n, 2);
  assert_int_equal(k->instrs[0]->operands[1].ext[0], 2);
  int32_t idx[6] = {10, 11, 20, 21, 30, 31}; /* IDX[r, c] = 10 (r + 1) + c */
  const void *ints[4] = {NULL, idx, NULL, NULL};
  const int64_t shape[4][2] = {{0, 0}, {3, 2}, {0, 0}, {0, 0}};
  int64_t params[1] = {40}, loopvars[1] = {1}, row;
  EvalEnv env = {params, loopvars, ints, shape, {0, 0}};
  const Expr *bad = NULL;
  assert_int_equal(gather_row_eval(a, &env, 1, &row, &bad), 0);
  assert_int_equal(row, 21); /* IDX[1, 0 + 1] */
  assert_int_equal(gather_row_eval(b, &env, 2, &row, &bad), 0);
  assert_int_equal(row, 30); /* IDX[0 + 2, 1 - 1] */
  loopvars[0] = 2;           /* IDX[t, 0 + 2] is outside IDX */
  assert_int_equal(gather_row_eval(a, &env, 2, &row, &bad), EVAL_OUT_OF_RANGE);
  assert_int_equal(env.bad_at[0], 2);
  assert_int_equal(env.bad_at[1], 2);
  done(&r);
  assert_first_error("kernel k() {\n  hbm in X: f32[4, 4];\n  hbm in I: i32[1, 4];\n  sbuf x: f32[2, 4];\n"
                     "  dma: load x, X[I[0, 0:4], :];\n}\n",
                     "5:18: error: a gather or scatter moves one row a partition: I[0, 0:4] gives 4 indices, and 'x' has 2 partitions");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gather),
      cmocka_unit_test(test_softmax_checks),      cmocka_unit_test(test_good_syntax),
      cmocka_unit_test(test_expression_trees),    cmocka_unit_test(test_syntax_errors),
      cmocka_unit_test(test_prelude_is_clean),    cmocka_unit_test(test_name_errors),
      cmocka_unit_test(test_engine_and_op_errors), cmocka_unit_test(test_operand_errors),
      cmocka_unit_test(test_shape_errors),        cmocka_unit_test(test_declaration_errors),
      cmocka_unit_test(test_several_errors),      cmocka_unit_test(test_caret_line),
      cmocka_unit_test(test_error_limit),         cmocka_unit_test(test_source_position),
      cmocka_unit_test(test_expr_eval),           cmocka_unit_test(test_ops_and_target),
      cmocka_unit_test(test_fmt),                 cmocka_unit_test(test_fmt_if),
      cmocka_unit_test(test_fmt_comments),
      cmocka_unit_test(test_fmt_parentheses),
      cmocka_unit_test(test_fmt_softmax),         cmocka_unit_test(test_nesting_limit),
      cmocka_unit_test(test_deep_expressions),    cmocka_unit_test(test_junk),
      cmocka_unit_test(test_long_identifier),     cmocka_unit_test(test_huge_kernel),
      cmocka_unit_test(test_random_edits),        cmocka_unit_test(test_reads_before_writes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
