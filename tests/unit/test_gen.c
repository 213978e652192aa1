/* test_gen.c: the kernel generator's promises, checked on what it prints.
 *
 * Generated kernels feed every verification campaign, so a quiet drift in
 * the generator (an invalid kernel, a lost feature, an out-of-bounds
 * coordinate, a different kernel for the same seed) would silently weaken
 * them all. Each test parses and checks generated kernels with the real
 * frontend and then inspects the checked AST: validity, determinism, the
 * parameter line, the features the campaigns rely on, and (by walking every
 * dynamic instruction with the printed parameters) that every slot and hbm
 * coordinate is in range and the dynamic size stays small. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/inputs.h"
#include "harness/gen.h"
#include "frontend/program.h"

/* ---- Helpers. */

static char *generate(uint64_t seed, long size, size_t *len) {
  char *text = NULL;
  FILE *f = open_memstream(&text, len);
  gen_kernel(seed, size, f);
  fclose(f);
  return text;
}

/* Parse and check seed's kernel; fails the test with the diagnostics if the
 * frontend rejects it. */
static Program *checked(uint64_t seed, long size) {
  size_t len, errlen;
  char *text = generate(seed, size, &len), *errs = NULL;
  FILE *err = open_memstream(&errs, &errlen);
  Program *p = program_new("gen.bfk", text, len, target_default(), err);
  parse(p);
  if (!p->diag.errors) check(p);
  fflush(err);
  if (p->diag.errors) fprintf(stderr, "seed %llu:\n%s\n%s", (unsigned long long)seed, errs, text);
  assert_int_equal(p->diag.errors, 0);
  fclose(err);
  free(errs);
  free(text);
  return p;
}

static int parse_params(uint64_t seed, const Kernel *k, int64_t *values) {
  char *line = NULL;
  size_t len;
  FILE *f = open_memstream(&line, &len);
  gen_params(seed, f);
  fclose(f);
  int n = 0;
  for (char *tok = strtok(line, " \n"); tok; tok = strtok(NULL, " \n"), n++) {
    char *eq = strchr(tok, '=');
    assert_non_null(eq);
    assert_true(n < k->nparams);
    assert_int_equal(eq - tok, (long)strlen(k->params[n].name));
    assert_memory_equal(tok, k->params[n].name, (size_t)(eq - tok));
    values[n] = strtoll(eq + 1, NULL, 10);
  }
  free(line);
  return n;
}

/* ---- Dynamic walk: every instruction instance with concrete parameters. */

typedef struct Walk {
  const Kernel *k;
  const int64_t *params;
  int64_t *loopvars;
  int64_t instances;
  int64_t branches[2]; /* conditionals evaluated false, true */
  int64_t tensor_shape[8][2];
  const void *ints[8]; /* device integers: bfsync run's defaults for seed 1 */
  int64_t device_reads, zero_trip_device_loops;
} Walk;

static int64_t eval(const Walk *w, const Expr *e) {
  int64_t v;
  const Expr *bad;
  EvalEnv env = {w->params, w->loopvars, w->ints, (const int64_t(*)[2])w->tensor_shape, {0, 0}};
  assert_int_equal(expr_eval_in(e, &env, &v, &bad), 0);
  return v;
}

static bool reads_device(const Expr *e) {
  return e && (e->kind == EX_ELEM || reads_device(e->lhs) || reads_device(e->rhs));
}

/* A view's or an element slice's ranges lie inside the tile's or tensor's shape. */
static void check_view(const Walk *w, const Operand *o, const int64_t shape[2]) {
  for (int d = 0; o->view && d < 2; d++) {
    int64_t lo = o->lo[d] ? eval(w, o->lo[d]) : 0;
    if (lo < 0 || lo + o->ext[d] > shape[d])
      fail_msg("kernel %s: %s's range %" PRId64 ":%" PRId64 " is out of bounds", w->k->name, o->name, lo,
               lo + o->ext[d]);
  }
}

