/* test_oracle.c: the exactness oracle on small kernels whose answers are
 * computed by hand: the needs of the sequential walk (slots reused at
 * distance 2, triangular loops, zero-trip loops, overlapping hbm regions),
 * and the happens-before judgement of hand-written IR streams (transitive
 * coverage, redundant, early, late and explained waits, barriers that reset
 * counters, deadlocks, stream mismatches). The IR is written here by hand,
 * not by the transform, so these tests pin the oracle alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "frontend/program.h"
#include "transform/oracle.h"

static Program *compile_on(const Target *target, const char *text) {
  Program *p = program_new("test.bfk", text, strlen(text), target, stderr);
  parse(p);
  assert_int_equal(p->diag.errors, 0);
  check(p);
  assert_int_equal(p->diag.errors, 0);
  return p;
}

static Program *compile(const char *text) { return compile_on(target_default(), text); }

static int engine(const Program *p, const char *name) {
  int e = target_engine(p->target, name);
  assert_true(e >= 0);
  return e;
}

static Oracle *walk(Program *p, int64_t n) {
  int64_t *params = ARENA_NEW(p->arena, int64_t);
  *params = n;
  Oracle *o = oracle_new(p, params);
  assert_non_null(o);
  return o;
}

/* ---- The sequential walk. */

static const char war_kernel[] =
    "kernel war(N: int) {\n"
    "  hbm in X: f32[N * 4, 4];\n"
    "  sbuf x[2]: f32[4, 4];\n"
    "  sbuf y: f32[4, 4];\n"
    "  for i in 0 .. N {\n"
    "    dma: load x[i % 2], X[i, 0];\n"
    "    act: exp y, x[i % 2];\n"
    "  }\n"
    "}\n";

/* load i overwrites the slot exp i - 2 read: WAR at distance 2. */
static void test_need_war_distance_two(void **state) {
  (void)state;
  Program *p = compile(war_kernel);
  Oracle *o = walk(p, 4);
  int dma = engine(p, "dma"), act = engine(p, "act");
  assert_int_equal(oracle_instances(o, dma), 4);
  assert_int_equal(oracle_instances(o, act), 4);
  const int64_t war[] = {0, 0, 1, 2};
  for (int k = 1; k <= 4; k++) {
    assert_int_equal(oracle_need(o, dma, k, act), war[k - 1]);
    assert_int_equal(oracle_need(o, act, k, dma), k); /* RAW on the load of the same i */
    assert_int_equal(oracle_need(o, act, k, engine(p, "pe")), 0);
  }
  program_free(p);
}

static const char tri_kernel[] =
    "kernel tri(N: int) {\n"
    "  hbm in X: f32[N * 4, 4];\n"
    "  sbuf a: f32[4, 4];\n"
    "  sbuf b: f32[4, 4];\n"
    "  for i in 0 .. N {\n"
    "    for j in 0 .. i + 1 {\n"
    "      dma: load a, X[j, 0];\n"
    "    }\n"
    "    act: exp b, a;\n"
    "  }\n"
    "}\n";

/* exp i needs the last load of row i: (i+1)(i+2)/2, not affine in i. */
static void test_need_triangular(void **state) {
  (void)state;
  Program *p = compile(tri_kernel);
  Oracle *o = walk(p, 4);
  int dma = engine(p, "dma"), act = engine(p, "act");
  assert_int_equal(oracle_instances(o, dma), 10);
  const int64_t raw[] = {1, 3, 6, 10};
  for (int k = 1; k <= 4; k++) assert_int_equal(oracle_need(o, act, k, dma), raw[k - 1]);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j <= i; j++) /* load (i, j) overwrites what exp i - 1 read */
      assert_int_equal(oracle_need(o, dma, i * (i + 1) / 2 + j + 1, act), i);
  program_free(p);
}

static const char zero_trip_kernel[] =
    "kernel zt(N: int) {\n"
    "  hbm in X: f32[4, 4];\n"
    "  sbuf a: f32[4, 4];\n"
    "  sbuf b: f32[4, 4];\n"
    "  dma: load a, X[0, 0];\n"
    "  for i in 0 .. N {\n"
    "    act: exp a, a;\n"
    "  }\n"
    "  dve: copy b, a;\n"
    "}\n";

