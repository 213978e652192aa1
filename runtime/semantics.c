/* semantics.c: what every op computes, in f32, once.
 *
 * The runtime's executors and the compiler's sequential reference executor
 * both call sem_apply, so a kernel's results can be compared bit for bit:
 * the same function, the same order of float operations. The order is part
 * of the contract: matmul accumulates k = 0 .. K-1 in a float starting from
 * 0 (matmul) or from the destination (matmul_acc), and rowsum adds columns
 * left to right from 0. (C11 forbids contracting a*b+c into an FMA unless
 * asked, so every step rounds as written.)
 *
 * Views are strided (an hbm tile is a window of a larger tensor, a tile
 * view a window of its slot). The destination may be the same view as a
 * source: elementwise and row ops read each element before writing it;
 * matmul, nc_matmul, transpose and permute, which read elements they have
 * already written, go through a temporary. A source that partly overlaps
 * the destination is read into a temporary before the op (sem_apply). An
 * op gets every operand at its position, destination first (sem_apply's
 * arrays): a view for a tile or an hbm tile, a float for an immediate, an
 * ALU op's or an activation function's code for a name.
 *
 * Storage types narrower than f32 (bf16, fp8e4, fp8e5, fp16) change nothing above:
 * every op computes in f32 as written, and only the store rounds, to
 * nearest even (bfrt_round). Rounding the destination view after the op
 * is the same as rounding each element as it is stored, because no op
 * reads an element of its destination after writing it (matmul and
 * transpose write through a temporary, and the row ops read their row
 * operand before writing the row). Every operand an op writes is rounded
 * so: activation_acc's accumulator as well as its destination; its sum
 * adds the f32 results, before the destination's rounding. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bfrt_kernel.h"
#include "ops.h"
#include "semantics.h"

static float *at(SemView v, int64_t i, int64_t j) { return v.data + i * v.stride + j; }

/* The element functions. The map helpers below take one as a constant
 * argument and are inlined into each case of sem_apply, so every op gets
 * its own loop, free of any per-element dispatch. */
static float identity(float x, float imm) { (void)imm; return x; }
static float scaled(float x, float imm) { return x * imm; }
static float exponential(float x, float imm) { (void)imm; return expf(x); }
static float rectified(float x, float imm) { (void)imm; return x > 0 ? x : 0.0f; }
static float hyperbolic_tangent(float x, float imm) { (void)imm; return tanhf(x); }
static float reciprocal_sqrt(float x, float imm) { (void)imm; return 1.0f / sqrtf(x); }
static float reciprocal(float x, float imm) { (void)imm; return 1.0f / x; }
static float logistic(float x, float imm) { (void)imm; return 1.0f / (1.0f + expf(-x)); }
/* GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
static float gelu_tanh(float x, float imm) {
  (void)imm;
  float inner = 0.7978845608f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}
static float sigmoid_linear(float x, float imm) { (void)imm; return x / (1.0f + expf(-x)); }
static float squared(float x, float imm) { (void)imm; return x * x; }
static float square_root(float x, float imm) { (void)imm; return sqrtf(x); }
static float absolute(float x, float imm) { (void)imm; return fabsf(x); }
static float sum(float x, float y) { return x + y; }
static float difference(float x, float y) { return x - y; }
static float product(float x, float y) { return x * y; }
static float maximum(float x, float y) { return x > y ? x : y; }

typedef float Elementwise(float, float);

static inline void fill(SemView d, float imm) {
  for (int64_t i = 0; i < d.rows; i++)
    for (int64_t j = 0; j < d.cols; j++) *at(d, i, j) = imm;
}

static inline void map_unary(Elementwise *f, SemView d, SemView s, float imm) {
  for (int64_t i = 0; i < d.rows; i++)
    for (int64_t j = 0; j < d.cols; j++) *at(d, i, j) = f(*at(s, i, j), imm);
}

static inline void map_binary(Elementwise *f, SemView d, SemView a, SemView b) {
  for (int64_t i = 0; i < d.rows; i++)
    for (int64_t j = 0; j < d.cols; j++) *at(d, i, j) = f(*at(a, i, j), *at(b, i, j));
}

/* d[i,j] = s[i,j] op r[i,0]: r is read once per row, before the row is
 * written, so d may be r when the row is one column wide. */
