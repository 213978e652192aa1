/* test_transform.c: the synchronization transforms on small kernels whose
 * thresholds are worked out by hand.
 *
 * A tiny interpreter runs one engine's stream alone (its loops, bookkeeping
 * and the thresholds of its waits; a stream needs nothing from the others
 * to compute them), so each test states the exact thresholds every wait
 * must evaluate to: closed forms in a nest, tracked counts in a triangular
 * nest, tracking arrays at distance 3, producer loops skipped, barrier
 * placement, the dependence classification, and ir_mutate. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "frontend/program.h"
#include "transform/deps.h"
#include "transform/sync.h"

enum { MAX_WAITS = 256, MAX_SLOTS = 8 };

static Program *compile(const char *text) {
  Program *p = program_new("test.bfk", text, strlen(text), target_default(), stderr);
  parse(p);
  assert_int_equal(p->diag.errors, 0);
  check(p);
  assert_int_equal(p->diag.errors, 0);
  return p;
}

static Program *barrier_free(const char *text) {
  Program *p = compile(text);
  transform_barrier_free(p);
  ir_validate(p);
  return p;
}

static int engine(const Program *p, const char *name) {
  int e = target_engine(p->target, name);
  assert_true(e >= 0);
  return e;
}

/* ---- Running one stream by itself. */

typedef struct Run {
  const IrStream *s;
  const int64_t *params;
  int64_t loopvars[64];
  int64_t vars[64];
  int64_t arrays[32][MAX_SLOTS];
  int nwaits;
  int wait_engine[MAX_WAITS];
  int64_t threshold[MAX_WAITS];
  int loops, sets, stores;
  int64_t iterations;
} Run;

static int64_t eval(Run *r, const IrExpr *e) {
  int64_t a, b;
  switch (e->kind) {
  case IX_CONST: return e->value;
  case IX_PARAM: return r->params[e->id];
  case IX_LOOPVAR: return r->loopvars[e->id];
  case IX_VAR: return r->vars[e->id];
  case IX_LOAD:
    a = eval(r, e->a);
    assert_true(a >= 0 && a < MAX_SLOTS);
    return r->arrays[e->id][a];
  case IX_NOT: return !eval(r, e->a);
  case IX_AND: return eval(r, e->a) && eval(r, e->b);
  case IX_OR: return eval(r, e->a) || eval(r, e->b);
  case IX_SELECT: return eval(r, e->a) ? eval(r, e->b) : eval(r, e->c);
  default: break;
  }
  a = eval(r, e->a);
  b = eval(r, e->b);
  switch (e->kind) {
  case IX_LT: return a < b;
  case IX_LE: return a <= b;
  case IX_GT: return a > b;
  case IX_GE: return a >= b;
  case IX_EQ: return a == b;
  case IX_NE: return a != b;
  case IX_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
  case IX_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
  case IX_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
  case IX_MAX: return a > b ? a : b;
  case IX_TRIPS: return (int64_t)ir_trips(a, b);
  case IX_DIV: return int_floor_div(a, b);
  case IX_MOD: return int_floor_mod(a, b);
  default: fail_msg("expression kind %d", e->kind);
  }
  return 0;
}

static void run_nodes(Run *r, const IrNode *n) {
  for (; n; n = n->next) {
    switch (n->kind) {
    case IR_WAIT:
      assert_true(r->nwaits < MAX_WAITS);
      r->wait_engine[r->nwaits] = n->engine;
      r->threshold[r->nwaits++] = eval(r, n->threshold);
      break;
    case IR_SET:
      r->vars[n->var] = eval(r, n->value);
      r->sets++;
      break;
    case IR_STORE: {
      int64_t i = eval(r, n->index);
      assert_true(i >= 0 && i < MAX_SLOTS);
      r->arrays[n->array][i] = eval(r, n->value);
      r->stores++;
      break;
    }
    case IR_LOOP: {
      int64_t lo = eval(r, n->lo), hi = eval(r, n->hi);
      r->loops++;
      for (int64_t i = lo; i < hi; i++) {
        r->loopvars[n->loop_id] = i;
        r->iterations++;
        run_nodes(r, n->body);
      }
      break;
    }
    case IR_IF: run_nodes(r, eval(r, n->cond) ? n->body : n->orelse); break;
    case IR_OP:
    case IR_BARRIER: break;
    }
  }
}

