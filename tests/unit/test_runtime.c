/* test_runtime.c: the runtime on its own, without the compiler.
 *
 * Op semantics against hand-computed values; hand-written kernels (a
 * descriptor and engine functions calling bfrt_op / bfrt_wait, as the
 * backend would emit them) run on threads, with and without jitter; every
 * error path (bounds, slots, division by zero, deadlock, bad shapes), each
 * checked by its message; barriers resetting counters; the trace file read
 * back; the cost model on hand-computed cases. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <float.h>
#include <math.h>

#include "runtime/bfrt_cost.h"
#include "runtime/ops.h"
#include "runtime/semantics.h"

/* ---- Semantics. */

static SemView view(float *data, int64_t rows, int64_t cols) { return (SemView){data, rows, cols, cols, BFRT_DTYPE_F32, 0}; }

static const SemView none;

/* sem_apply for the ops of up to three operands, the immediate where the
 * op's signature has its F. */
static void apply(int op, SemView d, SemView a, SemView b, float imm) {
  SemView v[BFRT_MAX_OPERANDS] = {d, a, b};
  float imms[BFRT_MAX_OPERANDS] = {0};
  for (int i = 0; rt_ops[op].operands[i]; i++)
    if (rt_ops[op].operands[i] == 'F') imms[i] = imm;
  sem_apply(op, v, imms);
}

static void assert_floats(const float *want, const float *got, int n) {
  for (int i = 0; i < n; i++) {
    if (memcmp(&want[i], &got[i], sizeof(float)) != 0) fail_msg("element %d: want %g, got %g", i, want[i], got[i]);
  }
}

static void test_elementwise(void **state) {
  (void)state;
  float a[4] = {1, -2, 3, -4}, b[4] = {4, 3, -2, 1}, d[4];
  apply(BFRT_ADD, view(d, 2, 2), view(a, 2, 2), view(b, 2, 2), 0);
  assert_floats((float[]){5, 1, 1, -3}, d, 4);
  apply(BFRT_SUB, view(d, 2, 2), view(a, 2, 2), view(b, 2, 2), 0);
  assert_floats((float[]){-3, -5, 5, -5}, d, 4);
  apply(BFRT_MUL, view(d, 2, 2), view(a, 2, 2), view(b, 2, 2), 0);
  assert_floats((float[]){4, -6, -6, -4}, d, 4);
  apply(BFRT_MAX, view(d, 2, 2), view(a, 2, 2), view(b, 2, 2), 0);
  assert_floats((float[]){4, 3, 3, 1}, d, 4);
  apply(BFRT_RELU, view(d, 2, 2), view(a, 2, 2), none, 0);
  assert_floats((float[]){1, 0, 3, 0}, d, 4);
  apply(BFRT_SCALE, view(d, 2, 2), view(a, 2, 2), none, 0.5f);
  assert_floats((float[]){0.5f, -1, 1.5f, -2}, d, 4);
  apply(BFRT_FILL, view(d, 2, 2), none, none, 7.25f);
  assert_floats((float[]){7.25f, 7.25f, 7.25f, 7.25f}, d, 4);
  apply(BFRT_COPY, view(d, 2, 2), view(b, 2, 2), none, 0);
  assert_floats(b, d, 4);
}

/* Round to nearest even in bf16 and fp8e4 (OCP E4M3): ties, overflow,
 * NaN, signed zero, subnormals. */
static void test_rounding(void **state) {
  (void)state;
  const int b = BFRT_DTYPE_BF16, e = BFRT_DTYPE_FP8E4;
  struct { float x; int dtype; float want; } cases[] = {
      {1.0f, b, 1.0f},
      {1.0f + 0x1p-8f, b, 1.0f},                      /* a tie: to the even 1.0 */
      {1.0f + 3 * 0x1p-8f, b, 1.0f + 0x1p-6f},        /* a tie: to the even 1 + 2^-6 */
      {1.0f + 0x1p-8f + 0x1p-20f, b, 1.0f + 0x1p-7f}, /* past the tie */
      {-3.3f, b, -3.296875f},
      {0x1.FEp127f, b, 0x1.FEp127f},                  /* the largest bf16 */
      {FLT_MAX, b, INFINITY},                         /* overflow rounds to Inf */
      {-INFINITY, b, -INFINITY},
      {0x1p-149f, b, 0.0f},                           /* below half the smallest bf16 subnormal */
      {0x1.8p-133f, b, 0x1p-132f},                    /* a subnormal tie: to even */
      {448.0f, e, 448.0f},
      {464.0f, e, 448.0f},                            /* a tie: to the even 448 */
      {0x1p-9f, e, 0x1p-9f},                          /* the smallest subnormal */
      {0x1p-10f, e, 0.0f},                            /* a tie: to the even 0 */
      {0x1.8p-10f, e, 0x1p-9f},
      {1.0625f, e, 1.0f},                             /* a tie: to the even 1.0 */
      {1.1875f, e, 1.25f},                            /* a tie: to the even 1.25 */
      {-3.3f, e, -3.25f},
      {0.0f, e, 0.0f},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    float got = bfrt_round(cases[i].x, cases[i].dtype);
    if (memcmp(&got, &cases[i].want, sizeof got)) fail_msg("case %zu: %a rounds to %a, not %a", i, cases[i].x, got, cases[i].want);
  }
  assert_true(signbit(bfrt_round(-0.0f, BFRT_DTYPE_BF16)) && signbit(bfrt_round(-0.0f, BFRT_DTYPE_FP8E4)));
  assert_true(isnan(bfrt_round(NAN, BFRT_DTYPE_BF16)) && signbit(bfrt_round(-NAN, BFRT_DTYPE_BF16)));
  assert_true(isnan(bfrt_round(465.0f, BFRT_DTYPE_FP8E4)) && isnan(bfrt_round(INFINITY, BFRT_DTYPE_FP8E4)));
  assert_true(isnan(bfrt_round(NAN, BFRT_DTYPE_FP8E4)));
  /* a store rounds what the op computed in f32: 1 + 1.00390625 = 2.00390625, a tie in bf16 -> 2 */
  float x[2] = {1.0f, 1.0f}, y[2] = {1.00390625f, 1.01171875f}, d[2];
  apply(BFRT_ADD, (SemView){d, 1, 2, 2, BFRT_DTYPE_BF16, 0}, view(x, 1, 2), view(y, 1, 2), 0);
  assert_floats((float[]){2.0f, 2.015625f}, d, 2);
  apply(BFRT_MATMUL, (SemView){d, 1, 1, 1, BFRT_DTYPE_FP8E4, 0}, view(x, 1, 2), view(y, 2, 1), 0);
  assert_floats((float[]){2.0f}, d, 1); /* 2.015625 in f32, then 2 in fp8e4 */
}

static void test_transcendental(void **state) {
  (void)state;
  float x[4] = {4, 0.25f, 1, 2}, d[4];
  apply(BFRT_RECIP, view(d, 2, 2), view(x, 2, 2), none, 0);
  assert_floats((float[]){0.25f, 4, 1, 0.5f}, d, 4);
  apply(BFRT_RSQRT, view(d, 2, 2), view(x, 2, 2), none, 0);
  assert_floats((float[]){0.5f, 2, 1, 1.0f / sqrtf(2.0f)}, d, 4);
  float z[2] = {0, 0}, e[2];
  apply(BFRT_EXP, view(e, 1, 2), view(z, 1, 2), none, 0);
  assert_floats((float[]){1, 1}, e, 2);
  apply(BFRT_TANH, view(e, 1, 2), view(z, 1, 2), none, 0);
  assert_floats((float[]){0, 0}, e, 2);
  float one = 1, r;
  apply(BFRT_EXP, view(&r, 1, 1), view(&one, 1, 1), none, 0);
  assert_true(r > 2.7182f && r < 2.7183f);
}

static void test_rows(void **state) {
  (void)state;
  float s[6] = {1, 5, 2, -1, -3, -2}, d[2], r[2] = {10, 100}, y[6];
  apply(BFRT_ROWSUM, view(d, 2, 1), view(s, 2, 3), none, 0);
  assert_floats((float[]){8, -6}, d, 2);
  apply(BFRT_ROWMAX, view(d, 2, 1), view(s, 2, 3), none, 0);
  assert_floats((float[]){5, -1}, d, 2);
  apply(BFRT_ADD_ROW, view(y, 2, 3), view(s, 2, 3), view(r, 2, 1), 0);
  assert_floats((float[]){11, 15, 12, 99, 97, 98}, y, 6);
  apply(BFRT_SUB_ROW, view(y, 2, 3), view(s, 2, 3), view(r, 2, 1), 0);
  assert_floats((float[]){-9, -5, -8, -101, -103, -102}, y, 6);
  apply(BFRT_MUL_ROW, view(y, 2, 3), view(s, 2, 3), view(r, 2, 1), 0);
  assert_floats((float[]){10, 50, 20, -100, -300, -200}, y, 6);
}