static inline void map_row(Elementwise *f, SemView d, SemView s, SemView r) {
  for (int64_t i = 0; i < d.rows; i++) {
    float ri = *at(r, i, 0);
    for (int64_t j = 0; j < d.cols; j++) *at(d, i, j) = f(*at(s, i, j), ri);
  }
}

/* d[i,j] = s[i,j] op c[0,j]: d may be s, not c (sema keeps them apart when
 * shapes differ; when the tile is [1, N] itself, c is read before d[0,j]). */
static inline void map_col(Elementwise *f, SemView d, SemView s, SemView c) {
  for (int64_t i = 0; i < d.rows; i++)
    for (int64_t j = 0; j < d.cols; j++) *at(d, i, j) = f(*at(s, i, j), *at(c, 0, j));
}

/* d[i,j] = s[i,j] op imm. */
static inline void map_imm(Elementwise *f, SemView d, SemView s, float imm) {
  for (int64_t i = 0; i < d.rows; i++)
    for (int64_t j = 0; j < d.cols; j++) *at(d, i, j) = f(*at(s, i, j), imm);
}

/* rowsum of g(s[i,j]) from 0, left to right: the activation then the sum,
 * each step rounded, as ScalarE's activation_reduce is defined. */
static inline void reduce_rows_of(Elementwise *g, SemView d, SemView s) {
  for (int64_t i = 0; i < s.rows; i++) {
    float acc = 0.0f;
    for (int64_t j = 0; j < s.cols; j++) acc = g(*at(s, i, j), 0.0f) + acc;
    *at(d, i, 0) = acc;
  }
}

/* rowsum starts from 0 (so it adds every column), rowmax from column 0;
 * then acc = f(x, acc) column by column (so rowmax is x > m ? x : m). */
static inline void reduce_rows(Elementwise *f, int from_zero, SemView d, SemView s) {
  for (int64_t i = 0; i < s.rows; i++) {
    float acc = from_zero ? 0.0f : *at(s, i, 0);
    for (int64_t j = 0; j < s.cols; j++) acc = f(*at(s, i, j), acc);
    *at(d, i, 0) = acc;
  }
}

/* A dense temporary shaped like d, for ops that cannot write in place. */
static SemView temporary(SemView d) {
  size_t n = (size_t)(d.rows * d.cols);
  SemView t = {malloc((n ? n : 1) * sizeof(float)), d.rows, d.cols, d.cols, BFRT_DTYPE_F32};
  if (!t.data) abort(); /* tiles are small; no way to report from here */
  return t;
}

static void copy_back(SemView d, SemView t) {
  for (int64_t i = 0; i < d.rows; i++) memcpy(at(d, i, 0), at(t, i, 0), (size_t)d.cols * sizeof(float));
  free(t.data);
}

/* d = a . b (matmul), or a^T . b when a is stationary (nc_matmul:
 * st[K, M] and moving mv[K, N], both with K on the partitions). Row i of
 * the result accumulates k = 0 .. K-1 in order into each of its elements,
 * from 0 or (accumulate) from d[i,j]: the order of float operations of the
 * definition acc = ((0 + a[i,0]b[0,j]) + a[i,1]b[1,j]) + ..., with the loop
 * over j innermost so it runs along rows. */
static void contract(SemView d, SemView a, SemView b, int accumulate, int stationary) {
  int aliased = d.data == a.data || d.data == b.data;
  SemView out = aliased ? temporary(d) : d;
  int64_t depth = stationary ? a.rows : a.cols;
  for (int64_t i = 0; i < d.rows; i++) {
    float *row = at(out, i, 0);
    for (int64_t j = 0; j < d.cols; j++) row[j] = accumulate ? *at(d, i, j) : 0.0f;
    for (int64_t k = 0; k < depth; k++) {
      float aik = stationary ? *at(a, k, i) : *at(a, i, k);
      const float *bk = at(b, k, 0);
      for (int64_t j = 0; j < d.cols; j++) row[j] += aik * bk[j];
    }
  }
  if (aliased) copy_back(d, out);
}