static Run *run_stream(const Program *p, const char *name, const int64_t *params) {
  static Run r;
  memset(&r, 0, sizeof r);
  r.s = &p->ir->streams[engine(p, name)];
  r.params = params;
  run_nodes(&r, r.s->body);
  return &r;
}

/* The thresholds the stream evaluated for waits on engine `on`, in order. */
static int thresholds_on(const Run *r, int on, int64_t *out) {
  int n = 0;
  for (int i = 0; i < r->nwaits; i++)
    if (r->wait_engine[i] == on) out[n++] = r->threshold[i];
  return n;
}

static void assert_thresholds(const Program *p, const Run *r, const char *on, const int64_t *want,
                              int nwant) {
  int64_t got[MAX_WAITS];
  int n = thresholds_on(r, engine(p, on), got);
  assert_int_equal(n, nwant);
  for (int i = 0; i < n; i++) assert_int_equal(got[i], want[i]);
}

static int count_kind(const IrNode *n, IrKind kind) {
  int c = 0;
  for (; n; n = n->next) {
    c += n->kind == kind;
    if (n->kind == IR_LOOP) c += count_kind(n->body, kind);
  }
  return c;
}

static const IrNode *first_wait(const IrNode *n) {
  for (; n; n = n->next) {
    if (n->kind == IR_WAIT) return n;
    if (n->kind == IR_LOOP) {
      const IrNode *w = first_wait(n->body);
      if (w) return w;
    }
  }
  return NULL;
}

/* ---- Conditionals. */

static const IrNode *first_if(const IrNode *n) {
  for (; n; n = n->next) {
    if (n->kind == IR_IF) return n;
    if (n->kind == IR_LOOP) {
      const IrNode *f = first_if(n->body);
      if (f) return f;
    }
  }
  return NULL;
}

/* Producers of t in both branches, each branch ending with a write of t:
 * dve waits for act's position after the conditional, a closed form
 * (a select), with no tracking array; 1, 3, 5 for N = 3. */
static void test_conditional_end_closed_form(void **state) {
  (void)state;
  Program *p = barrier_free("kernel k(N: int) {\n"
                            "  sbuf a: f32[4, 4];\n"
                            "  sbuf b: f32[4, 4];\n"
                            "  for i in 0 .. N {\n"
                            "    if (i == 0) { act: fill a, 1.0; } else { act { fill a, 2.0; scale a, a, 2.0; } }\n"
                            "    dve: copy b, a;\n"
                            "  }\n"
                            "}\n");
  int64_t params[] = {3};
  const Run *r = run_stream(p, "dve", params);
  int64_t want[] = {1, 3, 5};
  assert_thresholds(p, r, "act", want, 3);
  assert_int_equal(p->ir->streams[engine(p, "dve")].narrays, 0);
  program_free(p);
}

/* A producer in one branch only: tracked, thresholds 0 (nothing yet), 1, 1, 2. */
static void test_conditional_one_branch_tracked(void **state) {
  (void)state;
  Program *p = barrier_free("kernel k(N: int) {\n"
                            "  sbuf a: f32[4, 4];\n"
                            "  sbuf b: f32[4, 4];\n"
                            "  for i in 0 .. N {\n"
                            "    if (i % 2 == 1) { act: fill a, 1.0; }\n"
                            "    dve: copy b, a;\n"
                            "  }\n"
                            "}\n");
  int64_t params[] = {4};
  const Run *r = run_stream(p, "dve", params);
  int64_t want[] = {0, 1, 1, 2};
  int64_t got[MAX_WAITS];
  int n = thresholds_on(r, engine(p, "act"), got);
  assert_int_equal(n, 4);
  for (int i = 0; i < n; i++) assert_int_equal(got[i], want[i]);
  program_free(p);
}