static void test_matmul(void **state) {
  (void)state;
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12}, d[4];
  apply(BFRT_MATMUL, view(d, 2, 2), view(a, 2, 3), view(b, 3, 2), 0);
  assert_floats((float[]){58, 64, 139, 154}, d, 4);
  apply(BFRT_MATMUL_ACC, view(d, 2, 2), view(a, 2, 3), view(b, 3, 2), 0);
  assert_floats((float[]){116, 128, 278, 308}, d, 4);
  /* in place: acc = acc · acc must use the old acc throughout */
  float m[4] = {1, 2, 3, 4};
  apply(BFRT_MATMUL, view(m, 2, 2), view(m, 2, 2), view(m, 2, 2), 0);
  assert_floats((float[]){7, 10, 15, 22}, m, 4);
  /* the accumulation order is k = 0 .. K-1 from 0: (1e8 + 1) - 1e8 = 0 in f32 */
  float x[3] = {1e8f, 1, -1e8f}, ones[3] = {1, 1, 1}, s;
  apply(BFRT_MATMUL, view(&s, 1, 1), view(x, 1, 3), view(ones, 3, 1), 0);
  assert_floats((float[]){0}, &s, 1);
}

/* The nki.isa instructions, each checked by hand. V(...) is the operand
 * list: views where the op takes a tile, immediates (and names' codes)
 * where it takes one. */
static void isa(int op, SemView v0, SemView v1, SemView v2, SemView v3, SemView v4, SemView v5,
                const float imms[BFRT_MAX_OPERANDS]) {
  SemView v[BFRT_MAX_OPERANDS] = {v0, v1, v2, v3, v4, v5};
  float i[BFRT_MAX_OPERANDS] = {0};
  for (int k = 0; k < BFRT_MAX_OPERANDS; k++) i[k] = imms ? imms[k] : 0;
  sem_apply(op, v, i);
}

static void test_nc_matmul(void **state) {
  (void)state;
  /* stationary [K=3, M=2], moving [K=3, N=2]: d = st^T mv */
  float st[6] = {1, 4, 2, 5, 3, 6}, mv[6] = {7, 8, 9, 10, 11, 12}, d[4];
  isa(BFRT_NC_MATMUL, view(d, 2, 2), view(st, 3, 2), view(mv, 3, 2), none, none, none, NULL);
  assert_floats((float[]){58, 64, 139, 154}, d, 4); /* the a . b of test_matmul with a = st^T */
  isa(BFRT_NC_MATMUL_ACC, view(d, 2, 2), view(st, 3, 2), view(mv, 3, 2), none, none, none, NULL);
  assert_floats((float[]){116, 128, 278, 308}, d, 4);
  /* k = 0 .. K-1 in order from 0: (1e8 + 1) - 1e8 = 0 */
  float x[3] = {1e8f, 1, -1e8f}, ones[3] = {1, 1, 1}, s;
  isa(BFRT_NC_MATMUL, view(&s, 1, 1), view(x, 3, 1), view(ones, 3, 1), none, none, none, NULL);
  assert_floats((float[]){0}, &s, 1);
}