static void test_need_zero_trip(void **state) {
  (void)state;
  Program *p = compile(zero_trip_kernel);
  int dma = engine(p, "dma"), act = engine(p, "act"), dve = engine(p, "dve");
  Oracle *none = walk(p, 0);
  assert_int_equal(oracle_instances(none, act), 0);
  assert_int_equal(oracle_need(none, dve, 1, dma), 1);
  assert_int_equal(oracle_need(none, dve, 1, act), 0);
  Oracle *three = walk(p, 3);
  assert_int_equal(oracle_need(three, act, 1, dma), 1);
  assert_int_equal(oracle_need(three, act, 2, dma), 1);
  assert_int_equal(oracle_need(three, dve, 1, act), 3);
  assert_int_equal(oracle_need(three, dve, 1, dma), 1);
  program_free(p);
}

/* Two DMA queues touch one tensor with 8x8 and 4x4 tiles: exact overlap. */
static void test_need_hbm_overlap(void **state) {
  (void)state;
  Program *p = compile("kernel hb(N: int) {\n"
                       "  hbm inout X: f32[8, 8];\n"
                       "  sbuf big: f32[8, 8];\n"
                       "  sbuf small: f32[4, 4];\n"
                       "  dma0: load big, X[0, 0];\n"
                       "  dma1: store X[1, 1], small;\n" /* rows 4..7, cols 4..7 */
                       "  dma1: store X[0, 1], small;\n" /* rows 0..3, cols 4..7 */
                       "  dma0: load small, X[1, 0];\n"   /* rows 4..7, cols 0..3 */
                       "  dma0: store X[0, 0], big;\n"
                       "}\n");
  Oracle *o = walk(p, 0);
  int dma = engine(p, "dma0"), dma1 = engine(p, "dma1");
  assert_int_equal(oracle_need(o, dma1, 1, dma), 1); /* WAR on X */
  assert_int_equal(oracle_need(o, dma1, 2, dma), 1);
  assert_int_equal(oracle_need(o, dma, 2, dma1), 2); /* WAR on small, not X: cols differ */
  assert_int_equal(oracle_need(o, dma, 3, dma1), 2); /* WAW on X */
  program_free(p);
}

static void test_walk_reports_bad_slot(void **state) {
  (void)state;
  Program *p = compile("kernel bad(N: int) {\n"
                       "  sbuf a[2]: f32[4, 4];\n"
                       "  for i in 0 .. N { act: fill a[i], 0.0; }\n"
                       "}\n");
  int64_t n = 3;
  FILE *quiet = fopen("/dev/null", "w");
  p->diag.out = quiet;
  assert_null(oracle_new(p, &n));
  assert_int_equal(p->diag.errors, 1);
  fclose(quiet);
  program_free(p);
}

static void test_walk_reports_hbm_out_of_bounds(void **state) {
  (void)state;
  Program *p = compile("kernel oob(N: int) {\n"
                       "  hbm in X: f32[8, 4];\n"
                       "  sbuf a: f32[4, 4];\n"
                       "  for i in 0 .. N { dma: load a, X[i, 0]; }\n"
                       "}\n");
  FILE *quiet = fopen("/dev/null", "w");
  p->diag.out = quiet;
  int64_t two = 2, three = 3;
  assert_non_null(oracle_new(p, &two)); /* rows 0..7 */
  assert_int_equal(p->diag.errors, 0);
  assert_null(oracle_new(p, &three)); /* rows 8..11 */
  assert_int_equal(p->diag.errors, 1);
  fclose(quiet);
  program_free(p);
}

/* ---- Hand-written IR. */

static IrExpr *constant(Program *p, int64_t v) {
  IrExpr *x = ARENA_NEW(p->arena, IrExpr);
  x->kind = IX_CONST;
  x->value = v;
  return x;
}

static IrExpr *leaf(Program *p, IrExprKind kind, int id) {
  IrExpr *x = ARENA_NEW(p->arena, IrExpr);
  x->kind = kind;
  x->id = id;
  return x;
}

static IrExpr *binary(Program *p, IrExprKind kind, IrExpr *a, IrExpr *b) {
  IrExpr *x = ARENA_NEW(p->arena, IrExpr);
  x->kind = kind;
  x->a = a;
  x->b = b;
  return x;
}