/* x op x folds (gcc -Werror rejects a self-comparison in the emitted C). */
static void test_self_comparison_folds(void **state) {
  (void)state;
  Program *p = barrier_free("kernel k(N: int) {\n"
                            "  sbuf a: f32[4, 4];\n"
                            "  for i in 0 .. N {\n"
                            "    if (i == i && !(i < i) || N != N) { act: fill a, 1.0; } else { act: fill a, 2.0; }\n"
                            "  }\n"
                            "}\n");
  const IrNode *n = first_if(p->ir->streams[engine(p, "act")].body);
  assert_non_null(n);
  assert_int_equal(n->cond->kind, IX_CONST);
  assert_int_equal(n->cond->value, 1);
  program_free(p);
}

/* ---- Closed forms. */

static const char nest_kernel[] =
    "kernel nest(N: int, M: int) {\n"
    "  sbuf a: f32[4, 4];\n"
    "  sbuf b: f32[4, 4];\n"
    "  for i in 0 .. N {\n"
    "    for j in 0 .. M {\n"
    "      act: fill a, 1.0;\n"
    "      dve: copy b, a;\n"
    "    }\n"
    "  }\n"
    "}\n";

/* dve's copy in iteration (i, j) needs act's fill of the same iteration:
 * position i * M + j + 1, a closed form with no bookkeeping. */
static void test_closed_form_in_nest(void **state) {
  (void)state;
  Program *p = barrier_free(nest_kernel);
  int64_t params[] = {3, 4};
  Run *r = run_stream(p, "dve", params);
  int64_t want[12];
  for (int k = 0; k < 12; k++) want[k] = k + 1;
  assert_thresholds(p, r, "act", want, 12);
  assert_int_equal(r->sets + r->stores, 0);
  const IrNode *w = first_wait(p->ir->streams[engine(p, "dve")].body);
  assert_non_null(w);
  assert_string_equal(w->why->kind, "RAW");
  assert_string_equal(w->why->distance, "same iteration");
  assert_null(w->why->fallback);
  program_free(p);
}

/* act's next fill overwrites what dve read one iteration back: tracked. */
static void test_loop_carried_war_is_tracked(void **state) {
  (void)state;
  Program *p = barrier_free(nest_kernel);
  int64_t params[] = {2, 2};
  Run *r = run_stream(p, "act", params);
  int64_t want[] = {0, 1, 2, 3};
  assert_thresholds(p, r, "dve", want, 4);
  const IrNode *w = first_wait(p->ir->streams[engine(p, "act")].body);
  assert_string_equal(w->why->kind, "WAR");
  assert_string_equal(w->why->distance, "loop-carried (tracked)");
  program_free(p);
}

/* A second consumer of the same product waits no more. */
static void test_implied_wait_dropped(void **state) {
  (void)state;
  Program *p = barrier_free("kernel k() {\n"
                            "  sbuf a: f32[4, 4];\n  sbuf b: f32[4, 4];\n  sbuf c: f32[4, 4];\n"
                            "  act: fill a, 1.0;\n"
                            "  dve: copy b, a;\n"
                            "  dve: copy c, a;\n"
                            "}\n");
  const IrStream *s = &p->ir->streams[engine(p, "dve")];
  assert_int_equal(count_kind(s->body, IR_WAIT), 1);
  assert_int_equal(first_wait(s->body)->threshold->kind, IX_CONST);
  assert_int_equal(first_wait(s->body)->threshold->value, 1);
  program_free(p);
}

/* ---- Tracked counts: a triangular nest. */

static const char triangle_kernel[] =
    "kernel tri(N: int) {\n"
    "  sbuf t: f32[4, 4];\n  sbuf a: f32[4, 4];\n  sbuf b: f32[4, 4];\n"
    "  for i in 0 .. N {\n"
    "    for j in 0 .. i + 1 {\n"
    "      act: fill t, 1.0;\n"
    "    }\n"
    "    act: fill a, 2.0;\n"
    "    dve: copy b, a;\n"
    "  }\n"
    "}\n";

