/* test_exec.c: the one execute-and-compare path (harness/exec.c) judges a
 * run by both references.
 *
 * The sequential reference runs the engines' own op code, so arithmetic
 * that is wrong the same way in both matches bit for bit; only the f64
 * reference, written out again from the ops' definitions, sees it. These
 * tests run generated kernels through the path that `bfsync run` and the
 * campaign share, and check that a result perturbed in both the engines'
 * output and the sequential reference (what a mutated op would do) by more
 * than f32 arithmetic may be off there passes the bit-for-bit comparison
 * and fails the f64 one. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/backend.h"
#include "harness/exec.h"
#include "harness/gen.h"
#include "harness/params.h"
#include "transform/sync.h"

typedef struct Ran {
  Program *p;
  Instance in;
  RefTensor *results;
  char *text;
} Ran;

/* Seed's generated kernel at its parameters, run on threads (barrier-free). */
static void run_seed(uint64_t seed, Ran *r) {
  r->text = gen_kernel_text(seed, GEN_DEFAULT_SIZE);
  Program *p = program_new("gen.bfk", r->text, strlen(r->text), target_default(), stderr);
  parse(p);
  check(p);
  assert_int_equal(p->diag.errors, 0);
  ParamArgs pa = {0};
  const char *line = strstr(r->text, "// params:");
  assert_non_null(line);
  assert_int_equal(param_args_add_line(&pa, p->arena, line + strlen("// params:"), stderr), 0);
  int64_t *params = ARENA_ARRAY(p->arena, int64_t, p->kernel->nparams + 1);
  assert_int_equal(param_args_bind(&pa, p->kernel, params, stderr), 0);
  r->p = p;
  r->in = (Instance){p, params, NULL, NULL, NULL};
  const char *err = NULL;
  assert_int_equal(instance_inputs(&r->in, seed, &err), 0);
  assert_int_equal(instance_reference(&r->in, &err), 0);
  if (instance_exact(&r->in, &err)) fail_msg("seed %llu: %s", (unsigned long long)seed, err);
  transform_sync(p, SYNC_BARRIER_FREE);
  assert_int_equal(p->diag.errors, 0);
  Jit *jit = jit_compile(p, emit_c_string(p), &err);
  assert_non_null(jit);
  r->results = instance_copy(&r->in, r->in.inputs);
  bfrt_options opt = {.exec = BFRT_EXEC_THREADS, .costs = &p->target->costs};
  bfrt_stats stats;
  int64_t wall_ns;
  assert_int_equal(instance_execute(&r->in, jit_kernel(jit), &opt, r->results, &stats, &wall_ns, &err), 0);
  jit_free(jit);
}

static void done(Ran *r) {
  program_free(r->p);
  free(r->text);
}

/* The first element of an f32 out or inout tensor that is neither 0 nor
 * tiny, or -1 (its tensor in *tensor). */
static int64_t big_element(const Ran *r, int *tensor) {
  const Kernel *k = r->p->kernel;
  for (int t = 0; t < k->ntensors; t++) {
    if (k->tensors[t].io == IO_IN || k->tensors[t].type != ELEM_F32) continue;
    for (int64_t i = 0; i < r->results[t].rows * r->results[t].cols; i++)
      if (fabsf(r->results[t].data[i]) > 0.25f) {
        *tensor = t;
        return i;
      }
  }
  return -1;
}

static void runs_pass_both_references(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 20; seed++) {
    Ran r;
    run_seed(seed, &r);
    ExactErrors errors;
    const char *report = NULL;
    assert_true(instance_compare(&r.in, r.results, "run", stderr, NULL));
    if (!instance_compare_f64(&r.in, r.results, "run", &errors, &report)) fail_msg("seed %llu: %s", (unsigned long long)seed, report);
    assert_null(report);
    done(&r);
  }
}

/* An op computed wrongly in the shared code: the engines' result and the
 * sequential reference's are the same wrong value. */
static void shared_wrong_arithmetic_is_caught(void **state) {
  (void)state;
  int caught = 0;
  for (uint64_t seed = 1; seed <= 20; seed++) {
    Ran r;
    run_seed(seed, &r);
    int t = -1;
    int64_t i = big_element(&r, &t);
    if (i >= 0 && isfinite(r.in.exact[t].bound[i])) {
      /* off by twice what f32 arithmetic may be off there, and at least 1% */
      const ExactTensor *x = &r.in.exact[t];
      double off = fmax(2 * x->bound[i], 0.01 * fabs(x->value[i]));
      r.results[t].data[i] = (float)(x->value[i] + (x->value[i] >= 0 ? off : -off));
      r.in.expected[t].data[i] = r.results[t].data[i];
      ExactErrors errors;
      const char *report = NULL;
      assert_true(instance_compare(&r.in, r.results, "run", stderr, NULL)); /* bit for bit: the same */
      if (instance_compare_f64(&r.in, r.results, "run", &errors, &report))
        fail_msg("seed %llu: %s[%lld] = %g off by 1%% passes, ratio %g", (unsigned long long)seed, r.p->kernel->tensors[t].name, (long long)i, r.results[t].data[i], errors.max_bound_ratio);
      assert_non_null(report);
      assert_non_null(strstr(report, r.p->kernel->tensors[t].name));
      assert_true(errors.max_bound_ratio > 1);
      caught++;
    }
    done(&r);
  }
  assert_true(caught >= 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(runs_pass_both_references),
      cmocka_unit_test(shared_wrong_arithmetic_is_caught),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