static void transpose(SemView d, SemView s) {
  int aliased = d.data == s.data;
  SemView out = aliased ? temporary(d) : d;
  for (int64_t i = 0; i < d.rows; i++)
    for (int64_t j = 0; j < d.cols; j++) *at(out, i, j) = *at(s, j, i);
  if (aliased) copy_back(d, out);
}

/* ---- Rounding to the storage types. */

/* bf16 is f32's upper half: round the lower half away, to nearest even
 * (adding 0x7FFF plus the kept part's lowest bit carries into it exactly
 * when the lower half is over half way, or half way with an odd kept part).
 * Overflow carries into the exponent and gives Inf, as IEEE rounding does;
 * Inf stays Inf. A NaN stays a NaN of the same sign (made quiet, so that
 * cutting its payload cannot turn it into Inf). */
static float round_bf16(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  if (isnan(x)) bits |= 0x00400000u;
  else bits += 0x7FFFu + ((bits >> 16) & 1u);
  bits &= 0xFFFF0000u;
  memcpy(&x, &bits, sizeof x);
  return x;
}

/* The narrow float formats below f32 besides bf16, rounded by one rule: x
 * goes to a multiple of its binade's quantum (a power of two, so the
 * division and the product are exact, and rintf, in the default mode,
 * rounds half to even), the quantum of the smallest normal binade below
 * it (subnormals, in equal steps down to zero). A result beyond the
 * largest finite value overflows: to Inf where the format has one, else
 * to NaN. An Inf stays Inf (NaN without Inf), a NaN a NaN of its sign,
 * zero keeps its sign.
 *
 *   fp8e4: OCP E4M3 (NKI's float8_e4m3fn), 3 fraction bits, normals from
 *          2^-6, largest 448, no Inf: beyond 464 (the midpoint to the next
 *          step, which ties to the even 448) NaN, as ml_dtypes and PyTorch
 *          convert;
 *   fp8e5: OCP E5M2 (NKI's float8_e5m2), 2 fraction bits, normals from
 *          2^-14, largest 57344, Inf from 61440 (the tie goes to the even
 *          2^16, which is Inf);
 *   fp16:  IEEE binary16, 10 fraction bits, normals from 2^-14, largest
 *          65504, Inf from 65520. */
typedef struct Narrow {
  int fraction_bits, min_exponent; /* the smallest normal is 2^min_exponent */
  float largest, overflow;
} Narrow;

static float round_narrow(float x, const Narrow *t) {
  if (isnan(x)) return copysignf(NAN, x);
  if (isinf(x)) return copysignf(t->overflow, x);
  float magnitude = fabsf(x);
  int exponent = t->min_exponent + 1; /* below the normals: the smallest normal binade's quantum */
  if (magnitude >= ldexpf(1.0f, t->min_exponent)) frexpf(magnitude, &exponent); /* in [2^(exponent-1), 2^exponent) */
  float quantum = ldexpf(1.0f, exponent - 1 - t->fraction_bits);
  float rounded = rintf(magnitude / quantum) * quantum;
  return copysignf(rounded > t->largest ? t->overflow : rounded, x);
}

static const Narrow fp8e4 = {3, -6, 448.0f, NAN}, fp8e5 = {2, -14, 57344.0f, INFINITY},
                    fp16 = {10, -14, 65504.0f, INFINITY};

float bfrt_round(float x, int dtype) {
  switch (dtype) {
  case BFRT_DTYPE_BF16: return round_bf16(x);
  case BFRT_DTYPE_FP8E4: return round_narrow(x, &fp8e4);
  case BFRT_DTYPE_FP8E5: return round_narrow(x, &fp8e5);
  case BFRT_DTYPE_FP16: return round_narrow(x, &fp16);
  default: return x;
  }
}

void sem_round_view(SemView v) {
  if (!bfrt_dtype_narrow(v.dtype)) return;
  for (int64_t i = 0; i < v.rows; i++)
    for (int64_t j = 0; j < v.cols; j++) *at(v, i, j) = bfrt_round(*at(v, i, j), v.dtype);
}

/* ---- The nki.isa instructions (ops.def's second part). */

/* An ALU op (BFRT_ALU_*) of x and y: one f32 rounding, or 1.0 / 0.0 for a
 * comparison. */