/* act runs i + 2 instructions in iteration i: the fill of a is at
 * 2, 5, 9, 14: not affine in i, so dve keeps a running count. */
static void test_triangular_running_count(void **state) {
  (void)state;
  Program *p = barrier_free(triangle_kernel);
  int64_t params[] = {4};
  Run *r = run_stream(p, "dve", params);
  int64_t want[] = {2, 5, 9, 14};
  assert_thresholds(p, r, "act", want, 4);
  assert_true(r->sets > 0);
  assert_int_equal(r->stores, 0);
  /* dve runs the outer loop (to count) but not the inner one */
  assert_int_equal(r->loops, 1);
  program_free(p);
}

/* ---- Tracking arrays: distance 3. */

static const char distance_kernel[] =
    "kernel d3(N: int) {\n"
    "  hbm in X: f32[N * 4, 4];\n"
    "  sbuf x[3]: f32[4, 4];\n  sbuf y: f32[4, 4];\n"
    "  pool: fill x[2], 0.0;\n"
    "  for i in 0 .. N {\n"
    "    dma: load x[i % 3], X[i, 0];\n"
    "    act: exp y, x[i % 3];\n"
    "  }\n"
    "}\n";

/* load i reuses the slot exp i - 3 read (act position i - 2); loads 2 and
 * 5 overwrite the slot of pool's fill before the loop (load 5 also waits
 * for it: pool wrote x[2] last; the guard skips it at run time). */
static void test_distance_three_tracked(void **state) {
  (void)state;
  Program *p = barrier_free(distance_kernel);
  int64_t params[] = {6};
  Run *r = run_stream(p, "dma", params);
  int64_t from_act[] = {0, 0, 0, 1, 2, 3};
  int64_t from_pool[] = {0, 0, 1, 0, 0, 1};
  assert_thresholds(p, r, "act", from_act, 6);
  assert_thresholds(p, r, "pool", from_pool, 6);
  const IrStream *s = &p->ir->streams[engine(p, "dma")];
  assert_true(s->narrays >= 1);
  assert_int_equal(s->arrays[0].length->value, 3);
  program_free(p);
}

/* ---- Producer loops without consumer instructions. */

static const char producer_kernel[] =
    "kernel prod(N: int, M: int) {\n"
    "  sbuf s: f32[4, 4];\n  sbuf t: f32[4, 4];\n"
    "  pool: fill s, 0.0;\n"
    "  act: fill t, 1.0;\n"
    "  for i in 0 .. N {\n"
    "    pool: scale s, s, 2.0;\n"
    "    for j in 0 .. M {\n"
    "      act: scale t, t, 0.5;\n"
    "    }\n"
    "  }\n"
    "  dve: add s, s, t;\n"
    "}\n";

/* dve runs neither loop's body and still knows: pool's last write is at
 * 1 + N (a closed form over the loop's last iteration), act's at 1 + N * M
 * (or the fills when the loops do not run; act's nest is summarized once
 * per outer iteration). */
static void test_producer_loops_skipped(void **state) {
  (void)state;
  Program *p = barrier_free(producer_kernel);
  const int64_t sets[][4] = {{3, 2, 4, 7}, {0, 2, 1, 1}, {1, 0, 2, 1}, {2, 1, 3, 3}};
  for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
    Run *r = run_stream(p, "dve", sets[k]);
    assert_thresholds(p, r, "pool", &sets[k][2], 1);
    assert_thresholds(p, r, "act", &sets[k][3], 1);
    assert_true(r->stores <= 1 + sets[k][0]);
    /* the outer loop, and of the inner one only its last iteration (stores) */
    assert_true(r->iterations <= 2 * sets[k][0]);
  }
  const IrNode *dve = p->ir->streams[engine(p, "dve")].body;
  assert_int_equal(count_kind(dve, IR_LOOP), 2);
  program_free(p);
}

/* act skips pool's loop and keeps only its tracking stores: with K = 0
 * they must not evaluate the slot x[N] (out of range here), as the program
 * does not; with K > 0 the slot is the last iteration's. */