/* The instruction as the transform would emit it, operands and all. */
static IrNode *op(Program *p, int instr_id) {
  IrNode *n = ARENA_NEW(p->arena, IrNode);
  const Stmt *s = p->kernel->instrs[instr_id];
  n->kind = IR_OP;
  n->instr = s;
  n->op = s->op;
  n->noperands = s->noperands;
  n->operands = ARENA_ARRAY(p->arena, IrOperand, s->noperands);
  for (int i = 0; i < s->noperands; i++) {
    const Operand *from = &s->operands[i];
    IrOperand *to = &n->operands[i];
    to->kind = from->kind;
    to->decl = from->decl;
    to->imm = from->imm;
    if (from->kind == OPND_TILE) to->slot = from->slot ? ir_from_expr(p, from->slot) : constant(p, 0);
    if (from->kind == OPND_HBM) {
      to->row = ir_from_expr(p, from->row);
      to->col = ir_from_expr(p, from->col);
    }
  }
  return n;
}

static IrNode *wait_on(Program *p, const char *producer, IrExpr *threshold) {
  IrNode *n = ARENA_NEW(p->arena, IrNode);
  n->kind = IR_WAIT;
  n->engine = engine(p, producer);
  n->threshold = threshold;
  return n;
}

static IrNode *wait_for(Program *p, const char *producer, int64_t t) {
  return wait_on(p, producer, constant(p, t));
}

static IrNode *barrier(Program *p) {
  IrNode *n = ARENA_NEW(p->arena, IrNode);
  n->kind = IR_BARRIER;
  return n;
}

static IrNode *set(Program *p, int var, IrExpr *value) {
  IrNode *n = ARENA_NEW(p->arena, IrNode);
  n->kind = IR_SET;
  n->var = var;
  n->value = value;
  return n;
}

static IrNode *loop(Program *p, int loop_id, IrExpr *lo, IrExpr *hi, IrNode *body) {
  IrNode *n = ARENA_NEW(p->arena, IrNode);
  n->kind = IR_LOOP;
  n->loop_id = loop_id;
  n->lo = lo;
  n->hi = hi;
  n->body = body;
  return n;
}

/* The nodes, NULL-terminated, linked in order; returns the first. */
static IrNode *seq(IrNode *first, ...) {
  va_list ap;
  va_start(ap, first);
  IrNode *last = first;
  for (IrNode *n; (n = va_arg(ap, IrNode *));) last = last->next = n;
  va_end(ap);
  return first;
}

static void empty_ir(Program *p, SyncMode sync) {
  p->ir = ARENA_NEW(p->arena, IrProgram);
  p->ir->sync = sync;
  p->ir->nengines = p->target->nengines;
}

static void give(Program *p, const char *name, IrNode *body) {
  p->ir->streams[engine(p, name)].body = body;
}

static void set_vars(Program *p, const char *name, int nvars) {
  p->ir->streams[engine(p, name)].nvars = nvars;
}

static OracleStats judge(Oracle *o, int schedules) {
  OracleStats st;
  FILE *quiet = fopen("/dev/null", "w");
  oracle_check(o, schedules, 7, quiet, &st);
  fclose(quiet);
  return st;
}

/* act: fill a, fill a, fill c; dve: copy b, a (needs act 2); pool: add c2, a, b */
static const char chain_kernel[] =
    "kernel chain(N: int) {\n"
    "  sbuf a: f32[4, 4];\n"
    "  sbuf b: f32[4, 4];\n"
    "  sbuf c: f32[4, 4];\n"
    "  sbuf d: f32[4, 4];\n"
    "  act { fill a, 1.0; fill a, 2.0; fill c, 3.0; }\n"
    "  dve: copy b, a;\n"
    "  pool: add d, a, b;\n"
    "}\n";

static Program *chain(IrNode *dve, IrNode *pool) {
  Program *p = compile(chain_kernel);
  empty_ir(p, SYNC_BARRIER_FREE);
  give(p, "act", seq(op(p, 0), op(p, 1), op(p, 2), NULL));
  give(p, "dve", dve ? dve : seq(wait_for(p, "act", 2), op(p, 3), NULL));
  give(p, "pool", pool);
  return p;
}