static float alu(int code, float x, float y) {
  switch (code) {
  case BFRT_ALU_ADD: return x + y;
  case BFRT_ALU_SUBTRACT: return x - y;
  case BFRT_ALU_MULTIPLY: return x * y;
  case BFRT_ALU_MAXIMUM: return x > y ? x : y;
  case BFRT_ALU_MINIMUM: return x < y ? x : y;
  case BFRT_ALU_EQUAL: return x == y ? 1.0f : 0.0f;
  case BFRT_ALU_NOT_EQUAL: return x != y ? 1.0f : 0.0f;
  case BFRT_ALU_GREATER: return x > y ? 1.0f : 0.0f;
  case BFRT_ALU_GREATER_EQUAL: return x >= y ? 1.0f : 0.0f;
  case BFRT_ALU_LESS: return x < y ? 1.0f : 0.0f;
  case BFRT_ALU_LESS_EQUAL: return x <= y ? 1.0f : 0.0f;
  default: abort(); /* sema admits only the names */
  }
}

/* An activation function (BFRT_FN_*), the same element functions as the
 * ops of the same names. */
static float activate(int fn, float x) {
  switch (fn) {
  case BFRT_FN_COPY: return x;
  case BFRT_FN_EXP: return exponential(x, 0);
  case BFRT_FN_TANH: return hyperbolic_tangent(x, 0);
  case BFRT_FN_RELU: return rectified(x, 0);
  case BFRT_FN_SIGMOID: return logistic(x, 0);
  case BFRT_FN_GELU: return gelu_tanh(x, 0);
  case BFRT_FN_SILU: return sigmoid_linear(x, 0);
  case BFRT_FN_SQUARE: return squared(x, 0);
  case BFRT_FN_SQRT: return square_root(x, 0);
  case BFRT_FN_RSQRT: return reciprocal_sqrt(x, 0);
  case BFRT_FN_ABS: return absolute(x, 0);
  case BFRT_FN_RECIPROCAL: return reciprocal(x, 0);
  default: abort();
  }
}

/* The affine value offset + p * channel_multiplier + j * step of iota and
 * affine_select: sema admits only integers of at most 2^24 in magnitude,
 * so the sum is exact in double. */
static double affine(const float *imm, int64_t p, int64_t j) {
  return (double)imm[2] + (double)p * imm[3] + (double)j * imm[1];
}

static void iota(SemView d, const float *imm) {
  for (int64_t p = 0; p < d.rows; p++)
    for (int64_t j = 0; j < d.cols; j++) *at(d, p, j) = (float)affine(imm, p, j);
}

int sem_holds(int code, double a) {
  switch (code) {
  case BFRT_ALU_EQUAL: return a == 0;
  case BFRT_ALU_NOT_EQUAL: return a != 0;
  case BFRT_ALU_GREATER: return a > 0;
  case BFRT_ALU_GREATER_EQUAL: return a >= 0;
  case BFRT_ALU_LESS: return a < 0;
  case BFRT_ALU_LESS_EQUAL: return a <= 0;
  default: abort(); /* sema admits only comparisons */
  }
}

/* affine_select: d = cmp(affine, 0) ? on_true : on_false, elementwise. */
static void affine_select(SemView d, SemView on_true, const float *imm) {
  for (int64_t p = 0; p < d.rows; p++)
    for (int64_t j = 0; j < d.cols; j++)
      *at(d, p, j) = sem_holds((int)imm[6], affine(imm, p, j)) ? *at(on_true, p, j) : imm[5];
}

/* tensor_reduce: acc = s[p,0], then acc = op(acc, s[p,j]) for j = 1 ..,
 * negated at the end when asked. */
static void tensor_reduce(SemView d, int code, SemView s, int negate) {
  for (int64_t p = 0; p < s.rows; p++) {
    float acc = *at(s, p, 0);
    for (int64_t j = 1; j < s.cols; j++) acc = alu(code, acc, *at(s, p, j));
    *at(d, p, 0) = negate ? -acc : acc;
  }
}

/* An operand of tensor_scalar or the initial of a scan: the immediate, or
 * the [P, 1] tile's value for partition p. */
static float scalar_of(SemView v, float imm, int64_t p) { return v.data ? *at(v, p, 0) : imm; }