static const char zero_trip_kernel[] =
    "kernel zt(K: int, N: int) {\n"
    "  sbuf x[4]: f32[4, 4];\n  sbuf y: f32[4, 4];\n  sbuf z: f32[4, 4];\n"
    "  pool: fill x[0], 1.0;\n"
    "  for j in 0 .. K {\n"
    "    pool: scale x[N], y, 0.5;\n"
    "  }\n"
    "  act: exp z, x[0];\n"
    "}\n";

static void test_summarized_stores_zero_trips(void **state) {
  (void)state;
  Program *p = barrier_free(zero_trip_kernel);
  const int64_t sets[][3] = {{0, 1000000000, 1}, {0, -5, 1}, {3, 1, 1}, {3, 0, 4}, {1, 0, 2}};
  for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
    Run *r = run_stream(p, "act", sets[k]);
    assert_thresholds(p, r, "pool", &sets[k][2], 1);
    assert_true(r->iterations <= 1);
  }
  program_free(p);
}

/* A store its loop reads back two iterations later (x[i % 2], WAR of
 * dve's copy): tidy_stores carries it, the loop body keeps no store and
 * every threshold is what the tracking array gave, for 0, 1, 2, 3 and 7
 * iterations; 7 iterations store 2 entries, not 7. */
static const char carried_kernel[] =
    "kernel carried(N: int) {\n"
    "  sbuf x[2]: f32[4, 4];\n  sbuf y[2]: f32[4, 4];\n"
    "  for i in 0 .. N {\n"
    "    act: fill x[i % 2], 1.0;\n"
    "    dve: copy y[i % 2], x[i % 2];\n"
    "  }\n"
    "}\n";

static int stores_in_loops(const IrNode *n, bool inside) {
  int c = 0;
  for (; n; n = n->next) {
    c += inside && n->kind == IR_STORE;
    if (n->kind == IR_LOOP) c += stores_in_loops(n->body, true);
  }
  return c;
}

static void test_carried_stores(void **state) {
  (void)state;
  Program *tracked = barrier_free(carried_kernel), *carried = barrier_free(carried_kernel);
  tidy_stores(carried);
  ir_validate(carried);
  int act = engine(carried, "act");
  assert_true(stores_in_loops(tracked->ir->streams[act].body, false) > 0);
  assert_int_equal(stores_in_loops(carried->ir->streams[act].body, false), 0);
  const int64_t ns[] = {0, 1, 2, 3, 7};
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
    int64_t want[MAX_WAITS], got[MAX_WAITS];
    Run *r = run_stream(tracked, "act", &ns[k]);
    int n = thresholds_on(r, engine(tracked, "dve"), want), stores = r->stores;
    r = run_stream(carried, "act", &ns[k]);
    assert_int_equal(thresholds_on(r, engine(carried, "dve"), got), n);
    for (int i = 0; i < n; i++) assert_int_equal(got[i], want[i]);
    assert_true(r->stores <= (ns[k] < 2 ? ns[k] : 2));
    assert_true(r->stores <= stores);
  }
  program_free(tracked);
  program_free(carried);
}

/* ---- Dependence classification. */

static const char slots_kernel[] =
    "kernel slots(N: int) {\n"
    "  sbuf x[2]: f32[4, 4];\n  sbuf y: f32[4, 4];\n"
    "  for i in 0 .. N {\n"
    "    act: fill x[i % 2], 1.0;\n"
    "    dve: copy y, x[(i + 2) % 2];\n"
    "    pool: copy y, x[(i + 1) % 2];\n"
    "  }\n"
    "}\n";