/* pool needs act 2 and dve 1; waiting on dve covers act transitively. */
static void test_vc_transitive(void **state) {
  (void)state;
  Program *p = chain(NULL, NULL);
  give(p, "pool", seq(wait_for(p, "dve", 1), op(p, 4), NULL));
  OracleStats st = judge(walk(p, 0), 4);
  assert_int_equal(st.instructions, 5);
  assert_int_equal(st.waits, 2);
  assert_int_equal(st.races, 0);
  assert_int_equal(st.late, 0);
  assert_int_equal(st.redundant, 0);
  assert_int_equal(st.deadlocks, 0);
  assert_false(oracle_failed(&st));
  program_free(p);
}

/* After waiting on dve, a wait on act for 2 is already implied. */
static void test_vc_redundant(void **state) {
  (void)state;
  Program *p = chain(NULL, NULL);
  give(p, "pool", seq(wait_for(p, "dve", 1), wait_for(p, "act", 2), op(p, 4), NULL));
  OracleStats st = judge(walk(p, 0), 2);
  assert_int_equal(st.waits, 3);
  assert_int_equal(st.redundant, 1);
  assert_int_equal(st.nwait_nodes, 3);
  assert_int_equal(st.wait_redundant[2], 1); /* dve's wait is node 0, pool's are 1 and 2 */
  assert_int_equal(st.wait_redundant[1], 0);
  assert_false(oracle_failed(&st));
  program_free(p);
}

/* The same two waits the other way round: neither is implied when it runs,
 * but the wait on dve implies the one on act before the add starts. */
static void test_vc_subsumed_by_a_later_wait(void **state) {
  (void)state;
  Program *p = chain(NULL, NULL);
  give(p, "pool", seq(wait_for(p, "act", 2), wait_for(p, "dve", 1), op(p, 4), NULL));
  OracleStats st = judge(walk(p, 0), 2);
  assert_int_equal(st.waits, 3);
  assert_int_equal(st.redundant, 0);
  assert_int_equal(st.subsumed, 1);
  assert_int_equal(st.wait_subsumed[1], 1);
  assert_int_equal(st.wait_subsumed[2], 0);
  assert_false(oracle_failed(&st));
  program_free(p);
}

static void test_vc_missing_wait_is_a_race(void **state) {
  (void)state;
  Program *p = chain(NULL, NULL);
  give(p, "pool", seq(wait_for(p, "act", 2), op(p, 4), NULL));
  OracleStats st = judge(walk(p, 0), 3);
  assert_int_equal(st.races, 1); /* dve 1 is not covered */
  assert_int_equal(st.early, 0);
  assert_true(oracle_failed(&st));
  program_free(p);
}

static void test_vc_low_wait_is_early(void **state) {
  (void)state;
  Program *p = chain(NULL, NULL);
  give(p, "dve", seq(wait_for(p, "act", 1), op(p, 3), NULL));
  give(p, "pool", seq(wait_for(p, "act", 2), wait_for(p, "dve", 1), op(p, 4), NULL));
  OracleStats st = judge(walk(p, 0), 1);
  assert_int_equal(st.races, 1);
  assert_int_equal(st.early, 1);
  assert_true(oracle_failed(&st));
  program_free(p);
}

static void test_vc_high_wait_is_late(void **state) {
  (void)state;
  Program *p = chain(NULL, NULL);
  give(p, "dve", seq(wait_for(p, "act", 3), op(p, 3), NULL));
  give(p, "pool", seq(wait_for(p, "dve", 1), op(p, 4), NULL));
  OracleStats st = judge(walk(p, 0), 1);
  assert_int_equal(st.races, 0);
  assert_int_equal(st.late, 1);
  assert_int_equal(st.late_explained, 0);
  assert_true(oracle_failed(&st));
  program_free(p);
}

static void test_vc_late_explained_by_fallback(void **state) {
  (void)state;
  Program *p = chain(NULL, NULL);
  IrNode *w = wait_for(p, "act", 3);
  WaitWhy *why = ARENA_NEW(p->arena, WaitWhy);
  why->fallback = "slot index not affine";
  w->why = why;
  give(p, "dve", seq(w, op(p, 3), NULL));
  give(p, "pool", seq(wait_for(p, "dve", 1), op(p, 4), NULL));
  OracleStats st = judge(walk(p, 0), 1);
  assert_int_equal(st.late, 0);
  assert_int_equal(st.late_explained, 1);
  assert_false(oracle_failed(&st));
  program_free(p);
}