/* tensor_scalar: d = (s op0 c0) op1 c1, each step rounded (ops < 0: none). */
static void tensor_scalar(SemView d, SemView s, int op0, SemView v0, float c0, int op1, SemView v1, float c1) {
  for (int64_t p = 0; p < d.rows; p++) {
    float x0 = scalar_of(v0, c0, p), x1 = op1 >= 0 ? scalar_of(v1, c1, p) : 0.0f;
    for (int64_t j = 0; j < d.cols; j++) {
      float x = alu(op0, *at(s, p, j), x0);
      *at(d, p, j) = op1 >= 0 ? alu(op1, x, x1) : x;
    }
  }
}

/* activation: d = fn(s * scale + bias[p]), the product and the sum each
 * rounded; acc (when its data is set) += d[p,0] + d[p,1] + ..., left to
 * right from acc, over the f32 results (before d's storage rounds them). */
static void activation(SemView d, int fn, SemView s, SemView bias, float scale, SemView acc) {
  for (int64_t p = 0; p < d.rows; p++) {
    float b = bias.data ? *at(bias, p, 0) : 0.0f, sum = acc.data ? *at(acc, p, 0) : 0.0f;
    for (int64_t j = 0; j < d.cols; j++) {
      float y = activate(fn, bias.data ? *at(s, p, j) * scale + b : *at(s, p, j));
      *at(d, p, j) = y;
      sum = sum + y;
    }
    if (acc.data) *at(acc, p, 0) = sum;
  }
}

/* tensor_tensor_scan: r = initial, then r = op1(op0(data0[p,j], r),
 * data1[p,j]) and d[p,j] = r, j = 0 .. N-1 (NKI's order of operands). */
static void scan(SemView d, SemView a, SemView b, SemView init, float initial, int op0, int op1) {
  for (int64_t p = 0; p < d.rows; p++) {
    float r = scalar_of(init, initial, p);
    for (int64_t j = 0; j < d.cols; j++) {
      r = alu(op1, alu(op0, *at(a, p, j), r), *at(b, p, j));
      *at(d, p, j) = r;
    }
  }
}

/* The count, mean and variance * count of s[p, first], s[p, first + 2], ...:
 * the sum left to right from 0 divided by the count, then the squared
 * deviations summed left to right from 0 (0, 0, 0 for no elements). */
static void moments(SemView s, int64_t p, int64_t first, float out[3]) {
  float n = 0.0f, total = 0.0f, m2 = 0.0f;
  for (int64_t j = first; j < s.cols; j += 2) n += 1.0f, total = total + *at(s, p, j);
  float mean = n > 0.0f ? total / n : 0.0f;
  for (int64_t j = first; j < s.cols; j += 2) {
    float dev = *at(s, p, j) - mean;
    m2 = m2 + dev * dev;
  }
  out[0] = n, out[1] = mean, out[2] = m2;
}

/* bn_stats: d[p] = the moments of the even elements, then of the odd ones. */
static void bn_stats(SemView d, SemView s) {
  for (int64_t p = 0; p < s.rows; p++) {
    float even[3], odd[3];
    moments(s, p, 0, even);
    moments(s, p, 1, odd);
    for (int i = 0; i < 3; i++) *at(d, p, i) = even[i], *at(d, p, 3 + i) = odd[i];
  }
}

/* bn_aggr: the (count, mean, M2) triples of s[p] combined: n = sum of the
 * counts, mean = sum of count * mean over n, variance = sum of (M2 +
 * count * (mean_i - mean)^2) over n, each sum left to right from 0 (0 and 0
 * when n is 0). */
static void bn_aggr(SemView d, SemView s) {
  for (int64_t p = 0; p < s.rows; p++) {
    float n = 0.0f, weighted = 0.0f, m2 = 0.0f;
    for (int64_t t = 0; t + 2 < s.cols; t += 3) n = n + *at(s, p, t), weighted = weighted + *at(s, p, t) * *at(s, p, t + 1);
    float mean = n > 0.0f ? weighted / n : 0.0f;
    for (int64_t t = 0; t + 2 < s.cols; t += 3) {
      float dev = *at(s, p, t + 1) - mean;
      m2 = m2 + (*at(s, p, t + 2) + *at(s, p, t) * (dev * dev));
    }
    *at(d, p, 0) = mean;
    *at(d, p, 1) = n > 0.0f ? m2 / n : 0.0f;
  }
}