static void test_slot_relations(void **state) {
  (void)state;
  Program *p = compile(slots_kernel);
  Deps *d = deps_build(p);
  int act = engine(p, "act");
  /* (i + 2) % 2 is i % 2: this iteration's fill, closed form */
  Need same = deps_need(d, 1, act);
  assert_int_equal(same.kind, NEED_CLOSED);
  assert_int_equal(same.producer, 0);
  /* (i + 1) % 2 is the other slot: last iteration's fill, tracked */
  assert_int_equal(deps_need(d, 2, act).kind, NEED_TRACK);
  assert_false(deps_may_conflict(d, 0, 2, INT32_MAX));
  assert_true(deps_may_conflict(d, 0, 2, 0));
  assert_true(deps_must_conflict(d, 0, 1));
  /* act's fill needs nothing from pool: no pool instruction precedes the first */
  assert_int_equal(deps_need(d, 0, engine(p, "pe")).kind, NEED_NONE);
  program_free(p);
}

/* Strided and N-D regions (docs/algorithm.md, 3.3.3), instruction by
 * instruction: 0 writes the even columns of y, 1 the odd ones, 2 reads
 * every fourth column, 3 writes columns 1, 5, .. of the second half of
 * the partitions; 4 stores the even
 * columns of an N-D row, 5 the odd ones, 6 the same row's columns 0:8,
 * 7 another head's row, 8 (in a loop over j) columns 32 j .. step 2 and
 * 9 columns 32 j + 1 .. step 2 of another iteration. */
static const char *const strided_kernel =
    "kernel st(B: int, H: int, N: int) {\n"
    "  hbm out O: f32[B, H, 8, 64];\n"
    "  sbuf x: f32[8, 16];\n"
    "  sbuf y: f32[8, 16];\n"
    "  sbuf h: f32[1, 8];\n"
    "  act: exp y[:, 0:16:2], x[:, 0:8];\n"
    "  dve: scale y[:, 1:16:2], x[:, 8:16], 2.0;\n"
    "  pool: copy h[:, 0:4], y[0:1, 0:16:4];\n"
    "  act: exp y[4:8, 1:16:4], x[0:4, 0:4];\n"
    "  dma0: store O[0, 1, 2, 0:16:2], h;\n"
    "  dma1: store O[0, 1, 2, 1:16:2], h;\n"
    "  dma2: store O[0, 1, 2, 0:8], h;\n"
    "  dma3: store O[0, 0, 2, 0:16:2], h;\n"
    "  for j in 0 .. 2 {\n"
    "    dma4: store O[0, 1, 3, 32 * j : 32 * j + 16 : 2], h;\n"
    "    dma5: store O[0, 1, 3, 32 * j + 1 : 32 * j + 17 : 2], h;\n"
    "  }\n"
    "}\n";

static void test_strided_relations(void **state) {
  (void)state;
  Program *p = compile(strided_kernel);
  Deps *d = deps_build(p);
  assert_false(deps_may_conflict(d, 0, 1, INT32_MAX)); /* even and odd columns interleave */
  assert_true(deps_must_conflict(d, 0, 2));             /* columns 0, 4, .. are even */
  assert_false(deps_may_conflict(d, 1, 2, INT32_MAX));  /* .. and none is odd */
  assert_false(deps_may_conflict(d, 0, 3, INT32_MAX));  /* columns 1, 5, .. are odd */
  assert_true(deps_must_conflict(d, 1, 3));             /* .. and the odd writer's */
  assert_false(deps_may_conflict(d, 2, 3, INT32_MAX));  /* partition 0 against 4:8 */
  assert_false(deps_may_conflict(d, 4, 5, INT32_MAX));  /* an N-D row's even and odd columns */
  assert_true(deps_must_conflict(d, 4, 6));             /* columns 0:8 hold even ones */
  assert_true(deps_must_conflict(d, 5, 6));             /* .. and odd ones */
  assert_false(deps_may_conflict(d, 4, 7, INT32_MAX));  /* another head: dimension 1 differs */
  assert_false(deps_may_conflict(d, 8, 9, 0));          /* 32 j + 2 i against 32 j' + 1 + 2 i': parities differ */
  assert_true(deps_may_conflict(d, 8, 8, 0));           /* 32 j against 32 j' of another iteration: may */
  program_free(p);
}