static void test_iota_select(void **state) {
  (void)state;
  float d[6];
  /* iota d, step 10, offset 1, channel_multiplier 100: 1 + 100 p + 10 j */
  isa(BFRT_IOTA, view(d, 2, 3), none, none, none, none, none, (float[BFRT_MAX_OPERANDS]){0, 10, 1, 100});
  assert_floats((float[]){1, 11, 21, 101, 111, 121}, d, 6);
  /* the causal mask: keep s[p, j] where p - j >= 0 */
  float s[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, m[9];
  isa(BFRT_AFFINE_SELECT, view(m, 3, 3), none, none, none, view(s, 3, 3), none,
      (float[BFRT_MAX_OPERANDS]){0, -1, 0, 1, 0, -9984, BFRT_ALU_GREATER_EQUAL});
  assert_floats((float[]){1, -9984, -9984, 4, 5, -9984, 7, 8, 9}, m, 9);
  /* strictly above the diagonal shifted by one: p - j + 1 < 0 */
  isa(BFRT_AFFINE_SELECT, view(m, 3, 3), none, none, none, view(s, 3, 3), none,
      (float[BFRT_MAX_OPERANDS]){0, -1, 1, 1, 0, 0, BFRT_ALU_LESS});
  assert_floats((float[]){0, 0, 3, 0, 0, 0, 0, 0, 0}, m, 9);
  float f[2];
  isa(BFRT_MEMSET, view(f, 1, 2), none, none, none, none, none, (float[BFRT_MAX_OPERANDS]){0, 2.5f});
  assert_floats((float[]){2.5f, 2.5f}, f, 2);
}

static void test_reduce_scalar(void **state) {
  (void)state;
  float s[6] = {1, -5, 3, 2, 8, -1}, r[2];
  isa(BFRT_TENSOR_REDUCE, view(r, 2, 1), none, view(s, 2, 3), none, none, none, (float[BFRT_MAX_OPERANDS]){0, BFRT_ALU_ADD});
  assert_floats((float[]){-1, 9}, r, 2);
  isa(BFRT_TENSOR_REDUCE_NEG, view(r, 2, 1), none, view(s, 2, 3), none, none, none, (float[BFRT_MAX_OPERANDS]){0, BFRT_ALU_MAXIMUM, 0, 1});
  assert_floats((float[]){-3, -8}, r, 2);
  isa(BFRT_TENSOR_REDUCE, view(r, 2, 1), none, view(s, 2, 3), none, none, none, (float[BFRT_MAX_OPERANDS]){0, BFRT_ALU_MINIMUM});
  assert_floats((float[]){-5, -1}, r, 2);
  /* (s - 1) * 2, then (s - v[p]) * v[p] with v = [2, 3] */
  float d[6], v[2] = {2, 3};
  isa(BFRT_TENSOR_SCALAR2, view(d, 2, 3), view(s, 2, 3), none, none, none, none,
      (float[BFRT_MAX_OPERANDS]){0, 0, BFRT_ALU_SUBTRACT, 1, BFRT_ALU_MULTIPLY, 2});
  assert_floats((float[]){0, -12, 4, 2, 14, -4}, d, 6);
  isa(BFRT_TENSOR_SCALAR2_V, view(d, 2, 3), view(s, 2, 3), none, view(v, 2, 1), none, view(v, 2, 1),
      (float[BFRT_MAX_OPERANDS]){0, 0, BFRT_ALU_SUBTRACT, 0, BFRT_ALU_MULTIPLY});
  assert_floats((float[]){-2, -14, 2, -3, 15, -12}, d, 6);
  isa(BFRT_TENSOR_SCALAR, view(d, 2, 3), view(s, 2, 3), none, none, none, none, (float[BFRT_MAX_OPERANDS]){0, 0, BFRT_ALU_GREATER_EQUAL, 2});
  assert_floats((float[]){0, 0, 1, 1, 1, 0}, d, 6);
}

static void test_activation_scan(void **state) {
  (void)state;
  /* relu(s * 2 + b[p]), b = [-3, 1]; the accumulator adds each row's results */
  float s[4] = {1, 2, -1, 3}, b[2] = {-3, 1}, d[4], acc[2] = {10, 20};
  isa(BFRT_ACTIVATION_ACC, view(d, 2, 2), none, view(s, 2, 2), view(b, 2, 1), none, view(acc, 2, 1),
      (float[BFRT_MAX_OPERANDS]){0, BFRT_FN_RELU, 0, 0, 2});
  assert_floats((float[]){0, 1, 0, 7}, d, 4);
  assert_floats((float[]){11, 27}, acc, 2);
  isa(BFRT_ACTIVATION, view(d, 2, 2), none, view(s, 2, 2), none, none, none, (float[BFRT_MAX_OPERANDS]){0, BFRT_FN_SQUARE});
  assert_floats((float[]){1, 4, 1, 9}, d, 4);
  /* r = (a[j] * r) + b[j] from 1: the recurrence of a linear scan */
  float a[3] = {2, 3, 0.5f}, c[3] = {1, -1, 4}, out[3];
  isa(BFRT_TENSOR_TENSOR_SCAN, view(out, 1, 3), view(a, 1, 3), view(c, 1, 3), none, none, none,
      (float[BFRT_MAX_OPERANDS]){0, 0, 0, 1, BFRT_ALU_MULTIPLY, BFRT_ALU_ADD});
  assert_floats((float[]){3, 8, 8}, out, 3);
  /* a running sum from a per-partition initial: op0 add, op1 add with c = 0 */
  float zero[3] = {0}, init = 100;
  isa(BFRT_TENSOR_TENSOR_SCAN_V, view(out, 1, 3), view(a, 1, 3), view(zero, 1, 3), view(&init, 1, 1), none, none,
      (float[BFRT_MAX_OPERANDS]){0, 0, 0, 0, BFRT_ALU_ADD, BFRT_ALU_ADD});
  assert_floats((float[]){102, 105, 105.5f}, out, 3);
}

static void test_bn_stats_aggr(void **state) {
  (void)state;
  /* even elements 1, 3, 5: mean 3, M2 8; odd 2, 6: mean 4, M2 8 */
  float s[5] = {1, 2, 3, 6, 5}, st[6], mv[2];
  isa(BFRT_BN_STATS, view(st, 1, 6), view(s, 1, 5), none, none, none, none, NULL);
  assert_floats((float[]){3, 3, 8, 2, 4, 8}, st, 6);
  /* all five: mean 17/5 = 3.4, variance (8 + 8 + 3 0.16 + 2 0.36) / 5 = 3.44 */
  isa(BFRT_BN_AGGR, view(mv, 1, 2), view(st, 1, 6), none, none, none, none, NULL);
  assert_true(fabsf(mv[0] - 3.4f) < 1e-6f && fabsf(mv[1] - 3.44f) < 1e-5f);
  /* one element: the odd half is empty, count 0, mean 0, M2 0 */
  isa(BFRT_BN_STATS, view(st, 1, 6), view(s, 1, 1), none, none, none, none, NULL);
  assert_floats((float[]){1, 1, 0, 0, 0, 0}, st, 6);
  /* permute: each row [A = 2, B = 3] read as [3, 2]: 0 1 2 | 3 4 5 -> 0 3 1 4 2 5, also in place */
  float row[12] = {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15}, perm[12];
  isa(BFRT_PERMUTE, view(perm, 2, 6), view(row, 2, 6), none, none, none, none, (float[BFRT_MAX_OPERANDS]){0, 0, 2});
  assert_floats((float[]){0, 3, 1, 4, 2, 5, 10, 13, 11, 14, 12, 15}, perm, 12);
  isa(BFRT_PERMUTE, view(row, 2, 6), view(row, 2, 6), none, none, none, none, (float[BFRT_MAX_OPERANDS]){0, 0, 3});
  assert_floats((float[]){0, 2, 4, 1, 3, 5, 10, 12, 14, 11, 13, 15}, row, 12);
  float t[4] = {1, 2, 3, 4};
  isa(BFRT_NC_TRANSPOSE, view(st, 2, 2), view(t, 2, 2), none, none, none, none, NULL);
  assert_floats((float[]){1, 3, 2, 4}, st, 4);
}

/* ops.def's roles against what the ops do: for every op and every memory
 * operand, whether the results depend on its contents (it is read) and
 * whether the op changes it (it is written) must be what its role
 * declares. A role declared wrong (an accumulator declared written only,
 * a written operand declared read) fails here, before any analysis
 * trusts it. */
enum { ROLE_CELLS = 4 * 6 };

static void role_shape(int op, int i, int64_t *rows, int64_t *cols) {
  const OpInfo *info = &rt_ops[op];
  *rows = 4, *cols = 4;
  bool scalar = info->operands[i] == 'T' &&
                ((info->shape == SHAPE_SCALAR && i >= 2) || ((info->shape == SHAPE_ACTIVATION || info->shape == SHAPE_SCAN) && i >= 3));
  if ((i == 0 && (info->shape == SHAPE_ROWREDUCE || info->shape == SHAPE_ROWREDUCE_OF)) || scalar ||
      (i == 2 && info->shape == SHAPE_ROWBCAST))
    *cols = 1;
  if (i == 2 && info->shape == SHAPE_COLBCAST) *rows = 1;
  if ((i == 0 && info->shape == SHAPE_BN_STATS) || (i == 1 && info->shape == SHAPE_BN_AGGR)) *cols = 6;
  if (i == 0 && info->shape == SHAPE_BN_AGGR) *cols = 2;
}

static void role_fill(float *cells, uint64_t *seed) {
  for (int k = 0; k < ROLE_CELLS; k++) {
    *seed = *seed * 6364136223846793005u + 1442695040888963407u;
    cells[k] = 0.5f + (float)(*seed >> 40) / (float)(1u << 24); /* in [0.5, 1.5): no relu or sqrt edge */
  }
}

/* Runs op with operand `vary` filled from seed, the others from fixed
 * contents (the roles play no part in the setup); the results in out. */
static void role_run(int op, int vary, uint64_t seed, float out[BFRT_MAX_OPERANDS][ROLE_CELLS]) {
  const OpInfo *info = &rt_ops[op];
  SemView v[BFRT_MAX_OPERANDS] = {{0}};
  float imms[BFRT_MAX_OPERANDS] = {0};
  for (int i = 0; info->operands[i]; i++) {
    char role = info->roles[i];
    imms[i] = role == 'o' ? (op == BFRT_AFFINE_SELECT ? BFRT_ALU_GREATER_EQUAL : BFRT_ALU_MULTIPLY)
              : role == 'f' ? BFRT_FN_EXP
              : role == 'n' ? 1
                            : (op == BFRT_AFFINE_SELECT || op == BFRT_IOTA) && i >= 1 && i <= 3 ? (i == 1 ? -1 : i == 2 ? 0 : 1)
                            : op == BFRT_PERMUTE ? 2 /* groups dividing the 4 columns */
                                                 : 0.75f;
    if (info->operands[i] == 'F') continue;
    uint64_t s = i == vary ? seed : 1000 + (uint64_t)i;
    role_fill(out[i], &s);
    int64_t rows, cols;
    role_shape(op, i, &rows, &cols);
    for (int64_t k = rows * cols; k < ROLE_CELLS; k++) out[i][k] = 0; /* outside the view: never compared apart */
    v[i] = (SemView){out[i], rows, cols, cols, BFRT_DTYPE_F32, 0};
  }
  sem_apply(op, v, imms);
}

static void test_roles_match_semantics(void **state) {
  (void)state;
  for (int op = 0; op < BFRT_NOPS; op++) {
    const OpInfo *info = &rt_ops[op];
    for (int i = 0; info->operands[i]; i++) {
      if (info->operands[i] == 'F') continue;
      float a[BFRT_MAX_OPERANDS][ROLE_CELLS], b[BFRT_MAX_OPERANDS][ROLE_CELLS], before[ROLE_CELLS];
      role_run(op, i, 1, a);
      role_run(op, i, 2, b);
      uint64_t seed = 1;
      role_fill(before, &seed);
      int64_t rows, cols;
      role_shape(op, i, &rows, &cols);
      for (int64_t k = rows * cols; k < ROLE_CELLS; k++) before[k] = 0;
      bool depends = false, changed = memcmp(before, a[i], sizeof before) != 0;
      for (int j = 0; info->operands[j]; j++)
        if (j != i && info->operands[j] != 'F' && bfrt_op_writes(op, j)) depends |= memcmp(a[j], b[j], sizeof a[j]) != 0;
      if (bfrt_op_writes(op, i)) depends |= memcmp(a[i], b[i], sizeof a[i]) != 0; /* an accumulator's own result */
      if (depends != (bfrt_op_reads(op, i) != 0) || changed != (bfrt_op_writes(op, i) != 0))
        fail_msg("%s operand %d (role %c): results %s on it, and it is %s", info->name, i, info->roles[i],
                 depends ? "depend" : "do not depend", changed ? "changed" : "unchanged");
    }
  }
}

static void test_transpose_and_strides(void **state) {
  (void)state;
  float s[6] = {1, 2, 3, 4, 5, 6}, d[6];
  apply(BFRT_TRANSPOSE, view(d, 3, 2), view(s, 2, 3), none, 0);
  assert_floats((float[]){1, 4, 2, 5, 3, 6}, d, 6);
  float sq[4] = {1, 2, 3, 4};
  apply(BFRT_TRANSPOSE, view(sq, 2, 2), view(sq, 2, 2), none, 0);
  assert_floats((float[]){1, 3, 2, 4}, sq, 4);
  /* a 2x2 window at (1, 2) of a 3x4 tensor, as an hbm tile is */
  float big[12] = {0}, t[4] = {1, 2, 3, 4};
  SemView w = {big + 1 * 4 + 2, 2, 2, 4, BFRT_DTYPE_F32, 0};
  apply(BFRT_STORE, w, view(t, 2, 2), none, 0);
  assert_floats((float[]){0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4}, big, 12);
  float back[4];
  apply(BFRT_LOAD, view(back, 2, 2), w, none, 0);
  assert_floats(t, back, 4);
}

/* ---- Hand-written kernels. */

enum { DMA, ACT };
static const char *const two_engines[] = {"dma", "act"};
static const int two_kinds[] = {BFRT_KIND_DMA, BFRT_KIND_ACT};
static const char *const n_param[] = {"N"};

/* scale2(N): Y = 2 X, tile by tile, through a 2-slot x and one y:
 *   for i in 0 .. N { dma: load x[i % 2], X[i, 0]; act: scale y, x[i % 2], 2; dma: store Y[i, 0], y; }
 * dma runs load, store per iteration; act runs scale. */
static const bfrt_tile_desc scale2_tiles[] = {{"x", 2, 2, 3, BFRT_DTYPE_F32}, {"y", 1, 2, 3, BFRT_DTYPE_F32}};
static const bfrt_tensor_desc scale2_tensors[] = {{"X", BFRT_IN, BFRT_DTYPE_F32}, {"Y", BFRT_OUT, BFRT_DTYPE_F32}};

static int scale2_shape(const int64_t *p, int t, int64_t shape[2]) {
  (void)t;
  shape[0] = 2 * p[0];
  shape[1] = 3;
  return 0;
}

static void scale2_dma(bfrt_ctx *cx, const int64_t *p) {
  for (int64_t i = 0; i < p[0]; i++) {
    if (i >= 2) bfrt_wait(cx, ACT, i - 1, 2); /* WAR on x[i % 2] */
    bfrt_arg load[] = {BFRT_TILE(0, i % 2), BFRT_HBM(0, i, 0)};
    bfrt_op(cx, BFRT_LOAD, 2, 2, load);
    bfrt_wait(cx, ACT, i + 1, 4); /* RAW on y */
    bfrt_arg store[] = {BFRT_HBM(1, i, 0), BFRT_TILE(1, 0)};
    bfrt_op(cx, BFRT_STORE, 4, 2, store);
  }
}

static void scale2_act(bfrt_ctx *cx, const int64_t *p) {
  int64_t *seen = bfrt_scratch(cx, 4);
  for (int64_t i = 0; i < p[0]; i++) {
    bfrt_wait(cx, DMA, 2 * i + 1, 3); /* RAW on x, WAR on y */
    bfrt_bookkeep(cx, 2);
    seen[i % 4] += 1 + seen[(i + 3) % 4];
    bfrt_arg scale[] = {BFRT_TILE(1, 0), BFRT_TILE(0, i % 2), BFRT_IMM(2.0f)};
    bfrt_op(cx, BFRT_SCALE, 3, 3, scale);
  }
}

static void (*const scale2_entry[])(bfrt_ctx *, const int64_t *) = {scale2_dma, scale2_act};

static const bfrt_kernel scale2 = {"scale2", 1, n_param, 2, two_engines, two_kinds, scale2_entry,
                                   2, scale2_tiles, 2, scale2_tensors, scale2_shape, 0, NULL};

static bfrt *new_scale2(int64_t n) {
  const char *err = NULL;
  bfrt *rt = bfrt_new(&scale2, &n, &err);
  assert_non_null(rt);
  int64_t shape[2];
  bfrt_tensor_shape(rt, 0, shape);
  assert_int_equal(shape[0], 2 * n);
  assert_int_equal(shape[1], 3);
  float *x = bfrt_tensor_data(rt, 0);
  for (int64_t i = 0; i < shape[0] * shape[1]; i++) x[i] = (float)i - 7.5f;
  return rt;
}

static void assert_scaled(bfrt *rt, int64_t n) {
  const float *x = bfrt_tensor_data(rt, 0), *y = bfrt_tensor_data(rt, 1);
  for (int64_t i = 0; i < 2 * n * 3; i++)
    if (y[i] != 2 * x[i]) fail_msg("Y[%lld] = %g, want %g", (long long)i, y[i], 2 * x[i]);
}

static void test_threads_run(void **state) {
  (void)state;
  for (int64_t n = 0; n <= 5; n++) {
    bfrt *rt = new_scale2(n);
    bfrt_options opt = {0};
    assert_int_equal(bfrt_run(rt, &opt), 0);
    assert_string_equal(bfrt_error(rt), "");
    assert_scaled(rt, n);
    const bfrt_stats *s = bfrt_get_stats(rt);
    assert_int_equal(s->instructions, 3 * n);
    assert_int_equal(s->waits, n + (n > 2 ? n - 2 : 0) + n);
    assert_int_equal(s->bookkeeping, 2 * n);
    assert_int_equal(s->barriers, 0);
    bfrt_delete(rt);
  }
}

/* bfrt_new_timing: the same cycles and statistics as a data-holding
 * instance on the simulator, float tensors without data, nothing written;
 * refused on threads and with the race checker; max_instructions bounds a
 * run. */
static void test_timing_only(void **state) {
  (void)state;
  bfrt_costs costs = {.clock_ghz = 1};
  for (int k = 0; k < BFRT_NKINDS; k++)
    costs.kind[k] = (bfrt_engine_cost){.overhead = 3 + k, .wait_cost = 2, .bookkeep_cost = 5, .sem_latency = 1};
  for (int64_t n = 0; n <= 5; n++) {
    bfrt *data = new_scale2(n);
    bfrt_options opt = {.exec = BFRT_EXEC_SIM, .costs = &costs};
    assert_int_equal(bfrt_run(data, &opt), 0);
    const char *err = NULL;
    bfrt *timing = bfrt_new_timing(&scale2, &n, &err);
    assert_non_null(timing);
    assert_null(bfrt_tensor_data(timing, 0));
    assert_null(bfrt_tensor_data(timing, 1));
    assert_int_equal(bfrt_run(timing, &opt), 0);
    const bfrt_stats *a = bfrt_get_stats(data), *b = bfrt_get_stats(timing);
    assert_int_equal(a->cycles, b->cycles);
    assert_int_equal(a->instructions, b->instructions);
    assert_int_equal(a->waits, b->waits);
    assert_int_equal(a->bookkeeping, b->bookkeeping);
    for (int e = 0; e < 2; e++) {
      assert_int_equal(a->busy[e], b->busy[e]);
      assert_int_equal(a->stall[e], b->stall[e]);
    }
    if (n == 5) {
      assert_true(a->cycles > 0);
      bfrt_options threads = {0}, checked = {.exec = BFRT_EXEC_SIM, .costs = &costs, .check = 1};
      assert_int_equal(bfrt_run(timing, &threads), -1);
      assert_non_null(strstr(bfrt_error(timing), "runs only on the simulator"));
      assert_int_equal(bfrt_run(timing, &checked), -1);
      bfrt_options bounded = {.exec = BFRT_EXEC_SIM, .costs = &costs, .max_instructions = 4};
      assert_int_equal(bfrt_run(timing, &bounded), -1);
      assert_non_null(strstr(bfrt_error(timing), "more than 4 instructions"));
      bounded.max_instructions = 10; /* dma runs 2 n = 10 */
      assert_int_equal(bfrt_run(timing, &bounded), 0);
    }
    bfrt_delete(data);
    bfrt_delete(timing);
  }
}

static void test_jitter_runs(void **state) {
  (void)state;
  bfrt *rt = new_scale2(12);
  for (uint64_t seed = 1; seed <= 60; seed++) {
    float *y = bfrt_tensor_data(rt, 1);
    memset(y, 0, 2 * 12 * 3 * sizeof *y);
    bfrt_options opt = {.jitter_seed = seed};
    assert_int_equal(bfrt_run(rt, &opt), 0);
    assert_scaled(rt, 12);
    assert_int_equal(bfrt_get_stats(rt)->instructions, 36);
  }
  bfrt_delete(rt);
}

static void test_null_options_and_rerun(void **state) {
  (void)state;
  bfrt *rt = new_scale2(3);
  assert_int_equal(bfrt_run(rt, NULL), 0);
  assert_int_equal(bfrt_run(rt, NULL), 0);
  assert_scaled(rt, 3);
  assert_int_equal(bfrt_get_stats(rt)->instructions, 9); /* per run, not cumulative */
  bfrt_delete(rt);
}

/* ring(N): five engines pass a token around N times; engine e's i-th op
 * waits for engine e-1's i-th (engine 0 for engine 4's (i-1)-th). Every
 * hand-off wakes a sleeping or yielding engine: a lost wake-up would end
 * in the watchdog. */
static const char *const ring_engines[] = {"pe", "act", "dve", "pool", "dma"};
static const int ring_kinds[] = {BFRT_KIND_PE, BFRT_KIND_ACT, BFRT_KIND_DVE, BFRT_KIND_POOL, BFRT_KIND_DMA};
static const bfrt_tile_desc ring_tiles[] = {{"t", 5, 1, 1, BFRT_DTYPE_F32}};

static void ring_engine(bfrt_ctx *cx, const int64_t *p, int e) {
  bfrt_arg fill[] = {BFRT_TILE(0, e), BFRT_IMM((float)e)};
  for (int64_t i = 0; i < p[0]; i++) {
    if (e > 0) bfrt_wait(cx, e - 1, i + 1, 10 + e);
    if (e == 0 && i > 0) bfrt_wait(cx, 4, i, 10);
    bfrt_op(cx, BFRT_FILL, 20 + e, 2, fill);
  }
}

static void ring0(bfrt_ctx *cx, const int64_t *p) { ring_engine(cx, p, 0); }
static void ring1(bfrt_ctx *cx, const int64_t *p) { ring_engine(cx, p, 1); }
static void ring2(bfrt_ctx *cx, const int64_t *p) { ring_engine(cx, p, 2); }
static void ring3(bfrt_ctx *cx, const int64_t *p) { ring_engine(cx, p, 3); }
static void ring4(bfrt_ctx *cx, const int64_t *p) { ring_engine(cx, p, 4); }

static void (*const ring_entry[])(bfrt_ctx *, const int64_t *) = {ring0, ring1, ring2, ring3, ring4};
static const bfrt_kernel ring = {"ring", 1, n_param, 5, ring_engines, ring_kinds, ring_entry,
                                 1, ring_tiles, 0, NULL, NULL, 0, NULL};

static void test_ring_handoffs(void **state) {
  (void)state;
  const char *err = NULL;
  bfrt *rt = bfrt_new(&ring, (int64_t[]){400}, &err);
  assert_non_null(rt);
  for (uint64_t seed = 0; seed < 4; seed++) {
    bfrt_options opt = {.jitter_seed = seed};
    if (bfrt_run(rt, &opt)) fail_msg("%s", bfrt_error(rt));
    assert_int_equal(bfrt_get_stats(rt)->instructions, 5 * 400);
    assert_int_equal(bfrt_get_stats(rt)->waits, 5 * 400 - 1);
  }
  bfrt_delete(rt);
}

/* The low bits extend from what was last seen: exact while the count is
 * less than 2^bits past it, a multiple of 2^bits short beyond; 64 bits
 * (or 0) is the raw count itself. */
static void test_counter_extend(void **state) {
  (void)state;
  assert_int_equal(bfrt_counter_extend(0, 0, 4), 0);
  assert_int_equal(bfrt_counter_extend(10, 16 & 15, 4), 16);  /* wrapped to 0 */
  assert_int_equal(bfrt_counter_extend(10, 25 & 15, 4), 25);  /* 15 past: still exact */
  assert_int_equal(bfrt_counter_extend(10, 26 & 15, 4), 10);  /* 16 past: reads as none */
  assert_int_equal(bfrt_counter_extend(16, 16 & 15, 4), 16);
  assert_int_equal(bfrt_counter_extend(250, 300 & 255, 8), 300);
  assert_int_equal(bfrt_counter_extend(7, INT64_C(1) << 40, 64), INT64_C(1) << 40);
  assert_int_equal(bfrt_counter_extend(7, 5, 0), 5); /* 0: 64 bits */
}

/* ring with 4-bit counters: 400 rounds wrap every counter 25 times, and
 * each engine is at most one op ahead of its consumer, so the window holds
 * and the hand-offs stay exact on both executors. */
static const bfrt_kernel ring4bit = {"ring", 1, n_param, 5, ring_engines, ring_kinds, ring_entry,
                                     1, ring_tiles, 0, NULL, NULL, 4, NULL};

static void test_ring_wraps_narrow_counters(void **state) {
  (void)state;
  const char *err = NULL;
  bfrt *rt = bfrt_new(&ring4bit, (int64_t[]){400}, &err);
  assert_non_null(rt);
  bfrt_costs costs = {.clock_ghz = 1};
  for (int k = 0; k < BFRT_NKINDS; k++) costs.kind[k] = (bfrt_engine_cost){.overhead = 3 + k, .wait_cost = 1};
  for (uint64_t seed = 0; seed < 4; seed++) {
    bfrt_options opt = {.jitter_seed = seed, .check = 1};
    if (seed == 3) opt = (bfrt_options){.exec = BFRT_EXEC_SIM, .costs = &costs, .check = 1};
    if (bfrt_run(rt, &opt)) fail_msg("%s", bfrt_error(rt));
    assert_int_equal(bfrt_get_stats(rt)->instructions, 5 * 400);
    assert_int_equal(bfrt_get_stats(rt)->races, 0);
  }
  bfrt_delete(rt);
}

/* ---- Errors. */

/* softmax-like: Y is f32[R * 32, 96]; dma stores tile (p[1], 0) at line 7 while
 * act waits for a completion that will never come. */
static const bfrt_tile_desc wide_tiles[] = {{"y", 2, 32, 96, BFRT_DTYPE_F32}};
static const bfrt_tensor_desc wide_tensors[] = {{"Y", BFRT_OUT, BFRT_DTYPE_F32}};
static const char *const rc_params[] = {"R", "C", "D"};

static int wide_shape(const int64_t *p, int t, int64_t shape[2]) {
  (void)t;
  shape[0] = p[0] * 32;
  shape[1] = 96;
  return 0;
}

static void bad_store_dma(bfrt_ctx *cx, const int64_t *p) {
  bfrt_arg store[] = {BFRT_HBM(0, p[1], p[2]), BFRT_TILE(0, 0)};
  bfrt_op(cx, BFRT_STORE, 7, 2, store);
}

static void bad_store_act(bfrt_ctx *cx, const int64_t *p) {
  (void)p;
  bfrt_wait(cx, DMA, 100, 9);
}

static void (*const bad_store_entry[])(bfrt_ctx *, const int64_t *) = {bad_store_dma, bad_store_act};
static const bfrt_kernel bad_store = {"softmax", 3, rc_params, 2, two_engines, two_kinds, bad_store_entry,
                                      1, wide_tiles, 1, wide_tensors, wide_shape, 0, NULL};

static void expect_failure(const bfrt_kernel *k, const int64_t *params, const bfrt_options *opt,
                           const char *want) {
  const char *err = NULL;
  bfrt *rt = bfrt_new(k, params, &err);
  assert_non_null(rt);
  assert_int_equal(bfrt_run(rt, opt), -1);
  if (!strstr(bfrt_error(rt), want)) fail_msg("error\n%s\ndoes not contain\n%s", bfrt_error(rt), want);
  bfrt_delete(rt);
}

static void test_bounds_error(void **state) {
  (void)state;
  bfrt_options opt = {.watchdog_seconds = 30}; /* the error, not the watchdog, must end it */
  expect_failure(&bad_store, (int64_t[]){5, 5, 0}, &opt,
                 "kernel softmax, line 7: store to Y[5, 0] is out of bounds (rows 160..191 of 160)");
  expect_failure(&bad_store, (int64_t[]){5, 0, 1}, &opt,
                 "kernel softmax, line 7: store to Y[0, 1] is out of bounds (cols 96..191 of 96)");
  expect_failure(&bad_store, (int64_t[]){5, -1, 0}, &opt,
                 "kernel softmax, line 7: store to Y[-1, 0] is out of bounds (rows -32..-1 of 160)");
  expect_failure(&bad_store, (int64_t[]){0, 0, 0}, &opt,
                 "kernel softmax, line 7: store to Y[0, 0] is out of bounds (rows 0..31 of 0)");
  expect_failure(&bad_store, (int64_t[]){5, INT64_MAX, 0}, &opt, "is out of bounds (rows tile");
  /* in bounds: the store succeeds, then act's wait can never be satisfied */
  bfrt_options quick = {.watchdog_seconds = 0.2};
  expect_failure(&bad_store, (int64_t[]){5, 4, 0}, &quick, "waits for dma's counter >= 100 (it is 1)");
}

static void bad_slot_dma(bfrt_ctx *cx, const int64_t *p) {
  bfrt_arg fill[] = {BFRT_TILE(0, p[1]), BFRT_IMM(1.0f)};
  bfrt_op(cx, BFRT_FILL, 12, 2, fill);
}

static void idle(bfrt_ctx *cx, const int64_t *p) {
  (void)cx;
  (void)p;
}

static void (*const bad_slot_entry[])(bfrt_ctx *, const int64_t *) = {bad_slot_dma, idle};
static const bfrt_kernel bad_slot = {"slots", 3, rc_params, 2, two_engines, two_kinds, bad_slot_entry,
                                     1, wide_tiles, 1, wide_tensors, wide_shape, 0, NULL};

static void test_slot_error(void **state) {
  (void)state;
  expect_failure(&bad_slot, (int64_t[]){1, 2, 0}, NULL, "kernel slots, line 12: fill: slot y[2] is out of range (2 slots)");
  expect_failure(&bad_slot, (int64_t[]){1, -1, 0}, NULL, "kernel slots, line 12: fill: slot y[-1] is out of range");
}

static void bad_operands_dma(bfrt_ctx *cx, const int64_t *p) {
  bfrt_arg args[] = {BFRT_TILE(0, 0), BFRT_TILE(0, 1), BFRT_TILE(0, 1)};
  bfrt_op(cx, (int)p[0], 5, (int)p[1], args);
}

static void (*const bad_operands_entry[])(bfrt_ctx *, const int64_t *) = {bad_operands_dma, idle};
static const bfrt_kernel bad_operands = {"ops", 3, rc_params, 2, two_engines, two_kinds, bad_operands_entry,
                                         1, wide_tiles, 1, wide_tensors, wide_shape, 0, NULL};

static void test_bad_operands(void **state) {
  (void)state;
  expect_failure(&bad_operands, (int64_t[]){BFRT_NOPS, 3, 0}, NULL, "kernel ops, line 5: unknown op");
  expect_failure(&bad_operands, (int64_t[]){BFRT_ADD, 2, 0}, NULL, "add takes 3 operands, not 2");
  expect_failure(&bad_operands, (int64_t[]){BFRT_LOAD, 2, 0}, NULL, "load: operand 1 has the wrong kind");
  /* [32,96] · [32,96] has mismatched inner dimensions */
  expect_failure(&bad_operands, (int64_t[]){BFRT_MATMUL, 3, 0}, NULL, "matmul: operand shapes do not fit");
  expect_failure(&bad_operands, (int64_t[]){BFRT_ROWSUM, 2, 0}, NULL, "rowsum: operand shapes do not fit");
}

static void divide_dma(bfrt_ctx *cx, const int64_t *p) {
  int64_t *out = bfrt_scratch(cx, 1);
  out[0] = bfrt_div(cx, 5, p[0], 9) + bfrt_mod(cx, 5, p[1], 10);
}

static void (*const divide_entry[])(bfrt_ctx *, const int64_t *) = {divide_dma, bad_store_act};
static const bfrt_kernel divide = {"div", 3, rc_params, 2, two_engines, two_kinds, divide_entry,
                                   1, wide_tiles, 1, wide_tensors, wide_shape, 0, NULL};

static void test_division_by_zero(void **state) {
  (void)state;
  bfrt_options opt = {.watchdog_seconds = 30};
  expect_failure(&divide, (int64_t[]){0, 1, 0}, &opt, "kernel div, line 9: division by zero (5 / 0)");
  expect_failure(&divide, (int64_t[]){1, 0, 0}, &opt, "kernel div, line 10: division by zero (5 / 0)");
}

static void floor_dma(bfrt_ctx *cx, const int64_t *p) {
  (void)p;
  static const int64_t cases[][4] = {{7, 2, 3, 1},   {-7, 2, -4, 1}, {7, -2, -4, -1},
                                     {-7, -2, 3, -1}, {-1, 2, -1, 1}, {6, 3, 2, 0},
                                     {INT64_MIN, -1, INT64_MIN, 0}, {INT64_MIN, 1, INT64_MIN, 0},
                                     {INT64_MAX, -1, -INT64_MAX, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const int64_t *c = cases[i];
    if (bfrt_div(cx, c[0], c[1], 1) != c[2]) bfrt_div(cx, 1, 0, 100 + (int)i);
    if (bfrt_mod(cx, c[0], c[1], 1) != c[3]) bfrt_div(cx, 1, 0, 200 + (int)i);
  }
  bfrt_div(cx, 1, 0, 300);
}

static void (*const floor_entry[])(bfrt_ctx *, const int64_t *) = {floor_dma, idle};
static const bfrt_kernel floors = {"floor", 3, rc_params, 2, two_engines, two_kinds, floor_entry,
                                   1, wide_tiles, 1, wide_tensors, wide_shape, 0, NULL};

/* floor_dma fails at line 100+i / 200+i on a wrong quotient / remainder, and
 * at line 300 (a zero divisor) when they are all right. INT64_MIN / -1
 * wraps to INT64_MIN, as in the reference and the oracle (issue 9). */
static void test_floor_division(void **state) {
  (void)state;
  expect_failure(&floors, (int64_t[]){1, 1, 0}, NULL, "kernel floor, line 300: division by zero");
}

/* ---- Deadlocks and barriers. */

static void stuck_dma(bfrt_ctx *cx, const int64_t *p) {
  (void)p;
  bfrt_arg fill[] = {BFRT_TILE(0, 0), BFRT_IMM(1.0f)};
  bfrt_op(cx, BFRT_FILL, 2, 2, fill);
}

static void stuck_act(bfrt_ctx *cx, const int64_t *p) {
  (void)p;
  bfrt_wait(cx, DMA, 5, 3);
}

static void (*const stuck_entry[])(bfrt_ctx *, const int64_t *) = {stuck_dma, stuck_act};
static const bfrt_kernel stuck = {"stuck", 3, rc_params, 2, two_engines, two_kinds, stuck_entry,
                                  1, wide_tiles, 1, wide_tensors, wide_shape, 0, NULL};

static void test_watchdog(void **state) {
  (void)state;
  const char *err = NULL;
  bfrt *rt = bfrt_new(&stuck, (int64_t[]){1, 0, 0}, &err);
  bfrt_options opt = {.watchdog_seconds = 0.3};
  assert_int_equal(bfrt_run(rt, &opt), -1);
  const char *msg = bfrt_error(rt);
  assert_non_null(strstr(msg, "kernel stuck: deadlock: no engine made progress for 0.3 s"));
  assert_non_null(strstr(msg, "engine act, line 3: waits for dma's counter >= 5 (it is 1)"));
  assert_non_null(strstr(msg, "engine dma: finished"));
  assert_non_null(strstr(msg, "counters: dma=1 act=0"));
  assert_int_equal(bfrt_get_stats(rt)->waits, 1);
  bfrt_delete(rt);
}

/* Issue 20: bfrt_tensor_find(rt, NULL) crashed. The queries answer a NULL
 * name, a NULL shape, a NULL kernel and indices out of range. */
static void test_null_queries(void **state) {
  (void)state;
  bfrt *rt = new_scale2(1);
  assert_int_equal(bfrt_tensor_find(rt, NULL), -1);
  assert_int_equal(bfrt_tensor_find(rt, ""), -1);
  assert_int_equal(bfrt_tensor_find(rt, bfrt_tensor_name(rt, 1)), 1);
  bfrt_tensor_shape(rt, 0, NULL);
  int64_t shape[2] = {7, 7};
  bfrt_tensor_shape(rt, -1, shape);
  assert_true(shape[0] == 0 && shape[1] == 0);
  assert_null(bfrt_tensor_name(rt, bfrt_tensor_count(rt)));
  assert_null(bfrt_tensor_data(rt, -1));
  assert_int_equal(bfrt_tensor_io(rt, 99), -1);
  assert_int_equal(bfrt_param_count(NULL), 0);
  assert_null(bfrt_param_name(NULL, 0));
  const char *err = NULL;
  assert_null(bfrt_new(NULL, NULL, &err));
  assert_string_equal(err, "no kernel");
  assert_null(bfrt_new(NULL, NULL, NULL));
  bfrt_delete(NULL);
  bfrt_delete(rt);
}

/* Issue 20: a watchdog period too large for int64 nanoseconds (INFINITY,
 * DBL_MAX, or anything from about 9.3e9 s) overflowed the conversion, and
 * the watchdog spun or reported a deadlock of finished engines. Such a
 * period means no watchdog: the run ends as it would without one. */
static void test_watchdog_huge(void **state) {
  (void)state;
  const double huge[] = {INFINITY, DBL_MAX, 1e300, 9.3e9, 9.2233720368547758e9, 1e10};
  for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++)
    for (uint64_t seed = 0; seed < 8; seed++) {
      bfrt *rt = new_scale2(12);
      bfrt_options opt = {.watchdog_seconds = huge[i], .jitter_seed = seed};
      if (bfrt_run(rt, &opt)) fail_msg("watchdog %g s, seed %llu: %s", huge[i], (unsigned long long)seed, bfrt_error(rt));
      assert_scaled(rt, 12);
      bfrt_delete(rt);
    }
}

/* One long matmul on dma while act waits for it: no counter changes for
 * longer than the watchdog period, but dma is running, so no deadlock. */
static const bfrt_tile_desc big_tiles[] = {{"a", 3, 256, 256, BFRT_DTYPE_F32}};

static void long_op_dma(bfrt_ctx *cx, const int64_t *p) {
  (void)p;
  bfrt_arg mm[] = {BFRT_TILE(0, 0), BFRT_TILE(0, 1), BFRT_TILE(0, 2)};
  bfrt_op(cx, BFRT_MATMUL, 2, 3, mm);
}

static void (*const long_op_entry[])(bfrt_ctx *, const int64_t *) = {long_op_dma, stuck_act};
static const bfrt_kernel long_op = {"long_op", 3, rc_params, 2, two_engines, two_kinds, long_op_entry,
                                    1, big_tiles, 1, wide_tensors, wide_shape, 0, NULL};

static void test_watchdog_spares_long_ops(void **state) {
  (void)state;
  bfrt_options opt = {.watchdog_seconds = 0.001};
  /* act waits for dma >= 5 but dma runs one op: a real deadlock, reported
   * only once the matmul is over */
  expect_failure(&long_op, (int64_t[]){1, 0, 0}, &opt, "waits for dma's counter >= 5 (it is 1)");
}

/* Both engines: two fills, a barrier, then p[0] more fills on dma while act
 * waits for dma >= p[1]. After the barrier dma's counter restarts at 0, so
 * the wait is satisfied only when p[1] <= p[0]. */
static void barrier_dma(bfrt_ctx *cx, const int64_t *p) {
  bfrt_arg fill[] = {BFRT_TILE(0, 0), BFRT_IMM(1.0f)};
  bfrt_op(cx, BFRT_FILL, 2, 2, fill);
  bfrt_op(cx, BFRT_FILL, 2, 2, fill);
  bfrt_barrier(cx, 4);
  for (int64_t i = 0; i < p[0]; i++) bfrt_op(cx, BFRT_FILL, 5, 2, fill);
}

static void barrier_act(bfrt_ctx *cx, const int64_t *p) {
  bfrt_arg fill[] = {BFRT_TILE(0, 1), BFRT_IMM(2.0f)};
  bfrt_op(cx, BFRT_FILL, 3, 2, fill);
  bfrt_barrier(cx, 4);
  bfrt_wait(cx, DMA, p[1], 6);
}

static void (*const barrier_entry[])(bfrt_ctx *, const int64_t *) = {barrier_dma, barrier_act};
static const bfrt_kernel barrier = {"barrier", 3, rc_params, 2, two_engines, two_kinds, barrier_entry,
                                    1, wide_tiles, 1, wide_tensors, wide_shape, 0, NULL};

static void test_barrier_resets_counters(void **state) {
  (void)state;
  const char *err = NULL;
  bfrt *rt = bfrt_new(&barrier, (int64_t[]){2, 2, 0}, &err);
  assert_int_equal(bfrt_run(rt, NULL), 0);
  assert_int_equal(bfrt_get_stats(rt)->barriers, 1);
  assert_int_equal(bfrt_get_stats(rt)->instructions, 5);
  bfrt_delete(rt);
  /* without the reset dma's counter would read 4 >= 3 */
  bfrt_options opt = {.watchdog_seconds = 0.3};
  expect_failure(&barrier, (int64_t[]){2, 3, 0}, &opt, "waits for dma's counter >= 3 (it is 2)");
}

static void lonely_act(bfrt_ctx *cx, const int64_t *p) {
  (void)p;
  bfrt_barrier(cx, 8);
}

static void (*const lonely_entry[])(bfrt_ctx *, const int64_t *) = {idle, lonely_act};
static const bfrt_kernel lonely = {"lonely", 3, rc_params, 2, two_engines, two_kinds, lonely_entry,
                                   1, wide_tiles, 1, wide_tensors, wide_shape, 0, NULL};

static void test_barrier_deadlock(void **state) {
  (void)state;
  bfrt_options opt = {.watchdog_seconds = 0.3};
  expect_failure(&lonely, (int64_t[]){0, 0, 0}, &opt, "engine act, line 8: waits at a barrier");
}

/* ---- Instances. */

static int bad_shape(const int64_t *p, int t, int64_t shape[2]) {
  (void)t;
  shape[0] = p[0];
  shape[1] = 4;
  return p[1]; /* a nonzero line: division by zero */
}

static const bfrt_kernel shapes = {"shapes", 3, rc_params, 2, two_engines, two_kinds, stuck_entry,
                                   1, wide_tiles, 1, wide_tensors, bad_shape, 0, NULL};

static void test_new_errors(void **state) {
  (void)state;
  const char *err = NULL;
  assert_null(bfrt_new(NULL, NULL, &err));
  assert_string_equal(err, "no kernel");
  assert_null(bfrt_new(&shapes, NULL, &err));
  assert_string_equal(err, "missing parameters");
  assert_null(bfrt_new(&shapes, (int64_t[]){4, 3, 0}, &err));
  assert_string_equal(err, "division by zero in a tensor shape");
  assert_null(bfrt_new(&shapes, (int64_t[]){-4, 0, 0}, &err));
  assert_string_equal(err, "a tensor shape is negative");
  assert_null(bfrt_new(&shapes, (int64_t[]){INT64_MAX / 2, 0, 0}, &err));
  assert_string_equal(err, "tensor Y [4611686018427387903, 4] is too large: its size in bytes overflows 64 bits");
  bfrt *rt = bfrt_new(&shapes, (int64_t[]){0, 0, 0}, &err);
  assert_non_null(rt);
  assert_non_null(bfrt_tensor_data(rt, 0));
  assert_null(bfrt_tensor_data(rt, 1));
  bfrt_delete(rt);
}

/* ---- The trace. */

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
  buf[n] = 0;
  fclose(f);
  return buf;
}