/* permute: s's free axis as [A, B] (B = N / A, sema checks A divides N)
 * written as [B, A]: d[p, b A + a] = s[p, a B + b]. Through a temporary
 * when d is s, since it reads elements it has already written. */
static void permute(SemView d, SemView s, int64_t groups) {
  int aliased = d.data == s.data;
  SemView out = aliased ? temporary(d) : d;
  int64_t inner = d.cols / groups;
  for (int64_t p = 0; p < d.rows; p++)
    for (int64_t a = 0; a < groups; a++)
      for (int64_t b = 0; b < inner; b++) *at(out, p, b * groups + a) = *at(s, p, a * inner + b);
  if (aliased) copy_back(d, out);
}

static void compute(int op, const SemView *v, const float *imm) {
  SemView dst = v[0], a = v[1], b = v[2], none = {0};
  switch (op) {
  case BFRT_LOAD: case BFRT_STORE: case BFRT_COPY: map_unary(identity, dst, a, 0); break;
  case BFRT_FILL: case BFRT_MEMSET: fill(dst, imm[1]); break;
  case BFRT_SCALE: map_unary(scaled, dst, a, imm[2]); break;
  case BFRT_EXP: map_unary(exponential, dst, a, 0); break;
  case BFRT_RELU: map_unary(rectified, dst, a, 0); break;
  case BFRT_TANH: map_unary(hyperbolic_tangent, dst, a, 0); break;
  case BFRT_RSQRT: map_unary(reciprocal_sqrt, dst, a, 0); break;
  case BFRT_RECIP: map_unary(reciprocal, dst, a, 0); break;
  case BFRT_ADD: map_binary(sum, dst, a, b); break;
  case BFRT_SUB: map_binary(difference, dst, a, b); break;
  case BFRT_MUL: map_binary(product, dst, a, b); break;
  case BFRT_MAX: map_binary(maximum, dst, a, b); break;
  case BFRT_ADD_ROW: map_row(sum, dst, a, b); break;
  case BFRT_SUB_ROW: map_row(difference, dst, a, b); break;
  case BFRT_MUL_ROW: map_row(product, dst, a, b); break;
  case BFRT_ADD_COL: map_col(sum, dst, a, b); break;
  case BFRT_SUB_COL: map_col(difference, dst, a, b); break;
  case BFRT_MUL_COL: map_col(product, dst, a, b); break;
  case BFRT_ADD_IMM: map_imm(sum, dst, a, imm[2]); break;
  case BFRT_SUB_IMM: map_imm(difference, dst, a, imm[2]); break;
  case BFRT_MUL_IMM: map_imm(product, dst, a, imm[2]); break;
  case BFRT_MAX_IMM: map_imm(maximum, dst, a, imm[2]); break;
  case BFRT_SIGMOID: map_unary(logistic, dst, a, 0); break;
  case BFRT_GELU: map_unary(gelu_tanh, dst, a, 0); break;
  case BFRT_SILU: map_unary(sigmoid_linear, dst, a, 0); break;
  case BFRT_SQUARE: map_unary(squared, dst, a, 0); break;
  case BFRT_SQRT: map_unary(square_root, dst, a, 0); break;
  case BFRT_ABS: map_unary(absolute, dst, a, 0); break;
  case BFRT_ROWSUM_SQUARE: reduce_rows_of(squared, dst, a); break;
  case BFRT_ROWSUM_EXP: reduce_rows_of(exponential, dst, a); break;
  case BFRT_ROWSUM: reduce_rows(sum, 1, dst, a); break;
  case BFRT_ROWMAX: reduce_rows(maximum, 0, dst, a); break;
  case BFRT_MATMUL: contract(dst, a, b, 0, 0); break;
  case BFRT_MATMUL_ACC: contract(dst, a, b, 1, 0); break;
  case BFRT_TRANSPOSE: case BFRT_NC_TRANSPOSE: transpose(dst, a); break;
  case BFRT_NC_MATMUL: contract(dst, a, b, 0, 1); break;
  case BFRT_NC_MATMUL_ACC: contract(dst, a, b, 1, 1); break;
  case BFRT_IOTA: iota(dst, imm); break;
  case BFRT_AFFINE_SELECT: affine_select(dst, v[4], imm); break;
  case BFRT_TENSOR_REDUCE: tensor_reduce(dst, (int)imm[1], b, 0); break;
  case BFRT_TENSOR_REDUCE_NEG: tensor_reduce(dst, (int)imm[1], b, 1); break;
  case BFRT_TENSOR_SCALAR: case BFRT_TENSOR_SCALAR_V:
    tensor_scalar(dst, a, (int)imm[2], v[3], imm[3], -1, none, 0); break;
  case BFRT_TENSOR_SCALAR2: case BFRT_TENSOR_SCALAR2_V:
    tensor_scalar(dst, a, (int)imm[2], v[3], imm[3], (int)imm[4], v[5], imm[5]); break;
  case BFRT_ACTIVATION: activation(dst, (int)imm[1], b, none, 1.0f, none); break;
  case BFRT_ACTIVATION_BS: activation(dst, (int)imm[1], b, v[3], imm[4], none); break;
  case BFRT_ACTIVATION_ACC: activation(dst, (int)imm[1], b, v[3], imm[4], v[5]); break;
  case BFRT_TENSOR_TENSOR_SCAN: case BFRT_TENSOR_TENSOR_SCAN_V:
    scan(dst, a, b, v[3], imm[3], (int)imm[4], (int)imm[5]); break;
  case BFRT_BN_STATS: bn_stats(dst, a); break;
  case BFRT_BN_AGGR: bn_aggr(dst, a); break;
  case BFRT_PERMUTE: permute(dst, a, (int64_t)imm[2]); break;
  default: abort(); /* the caller checked op against ops.def */
  }
}