static void check_operand(const Walk *w, const Operand *o, const int64_t tile_shape[2]) {
  if (o->kind == OPND_TILE) {
    const int64_t shape[2] = {w->k->tiles[o->decl].rows, w->k->tiles[o->decl].cols};
    check_view(w, o, shape);
  }
  if (o->kind == OPND_HBM && o->view) {
    check_view(w, o, w->tensor_shape[o->decl]);
    return;
  }
  if (o->kind == OPND_TILE && o->slot) {
    int64_t slot = eval(w, o->slot);
    if (slot < 0 || slot >= w->k->tiles[o->decl].slots)
      fail_msg("kernel %s: slot %" PRId64 " of %s is out of range", w->k->name, slot, o->name);
  } else if (o->kind == OPND_HBM) {
    int64_t r = eval(w, o->row), c = eval(w, o->col);
    const int64_t *shape = w->tensor_shape[o->decl];
    if (r < 0 || c < 0 || (r + 1) * tile_shape[0] > shape[0] || (c + 1) * tile_shape[1] > shape[1])
      fail_msg("kernel %s: %s[%" PRId64 ", %" PRId64 "] is out of bounds", w->k->name, o->name, r, c);
  }
}

static void walk(Walk *w, const Stmt *s) {
  for (; s; s = s->next) {
    if (s->kind == ST_FOR) {
      int64_t lo = eval(w, s->lo), hi = eval(w, s->hi);
      if (reads_device(s->hi)) {
        w->device_reads++;
        w->zero_trip_device_loops += hi <= lo;
      }
      for (int64_t v = lo; v < hi; v++) {
        w->loopvars[s->loop_id] = v;
        walk(w, s->body);
      }
    } else if (s->kind == ST_BLOCK) {
      walk(w, s->body);
    } else if (s->kind == ST_IF) {
      bool holds;
      EvalEnv env = {w->params, w->loopvars, w->ints, (const int64_t(*)[2])w->tensor_shape, {0, 0}};
      assert_int_equal(cond_eval(s->cond, &env, &holds, NULL), 0);
      w->branches[holds]++;
      walk(w, holds ? s->body : s->orelse);
    } else if (s->kind == ST_INSTR) {
      int64_t tile_shape[2] = {0, 0};
      for (int i = 0; i < s->noperands; i++)
        if (s->operands[i].kind == OPND_TILE) { /* a view's extents */
          tile_shape[0] = s->operands[i].ext[0];
          tile_shape[1] = s->operands[i].ext[1];
        }
      for (int i = 0; i < s->noperands; i++) check_operand(w, &s->operands[i], tile_shape);
      w->instances++;
    }
  }
}

/* ---- Tests. */

static void test_same_seed_same_kernel(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 20; seed++) {
    size_t la, lb;
    char *a = generate(seed, 200, &la), *b = generate(seed, 200, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    free(a);
    free(b);
  }
  size_t la, lb;
  char *a = generate(1, 40, &la), *b = generate(2, 40, &lb);
  assert_false(la == lb && !memcmp(a, b, la));
  free(a);
  free(b);
}

static void test_kernels_check(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 300; seed++) program_free(checked(seed, GEN_DEFAULT_SIZE));
  program_free(checked(UINT64_MAX, 500));
}

/* The printed parameters bind to the kernel's parameters, in order, with
 * values 0..4 and the first at least 2; all coordinates and slots are then in
 * range, and the kernel stays at a few thousand dynamic instructions. */
static void test_params_bind_and_stay_in_bounds(void **state) {
  (void)state;
  int64_t branches[2] = {0, 0}, device_loops = 0, zero_trip = 0;
  for (uint64_t seed = 1; seed <= 200; seed++) {
    Program *p = checked(seed, GEN_DEFAULT_SIZE);
    const Kernel *k = p->kernel;
    int64_t params[8], loopvars[4096];
    assert_int_equal(parse_params(seed, k, params), k->nparams);
    assert_true(params[0] >= 2 && params[0] <= 4);
    for (int i = 1; i < k->nparams; i++) assert_true(params[i] >= 0 && params[i] <= 4);
    assert_true(k->nloops <= 4096 && k->ntensors <= 8);
    Walk w = {.k = k, .params = params, .loopvars = loopvars};
    static float cells[8][64];
    for (int t = 0; t < k->ntensors; t++) {
      w.tensor_shape[t][0] = eval(&w, k->tensors[t].rows);
      w.tensor_shape[t][1] = eval(&w, k->tensors[t].cols);
      if (!k->tensors[t].ints) continue;
      assert_true(w.tensor_shape[t][0] * w.tensor_shape[t][1] <= 64);
      bf_default_ints(cells[t], w.tensor_shape[t][0] * w.tensor_shape[t][1], 1, t);
      w.ints[t] = cells[t];
    }
    walk(&w, k->body);
    assert_true(w.instances <= 5000);
    branches[0] += w.branches[0];
    branches[1] += w.branches[1];
    device_loops += w.device_reads;
    zero_trip += w.zero_trip_device_loops;
    program_free(p);
  }
  /* both outcomes of conditionals run, at the generated parameters */
  assert_true(branches[0] > 0 && branches[1] > 0);
  /* device-read loop bounds run, some of them zero times */
  assert_true(device_loops > zero_trip && zero_trip > 0);
}