/* The names of the X events of track tid, in file order, with their ts nondecreasing. */
static void track_names(char *json, int tid, char *out, size_t size) {
  char key[32];
  snprintf(key, sizeof key, "\"tid\":%d,\"ts\":", tid);
  out[0] = 0;
  double last = -1;
  for (char *line = strtok(json, "\n"); line; line = strtok(NULL, "\n")) {
    char *at = strstr(line, key);
    if (!at || !strstr(line, "\"ph\":\"X\"")) continue;
    double ts = strtod(at + strlen(key), NULL);
    assert_true(ts >= last);
    last = ts;
    char name[32];
    assert_int_equal(sscanf(line, "{\"name\":\"%31[^\"]\"", name), 1);
    assert_non_null(strstr(line, "\"args\":{\"line\":"));
    strncat(out, name, size - strlen(out) - 2);
    strcat(out, " ");
  }
}

static void test_trace(void **state) {
  (void)state;
  char path[] = "/tmp/bfrt-trace-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  bfrt *rt = new_scale2(3);
  bfrt_options opt = {.trace_path = path, .jitter_seed = 5};
  assert_int_equal(bfrt_run(rt, &opt), 0);
  bfrt_delete(rt);
  char *json = read_all(path);
  assert_true(strncmp(json, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", 38) == 0);
  assert_non_null(strstr(json, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"dma\"}}"));
  assert_non_null(strstr(json, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"act\"}}"));
  assert_non_null(strstr(json, "\"name\":\"wait\",\"cat\":\"sync\",\"ph\":\"X\",\"pid\":1,\"tid\":1,"));
  assert_non_null(strstr(json, "\"args\":{\"line\":3,\"engine\":\"dma\",\"threshold\":5}}"));
  assert_non_null(strstr(json, "\"args\":{\"line\":4,\"engine\":\"act\",\"threshold\":3}}"));
  /* ops list their tile and tensor operands' element types; scale's immediate has none */
  assert_non_null(strstr(json, "\"name\":\"load\",\"cat\":\"op\","));
  assert_non_null(strstr(json, "\"args\":{\"line\":2,\"dtypes\":[\"f32\",\"f32\"]}}"));
  assert_non_null(strstr(json, "\"args\":{\"line\":3,\"dtypes\":[\"f32\",\"f32\"]}}"));
  assert_null(strstr(json, "\"dtypes\":[\"f32\",\"f32\",\""));
  char *copy = strdup(json), names[512];
  track_names(copy, 0, names, sizeof names);
  assert_string_equal(names, "load wait store load wait store wait load wait store ");
  strcpy(copy, json);
  track_names(copy, 1, names, sizeof names);
  assert_string_equal(names, "wait scale wait scale wait scale ");
  free(copy);
  /* and a JSON parser agrees, when one is installed */
  char cmd[128];
  snprintf(cmd, sizeof cmd, "command -v python3 >/dev/null || exit 0; python3 -c 'import json,sys; json.load(open(sys.argv[1]))' %s", path);
  assert_int_equal(system(cmd), 0);
  free(json);
  unlink(path);
}

static void test_trace_unwritable(void **state) {
  (void)state;
  bfrt *rt = new_scale2(1);
  bfrt_options opt = {.trace_path = "/nonexistent/dir/trace.json"};
  assert_int_equal(bfrt_run(rt, &opt), -1);
  assert_string_equal(bfrt_error(rt), "kernel scale2: cannot write the trace to /nonexistent/dir/trace.json: No such file or directory");
  bfrt_delete(rt);
}

/* ---- The race checker. */

/* scale2 with p[1] = 1 dropping act's RAW wait for the load: act's read of
 * x[0] is not ordered after dma's load, whatever the timing. (Dropping
 * dma's WAR wait instead would not race: the previous iteration's wait for
 * y already implies it.) */
static void racy_act(bfrt_ctx *cx, const int64_t *p) {
  for (int64_t i = 0; i < p[0]; i++) {
    if (!p[1]) bfrt_wait(cx, DMA, 2 * i + 1, 3);
    bfrt_arg scale[] = {BFRT_TILE(1, 0), BFRT_TILE(0, i % 2), BFRT_IMM(2.0f)};
    bfrt_op(cx, BFRT_SCALE, 3, 3, scale);
  }
}

static void (*const racy_entry[])(bfrt_ctx *, const int64_t *) = {scale2_dma, racy_act};
static const char *const nd_params[] = {"N", "DROP"};
static const bfrt_kernel racy = {"racy", 2, nd_params, 2, two_engines, two_kinds, racy_entry,
                                 2, scale2_tiles, 2, scale2_tensors, scale2_shape, 0, NULL};

static void test_checker_clean(void **state) {
  (void)state;
  bfrt *rt = new_scale2(6);
  bfrt_options opt = {.check = 1, .jitter_seed = 3};
  assert_int_equal(bfrt_run(rt, &opt), 0);
  assert_int_equal(bfrt_get_stats(rt)->races, 0);
  assert_scaled(rt, 6);
  bfrt_delete(rt);
  const char *err = NULL;
  rt = bfrt_new(&racy, (int64_t[]){6, 0}, &err);
  assert_int_equal(bfrt_run(rt, &opt), 0);
  bfrt_delete(rt);
}

static void test_checker_finds_war(void **state) {
  (void)state;
  const char *err = NULL;
  bfrt *rt = bfrt_new(&racy, (int64_t[]){1, 1}, &err);
  for (uint64_t seed = 0; seed < 20; seed++) {
    bfrt_options opt = {.check = 1, .jitter_seed = seed};
    assert_int_equal(bfrt_run(rt, &opt), -1);
    assert_int_equal(bfrt_get_stats(rt)->races, 1);
    /* which access comes second, and so reports, depends on the timing */
    const char *msg = bfrt_error(rt);
    if (!strstr(msg, "kernel racy: the race checker found 1 unordered conflicting accesses:") ||
        (!strstr(msg, "write of x[0] on dma (line 2) and a read on act (line 3) are not ordered") &&
         !strstr(msg, "read of x[0] on act (line 3) and a write on dma (line 2) are not ordered")))
      fail_msg("unexpected report:\n%s", msg);
  }
  bfrt_delete(rt);
}

/* dma and act both store to Y[0, 0]; p[1] = 1 orders them by a wait,
 * p[1] = 2 by a barrier, p[1] = 0 not at all. */
static void twice_dma(bfrt_ctx *cx, const int64_t *p) {
  bfrt_arg fill[] = {BFRT_TILE(0, 0), BFRT_IMM(1.0f)};
  bfrt_op(cx, BFRT_FILL, 1, 2, fill);
  bfrt_arg store[] = {BFRT_HBM(0, 0, 0), BFRT_TILE(0, 0)};
  bfrt_op(cx, BFRT_STORE, 2, 2, store);
  if (p[1] == 2) bfrt_barrier(cx, 3);
}

static void twice_act(bfrt_ctx *cx, const int64_t *p) {
  bfrt_arg fill[] = {BFRT_TILE(0, 1), BFRT_IMM(2.0f)};
  bfrt_op(cx, BFRT_FILL, 4, 2, fill);
  if (p[1] == 1) bfrt_wait(cx, DMA, 2, 5);
  if (p[1] == 2) bfrt_barrier(cx, 3);
  bfrt_arg store[] = {BFRT_HBM(0, 0, 0), BFRT_TILE(0, 1)};
  bfrt_op(cx, BFRT_STORE, 6, 2, store);
}

static void (*const twice_entry[])(bfrt_ctx *, const int64_t *) = {twice_dma, twice_act};
static const bfrt_kernel twice = {"twice", 3, rc_params, 2, two_engines, two_kinds, twice_entry,
                                  1, wide_tiles, 1, wide_tensors, wide_shape, 0, NULL};

static void test_checker_hbm_and_barrier(void **state) {
  (void)state;
  bfrt_options opt = {.check = 1};
  expect_failure(&twice, (int64_t[]){1, 0, 0}, &opt, "found 1 unordered conflicting accesses");
  expect_failure(&twice, (int64_t[]){1, 0, 0}, &opt, "write of Y[0, 0] on ");
  const char *err = NULL;
  for (int64_t mode = 1; mode <= 2; mode++) {
    bfrt *rt = bfrt_new(&twice, (int64_t[]){1, mode, 0}, &err);
    assert_int_equal(bfrt_run(rt, &opt), 0);
    assert_float_equal(bfrt_tensor_data(rt, 0)[0], 2.0f, 0);
    bfrt_delete(rt);
  }
}

/* ---- The cost model. */

static void test_op_cycles(void **state) {
  (void)state;
  bfrt_costs c = {0};
  c.kind[BFRT_KIND_DVE] = (bfrt_engine_cost){.overhead = 10, .elems_per_cycle = {[BFRT_CLASS_ELEMWISE] = 64}};
  c.kind[BFRT_KIND_DMA] = (bfrt_engine_cost){.overhead = 5, .dma_latency = 100, .dma_bytes_per_cycle = 32};
  c.kind[BFRT_KIND_PE] = (bfrt_engine_cost){.overhead = 20, .pe_rows = 128, .pe_cols = 128,
                                            .elems_per_cycle = {[BFRT_CLASS_MATMUL] = 1}};
  assert_int_equal(bfrt_op_cycles(&c, BFRT_KIND_DVE, BFRT_ADD, (int64_t[]){64, 64}, (int64_t[]){64, 64}), 10 + 64);
  assert_int_equal(bfrt_op_cycles(&c, BFRT_KIND_DVE, BFRT_ADD, (int64_t[]){1, 1}, (int64_t[]){1, 1}), 10 + 1);
  /* 32 x 32 floats = 4096 bytes at 32 bytes per cycle */
  assert_int_equal(bfrt_op_cycles(&c, BFRT_KIND_DMA, BFRT_LOAD, (int64_t[]){32, 32}, (int64_t[]){32, 32}),
                   5 + 100 + 128);
  /* in bf16 half the bytes, in fp8e4 a quarter; other engines do not care */
  int64_t t32[2] = {32, 32};
  assert_int_equal(bfrt_op_timing_sized(&c, BFRT_KIND_DMA, BFRT_LOAD, t32, t32, 2).completion, 5 + 100 + 64);
  assert_int_equal(bfrt_op_timing_sized(&c, BFRT_KIND_DMA, BFRT_STORE, t32, t32, 1).completion, 5 + 100 + 32);
  assert_int_equal(bfrt_op_timing_sized(&c, BFRT_KIND_DVE, BFRT_ADD, t32, t32, 2).completion,
                   bfrt_op_cycles(&c, BFRT_KIND_DVE, BFRT_ADD, t32, t32));
  /* [128,256] · [256,512]: 2 x 4 passes of 128 rows */
  assert_int_equal(bfrt_op_cycles(&c, BFRT_KIND_PE, BFRT_MATMUL, (int64_t[]){128, 512}, (int64_t[]){128, 256}),
                   20 + 8 * 128);
  /* a throughput of 0 counts as 1 */
  assert_int_equal(bfrt_op_cycles(&c, BFRT_KIND_ACT, BFRT_EXP, (int64_t[]){2, 3}, (int64_t[]){2, 3}), 6);
  /* by shape: 96 bytes per contiguous run; a row of 32 f32 is one run (32 x (128 + 96) bytes), a slice
   * with a column step 32 runs of one element each (32 x (128 + 32 x 96)) */
  c.kind[BFRT_KIND_DMA].dma_row_bytes = 96;
  assert_int_equal(bfrt_op_timing_shaped(&c, BFRT_KIND_DMA, BFRT_LOAD, t32, t32, 4, 1).completion, 5 + 100 + 224);
  assert_int_equal(bfrt_op_timing_sized(&c, BFRT_KIND_DMA, BFRT_LOAD, t32, t32, 4).completion, 5 + 100 + 224);
  assert_int_equal(bfrt_op_timing_shaped(&c, BFRT_KIND_DMA, BFRT_LOAD, t32, t32, 4, 32).completion,
                   5 + 100 + 32 * (128 + 32 * 96) / 32);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_elementwise),
      cmocka_unit_test(test_transcendental),
      cmocka_unit_test(test_rounding),
      cmocka_unit_test(test_rows),
      cmocka_unit_test(test_matmul),
      cmocka_unit_test(test_nc_matmul),
      cmocka_unit_test(test_iota_select),
      cmocka_unit_test(test_reduce_scalar),
      cmocka_unit_test(test_activation_scan),
      cmocka_unit_test(test_bn_stats_aggr),
      cmocka_unit_test(test_roles_match_semantics),
      cmocka_unit_test(test_transpose_and_strides),
      cmocka_unit_test(test_threads_run),
      cmocka_unit_test(test_jitter_runs),
      cmocka_unit_test(test_null_options_and_rerun),
      cmocka_unit_test(test_ring_handoffs),
      cmocka_unit_test(test_counter_extend),
      cmocka_unit_test(test_ring_wraps_narrow_counters),
      cmocka_unit_test(test_bounds_error),
      cmocka_unit_test(test_slot_error),
      cmocka_unit_test(test_bad_operands),
      cmocka_unit_test(test_division_by_zero),
      cmocka_unit_test(test_floor_division),
      cmocka_unit_test(test_watchdog),
      cmocka_unit_test(test_watchdog_spares_long_ops),
      cmocka_unit_test(test_watchdog_huge),
      cmocka_unit_test(test_null_queries),
      cmocka_unit_test(test_barrier_resets_counters),
      cmocka_unit_test(test_barrier_deadlock),
      cmocka_unit_test(test_new_errors),
      cmocka_unit_test(test_trace),
      cmocka_unit_test(test_trace_unwritable),
      cmocka_unit_test(test_checker_clean),
      cmocka_unit_test(test_checker_finds_war),
      cmocka_unit_test(test_checker_hbm_and_barrier),
      cmocka_unit_test(test_op_cycles),
      cmocka_unit_test(test_timing_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