/* A second wait on the same counter at or below the known value is skipped. */
static void test_guard_skips_known(void **state) {
  (void)state;
  Program *p = chain(NULL, NULL);
  give(p, "pool", seq(wait_for(p, "dve", 1), wait_for(p, "dve", 1), op(p, 4), NULL));
  OracleStats st = judge(walk(p, 0), 1);
  assert_int_equal(st.waits, 2);
  assert_int_equal(st.wait_executed[2], 0);
  program_free(p);
}

static void test_deadlock_unreachable_threshold(void **state) {
  (void)state;
  Program *p = chain(NULL, NULL);
  give(p, "pool", seq(wait_for(p, "dve", 2), op(p, 4), NULL));
  OracleStats st = judge(walk(p, 0), 3);
  assert_int_equal(st.deadlocks, 3); /* every schedule */
  assert_true(oracle_failed(&st));
  program_free(p);
}

static void test_deadlock_cycle(void **state) {
  (void)state;
  Program *p = chain(NULL, NULL);
  give(p, "dve", seq(wait_for(p, "pool", 1), wait_for(p, "act", 2), op(p, 3), NULL));
  give(p, "pool", seq(wait_for(p, "dve", 1), op(p, 4), NULL));
  OracleStats st = judge(walk(p, 0), 2);
  assert_int_equal(st.deadlocks, 2);
  program_free(p);
}

static void test_mismatch_missing_op(void **state) {
  (void)state;
  Program *p = chain(NULL, NULL);
  give(p, "pool", seq(wait_for(p, "dve", 1), NULL));
  OracleStats st = judge(walk(p, 0), 1);
  assert_int_equal(st.mismatches, 1);
  assert_true(oracle_failed(&st));
  program_free(p);
}

/* Barriers restart counters: after one, S_act >= 1 means act's 2nd op. */
static void test_barrier_maps_counters(void **state) {
  (void)state;
  Program *p = compile(chain_kernel);
  empty_ir(p, SYNC_BARRIER);
  for (int e = 0; e < p->target->nengines; e++) /* every engine, each DMA queue too, arrives twice */
    give(p, p->target->engines[e].name, seq(barrier(p), barrier(p), NULL));
  give(p, "act", seq(op(p, 0), barrier(p), op(p, 1), op(p, 2), barrier(p), NULL));
  give(p, "dve", seq(barrier(p), wait_for(p, "act", 1), op(p, 3), barrier(p), NULL));
  give(p, "pool", seq(barrier(p), barrier(p), op(p, 4), NULL));
  OracleStats st = judge(walk(p, 0), 4);
  assert_int_equal(st.races, 0);
  assert_int_equal(st.late, 0);
  assert_int_equal(st.deadlocks, 0);
  assert_int_equal(st.waits, 1);
  /* S_act >= 2 after the barrier is act's 3rd op: late, counted, not failed
   * (the baseline's static thresholds are not exact by design) */
  give(p, "dve", seq(barrier(p), wait_for(p, "act", 2), op(p, 3), barrier(p), NULL));
  st = judge(walk(p, 0), 1);
  assert_int_equal(st.late, 1);
  assert_int_equal(st.races, 0);
  assert_false(oracle_failed(&st));
  /* one barrier less on pe: the others wait for it forever */
  give(p, "pe", seq(barrier(p), NULL));
  st = judge(walk(p, 0), 2);
  assert_int_equal(st.deadlocks, 2);
  program_free(p);
}

/* Tracked counts in a triangle: act keeps the loads so far in a variable. */
static void test_triangular_bookkeeping(void **state) {
  (void)state;
  Program *p = compile(tri_kernel);
  empty_ir(p, SYNC_BARRIER_FREE);
  IrExpr *i = leaf(p, IX_LOOPVAR, 0);
  IrExpr *loads = leaf(p, IX_VAR, 0);
  IrExpr *i_plus_1 = binary(p, IX_ADD, i, constant(p, 1));
  give(p, "dma", loop(p, 0, constant(p, 0), leaf(p, IX_PARAM, 0),
                      loop(p, 1, constant(p, 0), i_plus_1, seq(wait_on(p, "act", i), op(p, 0), NULL))));
  give(p, "act", loop(p, 0, constant(p, 0), leaf(p, IX_PARAM, 0),
                      seq(set(p, 0, binary(p, IX_ADD, loads, i_plus_1)), wait_on(p, "dma", loads),
                          op(p, 1), NULL)));
  set_vars(p, "act", 1);
  OracleStats st = judge(walk(p, 4), 4);
  assert_int_equal(st.instructions, 14);
  assert_int_equal(st.waits, 3 + 4);
  assert_int_equal(st.bookkeeping, 10 + 4 + 4);
  assert_int_equal(st.races, 0);
  assert_int_equal(st.late, 0);
  assert_int_equal(st.redundant, 0);
  assert_false(oracle_failed(&st));
  /* zero trips: nothing runs, nothing fails */
  st = judge(walk(p, 0), 1);
  assert_int_equal(st.instructions, 0);
  assert_false(oracle_failed(&st));
  program_free(p);
}