typedef struct Features {
  bool op[BFRT_NOPS], engine[BFRT_MAX_ENGINES];
  bool triangular, lower_from_outer, single_trip, zero_trip, depth3, slots[4];
  bool inout_load, inout_store;
  bool view_part, view_whole, view_by_loop, slice; /* views of part of a tile, [:, :], starts a loop variable picks; element slices */
  bool ragged_load, ragged_store; /* a ragged slice loaded into a ragged view, and stored from one */
  bool strided_view, strided_slice; /* a view of a tile, an element slice, with a step */
  bool cross_engine[3], same_engine[3]; /* RAW, WAR, WAW */
  bool cond_loopvar, cond_and, cond_or, cond_not, orelse, chained, nested_if, if_in_block;
} Features;

static bool mentions_loopvar(const Expr *e) {
  if (!e) return false;
  if (e->kind == EX_NAME) return e->sym == SYM_LOOPVAR;
  return mentions_loopvar(e->lhs) || mentions_loopvar(e->rhs);
}

static bool is_int(const Expr *e, int64_t v) { return e->kind == EX_INT && e->value == v; }

static void note_loop(Features *f, const Stmt *loop) {
  f->triangular |= mentions_loopvar(loop->hi);
  f->lower_from_outer |= mentions_loopvar(loop->lo);
  f->single_trip |= is_int(loop->lo, 0) && is_int(loop->hi, 1);
  f->zero_trip |= loop->hi->kind == EX_SUB && is_int(loop->hi->rhs, 4);
  f->depth3 |= loop->depth == 2;
}

/* Tiles instruction s writes (its destination) and reads (its sources; the
 * destination too for matmul_acc), as bit sets over tile indices. */
static void tile_effects(const Stmt *s, uint64_t *writes, uint64_t *reads) {
  *writes = *reads = 0;
  for (int i = 0; i < s->noperands; i++) {
    const Operand *o = &s->operands[i];
    if (o->kind != OPND_TILE) continue;
    if (i == 0) *writes |= (uint64_t)1 << o->decl;
    if (i > 0 || s->op == BFRT_MATMUL_ACC) *reads |= (uint64_t)1 << o->decl;
  }
}

static void note_conflicts(Features *f, const Kernel *k) {
  for (int a = 0; a < k->ninstrs; a++)
    for (int b = a + 1; b < k->ninstrs; b++) {
      uint64_t wa, ra, wb, rb;
      tile_effects(k->instrs[a], &wa, &ra);
      tile_effects(k->instrs[b], &wb, &rb);
      bool same = k->instrs[a]->engine == k->instrs[b]->engine;
      bool raw = wa & rb, war = ra & wb, waw = wa & wb;
      bool *seen = same ? f->same_engine : f->cross_engine;
      seen[0] |= raw;
      seen[1] |= war;
      seen[2] |= waw;
    }
}

static bool cond_mentions_loopvar(const Cond *c) {
  if (c->kind == COND_CMP) return mentions_loopvar(c->lhs) || mentions_loopvar(c->rhs);
  return cond_mentions_loopvar(c->left) || (c->right && cond_mentions_loopvar(c->right));
}

static void note_ifs(Features *f, const Stmt *s, int ifs, bool in_block) {
  for (; s; s = s->next) {
    if (s->kind == ST_IF) {
      f->cond_loopvar |= cond_mentions_loopvar(s->cond);
      f->cond_and |= s->cond->kind == COND_AND;
      f->cond_or |= s->cond->kind == COND_OR;
      f->cond_not |= s->cond->kind == COND_NOT;
      f->orelse |= s->orelse != NULL;
      f->chained |= s->orelse && s->orelse->chained;
      f->nested_if |= ifs > 0;
      f->if_in_block |= in_block;
      note_ifs(f, s->orelse, ifs + 1, in_block);
    }
    if (s->kind != ST_INSTR) note_ifs(f, s->body, ifs + (s->kind == ST_IF), in_block || s->kind == ST_BLOCK);
  }
}