/* Slots 4 * (i % 2) + k: `i % 2` is one unknown in one iteration, so
 * slots k and k' differ; across iterations the multiple of 4 never makes
 * up a difference of 1 (but the same k meets again two iterations on). */
static const char mod_slots_kernel[] =
    "kernel modslots(N: int) {\n"
    "  sbuf x[8]: f32[4, 4];\n  sbuf y: f32[4, 4];\n"
    "  for i in 0 .. N {\n"
    "    act: fill x[4 * (i % 2) + 0], 1.0;\n"
    "    pool: fill x[4 * (i % 2) + 1], 1.0;\n"
    "    dve: copy y, x[4 * (i % 2) + 0];\n"
    "  }\n"
    "}\n";

static void test_mod_slot_relations(void **state) {
  (void)state;
  Program *p = compile(mod_slots_kernel);
  Deps *d = deps_build(p);
  /* the copy reads act's slot of this iteration, closed form; pool's slot
   * is never the copy's, in any iteration */
  Need same = deps_need(d, 2, engine(p, "act"));
  assert_int_equal(same.kind, NEED_CLOSED);
  assert_int_equal(same.producer, 0);
  assert_int_equal(deps_need(d, 2, engine(p, "pool")).kind, NEED_NONE);
  assert_false(deps_may_conflict(d, 1, 2, INT32_MAX));
  assert_false(deps_may_conflict(d, 1, 2, 0));
  assert_true(deps_may_conflict(d, 0, 2, 0));
  assert_true(deps_must_conflict(d, 0, 2));
  program_free(p);
}

/* ---- The barrier baseline. */

static void check_barriers(const IrNode *n) {
  const IrNode *prev = NULL;
  for (; n; prev = n, n = n->next) {
    if (n->kind == IR_WAIT) assert_int_equal(n->threshold->kind, IX_CONST);
    assert_true(n->kind != IR_SET && n->kind != IR_STORE);
    if (n->kind != IR_LOOP) continue;
    assert_non_null(prev);
    assert_int_equal(prev->kind, IR_BARRIER);
    const IrNode *last = n->body;
    while (last->next) last = last->next;
    assert_int_equal(last->kind, IR_BARRIER);
    check_barriers(n->body);
  }
}

static void test_barrier_placement(void **state) {
  (void)state;
  Program *p = compile(triangle_kernel);
  transform_barrier(p);
  ir_validate(p);
  assert_int_equal(p->ir->sync, SYNC_BARRIER);
  for (int e = 0; e < p->ir->nengines; e++) {
    const IrStream *s = &p->ir->streams[e];
    check_barriers(s->body);
    /* every engine runs every loop and meets every barrier */
    assert_int_equal(count_kind(s->body, IR_LOOP), 2);
    assert_int_equal(count_kind(s->body, IR_BARRIER), 4);
  }
  /* dve's copy waits for act's fill of a: position 1 of its region */
  int64_t params[] = {3};
  Run *r = run_stream(p, "dve", params);
  int64_t want[] = {1, 1, 1};
  assert_thresholds(p, r, "act", want, 3);
  program_free(p);
}

/* ---- Mutation. */

static void test_mutate(void **state) {
  (void)state;
  Program *p = barrier_free(nest_kernel);
  int n = ir_mutate(p, DROP_WAIT, -1);
  assert_true(n >= 2);
  assert_int_equal(ir_mutate(p, DROP_WAIT, n), -1);
  assert_int_equal(ir_mutate(p, DROP_WAIT, -1), n);

  int64_t params[] = {2, 2};
  int dve = engine(p, "dve");
  int before = run_stream(p, "dve", params)->threshold[0];
  int index = 0; /* the first wait of dve: count the waits of engines before it */
  for (int e = 0; e < dve; e++) index += count_kind(p->ir->streams[e].body, IR_WAIT);
  assert_int_equal(ir_mutate(p, LOWER_THRESHOLD, index), n);
  assert_int_equal(run_stream(p, "dve", params)->threshold[0], before - 1);
  assert_int_equal(ir_mutate(p, RAISE_THRESHOLD, index), n);
  assert_int_equal(ir_mutate(p, RAISE_THRESHOLD, index), n);
  assert_int_equal(run_stream(p, "dve", params)->threshold[0], before + 1);
  assert_int_equal(ir_mutate(p, DROP_WAIT, index), n);
  assert_int_equal(ir_mutate(p, DROP_WAIT, -1), n - 1);
  ir_validate(p);
  program_free(p);
}