/* Whether the memory v spans (its first to its last element) meets w's. */
static int spans_meet(SemView v, SemView w) {
  if (!v.data || !w.data || v.rows < 1 || v.cols < 1 || w.rows < 1 || w.cols < 1) return 0;
  uintptr_t v0 = (uintptr_t)v.data, w0 = (uintptr_t)w.data;
  uintptr_t v1 = (uintptr_t)at(v, v.rows - 1, v.cols), w1 = (uintptr_t)at(w, w.rows - 1, w.cols);
  return v0 < w1 && w0 < v1;
}

static int same_view(SemView v, SemView w) {
  return v.data == w.data && v.rows == w.rows && v.cols == w.cols && v.stride == w.stride;
}

/* A dense copy of s, which the caller frees. */
static SemView snapshot(SemView s) {
  SemView t = temporary(s);
  for (int64_t i = 0; i < s.rows; i++) memcpy(at(t, i, 0), at(s, i, 0), (size_t)s.cols * sizeof(float));
  return t;
}

/* An op reads all its sources before it writes its destination. A source
 * that is the destination's own view is handled by each op (above); one
 * that only partly overlaps it (views of one slot, x[:, 0:8] and x[:, 4:12])
 * is read into a temporary first. Sources whose memory merely interleaves
 * the destination's without meeting it are copied too: the same values.
 * Then every operand the op writes is rounded to its type. */
void sem_apply(int op, const SemView *v, const float *imm) {
  SemView in[BFRT_MAX_OPERANDS];
  int copied[BFRT_MAX_OPERANDS] = {0};
  size_t noperands = strlen(rt_ops[op].operands); /* the letters stop there: no reading past them */
  for (int i = 0; i < BFRT_MAX_OPERANDS; i++) {
    in[i] = v[i];
    int source = i > 0 && (size_t)i < noperands && bfrt_op_reads(op, i) && !bfrt_op_writes(op, i);
    if (source && !same_view(v[0], v[i]) && spans_meet(v[0], v[i])) in[i] = snapshot(v[i]), copied[i] = 1;
  }
  compute(op, in, imm);
  for (int i = 0; rt_ops[op].roles[i]; i++)
    if (bfrt_op_writes(op, i)) sem_round_view(v[i]);
  for (int i = 0; i < BFRT_MAX_OPERANDS; i++)
    if (copied[i]) free(in[i].data);
}