static void note_kernel(Features *f, const Kernel *k) {
  note_ifs(f, k->body, 0, false);
  for (int i = 0; i < k->nloops; i++) note_loop(f, k->loops[i]);
  for (int t = 0; t < k->ntiles; t++) f->slots[k->tiles[t].slots] = true;
  for (int i = 0; i < k->ninstrs; i++) {
    const Stmt *s = k->instrs[i];
    f->op[s->op] = f->engine[s->engine] = true;
    for (int j = 0; j < s->noperands; j++) {
      const Operand *o = &s->operands[j];
      if (o->kind == OPND_HBM && k->tensors[o->decl].io == IO_INOUT) {
        f->inout_load |= s->op == BFRT_LOAD;
        f->inout_store |= s->op == BFRT_STORE;
      }
      if (!o->view) continue;
      f->slice |= o->kind == OPND_HBM;
      for (int d = 0; d < o->ndim; d++) {
        f->strided_view |= o->kind == OPND_TILE && o->dim[d].step;
        f->strided_slice |= o->kind == OPND_HBM && o->dim[d].step;
      }
      if (o->kind == OPND_HBM && (o->clip[0] || o->clip[1])) {
        const Operand *t = &s->operands[s->op == BFRT_LOAD ? 0 : 1];
        assert_true(t->kind == OPND_TILE && (t->clip[0] || t->clip[1])); /* a ragged slice's partner is ragged */
        f->ragged_load |= s->op == BFRT_LOAD;
        f->ragged_store |= s->op == BFRT_STORE;
      }
      if (o->kind != OPND_TILE) continue;
      bool part = o->lo[0] || o->lo[1];
      f->view_part |= part;
      f->view_whole |= !part;
      f->view_by_loop |= (o->lo[0] && o->lo[0]->kind != EX_INT) || (o->lo[1] && o->lo[1]->kind != EX_INT);
    }
  }
  note_conflicts(f, k);
}

/* Across a few seeds, every feature the campaigns rely on shows up; a
 * kernel of 300 instructions alone uses every op and every engine. */
static void test_features(void **state) {
  (void)state;
  Features f = {0};
  for (uint64_t seed = 1; seed <= 20; seed++) {
    Program *p = checked(seed, 60);
    note_kernel(&f, p->kernel);
    program_free(p);
  }
  assert_true(f.triangular && f.lower_from_outer && f.single_trip && f.zero_trip && f.depth3);
  assert_true(f.slots[1] && f.slots[2] && f.slots[3]);
  assert_true(f.inout_load && f.inout_store);
  assert_true(f.view_part && f.view_whole && f.view_by_loop && f.slice);
  assert_true(f.ragged_load && f.ragged_store);
  assert_true(f.strided_view && f.strided_slice);
  assert_true(f.cond_loopvar && f.cond_and && f.cond_or && f.cond_not && f.orelse && f.chained &&
              f.nested_if && f.if_in_block);
  for (int kind = 0; kind < 3; kind++) assert_true(f.cross_engine[kind] && f.same_engine[kind]);

  Features big = {0};
  Program *p = checked(5, 300);
  note_kernel(&big, p->kernel);
  for (int op = 0; op < BFRT_NOPS; op++) assert_true(big.op[op]);
  for (int e = 0; e < p->target->nengines; e++) assert_true(big.engine[e]);
  for (int i = 0; i < p->kernel->nloops; i++) assert_true(p->kernel->loops[i]->depth < 3);
  program_free(p);
}

static void test_size_scales(void **state) {
  (void)state;
  Program *small = checked(3, 100), *big = checked(3, 10000);
  /* a prologue writing each tile slot, size instructions, the store of Y */
  int64_t slots = 0;
  for (int t = 0; t < small->kernel->ntiles; t++) slots += small->kernel->tiles[t].slots;
  assert_int_equal(small->kernel->ninstrs, slots + 100 + 1);
  assert_int_equal(big->kernel->ninstrs, slots + 10000 + 1);
  program_free(small);
  program_free(big);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_same_seed_same_kernel),
      cmocka_unit_test(test_kernels_check),
      cmocka_unit_test(test_params_bind_and_stay_in_bounds),
      cmocka_unit_test(test_features),
      cmocka_unit_test(test_size_scales),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