/* The load of X[j, 0] emitted as X[i, 0]: right instruction, wrong place. */
static void test_mismatch_operands(void **state) {
  (void)state;
  Program *p = compile(tri_kernel);
  empty_ir(p, SYNC_BARRIER_FREE);
  IrNode *load = op(p, 0);
  load->operands[1].row = leaf(p, IX_LOOPVAR, 0);
  IrExpr *i_plus_1 = binary(p, IX_ADD, leaf(p, IX_LOOPVAR, 0), constant(p, 1));
  give(p, "dma", loop(p, 0, constant(p, 0), leaf(p, IX_PARAM, 0),
                      loop(p, 1, constant(p, 0), i_plus_1, load)));
  give(p, "act", loop(p, 0, constant(p, 0), leaf(p, IX_PARAM, 0), op(p, 1))); /* unsynchronized */
  OracleStats st = judge(walk(p, 1), 1); /* i = j = 0: the same place */
  assert_int_equal(st.mismatches, 0);
  st = judge(walk(p, 2), 1);
  assert_int_equal(st.mismatches, 1);
  assert_true(oracle_failed(&st));
  program_free(p);
}

/* ---- The ideal makespan. */

/* The costs of the engine named on p's target. */
static const bfrt_engine_cost *cost_of(const Program *p, const char *name) {
  return &p->target->costs.kind[p->target->engines[engine(p, name)].kind];
}

/* Cycles of op on the engine named, on the 4 x 4 tiles of these kernels. */
static int64_t cycles_of(const Program *p, const char *name, int op) {
  static const int64_t tile[2] = {4, 4};
  return bfrt_op_cycles(&p->target->costs, p->target->engines[engine(p, name)].kind, op, tile, tile);
}

static void test_ideal_chain_and_overlap(void **state) {
  (void)state;
  Program *p = compile(chain_kernel);
  Oracle *o = walk(p, 0);
  const bfrt_costs *costs = &p->target->costs;
  int64_t fill = cycles_of(p, "act", BFRT_FILL);
  int64_t copy = cycles_of(p, "dve", BFRT_COPY);
  int64_t add = cycles_of(p, "pool", BFRT_ADD);
  /* copy waits for the 2nd fill, add for the copy; the 3rd fill overlaps */
  int64_t chained = 2 * fill + copy + add;
  int64_t expect = chained > 3 * fill ? chained : 3 * fill;
  assert_true(fill > 0 && copy > 0 && add > 0);
  assert_int_equal(oracle_ideal_cycles(o, costs), expect);
  /* ideal_sync: the copy and the add each wait once on another engine, so
   * the chain pays two semaphore latencies and two waits */
  int64_t sem = cost_of(p, "act")->sem_latency;
  int64_t wait = cost_of(p, "dve")->wait_cost;
  int64_t synced = chained + 2 * (sem + wait);
  assert_int_equal(oracle_ideal_sync_cycles(o, costs), synced > 3 * fill ? synced : 3 * fill);
  program_free(p);
}

/* ideal_sync charges each engine's device reads once, in its idle time:
 * dve reads C[0, 0] for both loops it runs (once), act none (it has no
 * instruction in them); with C[0, 0] = 0, dve still reads it to skip them.
 * The wait of dve's first copy is not idle time: the read cannot hide in it. */