/* ---- Validation: a malformed stream is an internal bug (abort). */

static void test_validate_rejects_bad_engine(void **state) {
  (void)state;
  Program *p = barrier_free(nest_kernel);
  IrNode *w = (IrNode *)first_wait(p->ir->streams[engine(p, "dve")].body);
  w->engine = engine(p, "dve"); /* a wait on its own counter */
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    freopen("/dev/null", "w", stderr);
    ir_validate(p);
    _exit(0);
  }
  int status;
  waitpid(pid, &status, 0);
  assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
  program_free(p);
}

/* assign_queues: `dma:` goes round robin over the 16 queues in program
 * order, blocks included; a pinned `dmaN:` stays and does not move the
 * round robin; on a target with an engine called "dma", `dma:` is that
 * engine. */
static void test_assign_queues(void **state) {
  (void)state;
  static const char text[] = "kernel q(N: int) {\n"
                             "  hbm inout X: f32[N * 4, 4];\n"
                             "  sbuf a[4]: f32[4, 4];\n"
                             "  for i in 0 .. N {\n"
                             "    dma: load a[0], X[i, 0];\n"
                             "    dma5: load a[1], X[i, 0];\n"
                             "    dma { load a[2], X[i, 0]; load a[3], X[i, 0]; }\n"
                             "    dma: store X[i, 0], a[0];\n"
                             "  }\n"
                             "}\n";
  Program *p = compile(text);
  const char *want[] = {"dma0", "dma5", "dma1", "dma2", "dma3"};
  for (int i = 0; i < 5; i++) assert_int_equal(p->kernel->instrs[i]->engine, engine(p, want[i]));
  char listing[1024] = "";
  FILE *out = fmemopen(listing, sizeof listing, "w");
  queues_explain(p, out);
  fclose(out);
  assert_non_null(strstr(listing, "// line 5: dma: load -> dma0 (transfer 0, queue 0 of 16)\n"));
  assert_non_null(strstr(listing, "// line 8: dma: store -> dma3 (transfer 3, queue 3 of 16)\n"));
  assert_null(strstr(listing, "dma5")); /* pinned: not listed */
  program_free(p);
  Target one = *target_default();
  one.engines[4].name = "dma"; /* the first queue is called dma: `dma:` pins to it */
  p = program_new("test.bfk", text, strlen(text), &one, stderr);
  parse(p);
  check(p);
  assert_int_equal(p->diag.errors, 0);
  const int pinned[] = {4, 9, 4, 4, 4};
  for (int i = 0; i < 5; i++) assert_int_equal(p->kernel->instrs[i]->engine, pinned[i]);
  program_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_closed_form_in_nest),
      cmocka_unit_test(test_loop_carried_war_is_tracked),
      cmocka_unit_test(test_implied_wait_dropped),
      cmocka_unit_test(test_triangular_running_count),
      cmocka_unit_test(test_distance_three_tracked),
      cmocka_unit_test(test_producer_loops_skipped),
      cmocka_unit_test(test_summarized_stores_zero_trips),
      cmocka_unit_test(test_slot_relations),
      cmocka_unit_test(test_mod_slot_relations),
      cmocka_unit_test(test_carried_stores),
      cmocka_unit_test(test_strided_relations),
      cmocka_unit_test(test_barrier_placement),
      cmocka_unit_test(test_mutate),
      cmocka_unit_test(test_conditional_end_closed_form),
      cmocka_unit_test(test_conditional_one_branch_tracked),
      cmocka_unit_test(test_self_comparison_folds),
      cmocka_unit_test(test_validate_rejects_bad_engine),
      cmocka_unit_test(test_assign_queues),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