static const char reads_kernel[] =
    "kernel reads(N: int) {\n"
    "  hbm in C: i32[1, 1];\n"
    "  sbuf a: f32[4, 4];\n"
    "  sbuf b: f32[4, 4];\n"
    "  act: fill a, 1.0;\n"
    "  for i in 0 .. C[0, 0] { dve: copy b, a; }\n"
    "  for j in 0 .. C[0, 0] { dve: copy b, a; }\n"
    "}\n";

static void test_ideal_sync_device_reads(void **state) {
  (void)state;
  for (int32_t count = 0; count <= 2; count++) {
    Program *p = compile(reads_kernel);
    static const int64_t shape[1][2] = {{1, 1}};
    const void *values[1] = {&count};
    p->device_ints = values;
    p->device_shape = shape;
    Oracle *o = walk(p, 0);
    const bfrt_costs *costs = &p->target->costs;
    int64_t fill = cycles_of(p, "act", BFRT_FILL);
    int64_t copy = cycles_of(p, "dve", BFRT_COPY);
    int64_t read = cost_of(p, "dve")->device_read_cost;
    int64_t handoff = fill + cost_of(p, "act")->sem_latency + cost_of(p, "dve")->wait_cost;
    assert_true(read > handoff); /* the read outlasts dve's idle time before its first copy */
    assert_int_equal(oracle_ideal_cycles(o, costs), count ? fill + 2 * count * copy : fill);
    int64_t wait = count ? cost_of(p, "dve")->wait_cost : 0;
    assert_int_equal(oracle_ideal_sync_cycles(o, costs), read + wait + 2 * count * copy);
    program_free(p);
  }
}

/* ideal_sync charges a wait to every instruction that must wait under any
 * exact-threshold scheme, delayed or not: dve's copy needs act's fill,
 * which is visible long before dve is through with its own fills, yet no
 * earlier wait told dve that the fill is complete. */
static const char busy_kernel[] =
    "kernel busy(N: int) {\n"
    "  sbuf a: f32[4, 4];\n"
    "  sbuf b: f32[4, 4];\n"
    "  sbuf c: f32[4, 4];\n"
    "  act: fill a, 1.0;\n"
    "  for i in 0 .. N { dve: fill b, 2.0; }\n"
    "  dve: copy c, a;\n"
    "}\n";

static void test_ideal_sync_charges_an_undelayed_wait(void **state) {
  (void)state;
  Program *p = compile(busy_kernel);
  const bfrt_costs *costs = &p->target->costs;
  int64_t fill_act = cycles_of(p, "act", BFRT_FILL);
  int64_t fill = cycles_of(p, "dve", BFRT_FILL);
  int64_t copy = cycles_of(p, "dve", BFRT_COPY);
  int64_t visible = fill_act + cost_of(p, "act")->sem_latency;
  int64_t n = visible / fill + 1; /* dve's fills outlast it: the copy is not delayed */
  Oracle *o = walk(p, n);
  assert_int_equal(oracle_ideal_cycles(o, costs), n * fill + copy);
  assert_int_equal(oracle_ideal_sync_cycles(o, costs), n * fill + cost_of(p, "dve")->wait_cost + copy);
  program_free(p);
}

/* A dependence implied by happens-before costs no wait: pool waits for
 * dve's copy, which waited for act's fill, so pool knows the fill complete
 * and its second copy waits for nothing. */
static const char relay_kernel[] =
    "kernel relay(N: int) {\n"
    "  sbuf a: f32[4, 4];\n"
    "  sbuf b: f32[4, 4];\n"
    "  sbuf c: f32[4, 4];\n"
    "  sbuf d: f32[4, 4];\n"
    "  act: fill a, 1.0;\n"
    "  dve: copy b, a;\n"
    "  pool: copy c, b;\n"
    "  pool: copy d, a;\n"
    "}\n";

static void test_ideal_sync_implied_transitively(void **state) {
  (void)state;
  Program *p = compile(relay_kernel);
  Oracle *o = walk(p, 0);
  const bfrt_costs *costs = &p->target->costs;
  int64_t fill = cycles_of(p, "act", BFRT_FILL);
  int64_t copy_dve = cycles_of(p, "dve", BFRT_COPY);
  int64_t copy_pool = cycles_of(p, "pool", BFRT_COPY);
  int64_t sem = cost_of(p, "act")->sem_latency;
  int64_t wait = cost_of(p, "dve")->wait_cost;
  assert_int_equal(oracle_ideal_sync_cycles(o, costs), fill + 2 * (sem + wait) + copy_dve + 2 * copy_pool);
  program_free(p);
}

/* The same through a clock the ideal looks up long after it was kept:
 * act's first copy learned dve's fill; N iterations later (act's history
 * compacted many times over) pool waits for that copy and so knows the
 * fill. pool's M fills make its chain the makespan. */
static const char pinned_kernel[] =
    "kernel pinned(N: int, M: int) {\n"
    "  sbuf a: f32[4, 4];\n"
    "  sbuf w: f32[4, 4];\n"
    "  sbuf x[2]: f32[4, 4];\n"
    "  sbuf y: f32[4, 4];\n"
    "  sbuf z: f32[4, 4];\n"
    "  sbuf u: f32[4, 4];\n"
    "  sbuf v: f32[4, 4];\n"
    "  dve: fill a, 1.0;\n"
    "  act: copy w, a;\n"
    "  for i in 0 .. N {\n"
    "    act: fill x[i % 2], 2.0;\n"
    "    dve: copy y, x[i % 2];\n"
    "  }\n"
    "  pool: copy z, w;\n"
    "  pool: copy u, a;\n"
    "  for j in 0 .. M { pool: fill v, 3.0; }\n"
    "}\n";

static int64_t pinned_ideal_sync(int64_t n, int64_t m) {
  Program *p = compile(pinned_kernel);
  int64_t *params = ARENA_ARRAY(p->arena, int64_t, 2);
  params[0] = n;
  params[1] = m;
  Oracle *o = oracle_new(p, params);
  assert_non_null(o);
  int64_t cycles = oracle_ideal_sync_cycles(o, &p->target->costs);
  program_free(p);
  return cycles;
}

static void test_ideal_sync_old_clock_survives_compaction(void **state) {
  (void)state;
  Program *p = compile(pinned_kernel);
  int64_t fill_dve = cycles_of(p, "dve", BFRT_FILL);
  int64_t copy_act = cycles_of(p, "act", BFRT_COPY);
  int64_t copy_pool = cycles_of(p, "pool", BFRT_COPY);
  int64_t fill_pool = cycles_of(p, "pool", BFRT_FILL);
  int64_t handoff = cost_of(p, "dve")->sem_latency + cost_of(p, "act")->wait_cost;
  program_free(p);
  const int64_t n = 300, m = 2000;
  /* dve's fill, act's copy, then pool's copies (one wait) and fills */
  int64_t chain = fill_dve + handoff + copy_act + handoff + 2 * copy_pool + m * fill_pool;
  assert_true(chain > pinned_ideal_sync(n, 0)); /* pool's chain is the makespan */
  assert_int_equal(pinned_ideal_sync(n, m), chain);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_need_war_distance_two),
      cmocka_unit_test(test_need_triangular),
      cmocka_unit_test(test_need_zero_trip),
      cmocka_unit_test(test_need_hbm_overlap),
      cmocka_unit_test(test_walk_reports_bad_slot),
      cmocka_unit_test(test_walk_reports_hbm_out_of_bounds),
      cmocka_unit_test(test_vc_transitive),
      cmocka_unit_test(test_vc_redundant),
      cmocka_unit_test(test_vc_subsumed_by_a_later_wait),
      cmocka_unit_test(test_vc_missing_wait_is_a_race),
      cmocka_unit_test(test_vc_low_wait_is_early),
      cmocka_unit_test(test_vc_high_wait_is_late),
      cmocka_unit_test(test_vc_late_explained_by_fallback),
      cmocka_unit_test(test_guard_skips_known),
      cmocka_unit_test(test_deadlock_unreachable_threshold),
      cmocka_unit_test(test_deadlock_cycle),
      cmocka_unit_test(test_mismatch_missing_op),
      cmocka_unit_test(test_mismatch_operands),
      cmocka_unit_test(test_barrier_maps_counters),
      cmocka_unit_test(test_triangular_bookkeeping),
      cmocka_unit_test(test_ideal_chain_and_overlap),
      cmocka_unit_test(test_ideal_sync_device_reads),
      cmocka_unit_test(test_ideal_sync_charges_an_undelayed_wait),
      cmocka_unit_test(test_ideal_sync_implied_transitively),
      cmocka_unit_test(test_ideal_sync_old_clock_survives_compaction),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
