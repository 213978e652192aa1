/* semantics.c: what every op computes, in f32, once.
 *
 * The runtime's executors and the compiler's sequential reference executor
 * both call sem_apply, so a kernel's results can be compared bit for bit:
 * the same function, the same order of float operations. The order is part
 * of the contract: matmul accumulates k = 0 .. K-1 in a float starting from
 * 0 (matmul) or from the destination (matmul_acc), and rowsum adds columns
 * left to right from 0.
 *
 * Views are strided (an hbm tile is a window of a larger tensor). The
 * destination may be the same view as a source: elementwise and row ops
 * read each element before writing it; matmul and transpose, which read
 * elements they have already written, go through a temporary. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bfrt.h"
#include "semantics.h"

static float *at(SemView v, int64_t i, int64_t j) { return v.data + i * v.stride + j; }

static float unary(int op, float x, float imm) {
  switch (op) {
  case BFRT_SCALE: return x * imm;
  case BFRT_EXP: return expf(x);
  case BFRT_RELU: return x > 0 ? x : 0.0f;
  case BFRT_TANH: return tanhf(x);
  case BFRT_RSQRT: return 1.0f / sqrtf(x);
  case BFRT_RECIP: return 1.0f / x;
  default: return x; /* load, store, copy */
  }
}

static float binary(int op, float x, float y) {
  switch (op) {
  case BFRT_ADD: case BFRT_ADD_ROW: return x + y;
  case BFRT_SUB: case BFRT_SUB_ROW: return x - y;
  case BFRT_MUL: case BFRT_MUL_ROW: return x * y;
  default: return x > y ? x : y; /* max */
  }
}

static void fill(SemView d, float imm) {
  for (int64_t i = 0; i < d.rows; i++)
    for (int64_t j = 0; j < d.cols; j++) *at(d, i, j) = imm;
}

static void map_unary(int op, SemView d, SemView s, float imm) {
  for (int64_t i = 0; i < d.rows; i++)
    for (int64_t j = 0; j < d.cols; j++) *at(d, i, j) = unary(op, *at(s, i, j), imm);
}

static void map_binary(int op, SemView d, SemView a, SemView b) {
  for (int64_t i = 0; i < d.rows; i++)
    for (int64_t j = 0; j < d.cols; j++) *at(d, i, j) = binary(op, *at(a, i, j), *at(b, i, j));
}

/* d[i,j] = s[i,j] op r[i,0]: r is read once per row, before the row is
 * written, so d may be r when the row is one column wide. */
static void map_row(int op, SemView d, SemView s, SemView r) {
  for (int64_t i = 0; i < d.rows; i++) {
    float ri = *at(r, i, 0);
    for (int64_t j = 0; j < d.cols; j++) *at(d, i, j) = binary(op, *at(s, i, j), ri);
  }
}

static void reduce_rows(int op, SemView d, SemView s) {
  for (int64_t i = 0; i < s.rows; i++) {
    float acc = op == BFRT_ROWSUM ? 0.0f : *at(s, i, 0);
    for (int64_t j = 0; j < s.cols; j++)
      acc = op == BFRT_ROWSUM ? acc + *at(s, i, j) : binary(BFRT_MAX, *at(s, i, j), acc);
    *at(d, i, 0) = acc;
  }
}

/* A dense temporary shaped like d, for ops that cannot write in place. */
static SemView temporary(SemView d) {
  size_t n = (size_t)(d.rows * d.cols);
  SemView t = {malloc((n ? n : 1) * sizeof(float)), d.rows, d.cols, d.cols};
  if (!t.data) abort(); /* tiles are small; no way to report from here */
  return t;
}

static void copy_back(SemView d, SemView t) {
  for (int64_t i = 0; i < d.rows; i++) memcpy(at(d, i, 0), at(t, i, 0), (size_t)d.cols * sizeof(float));
  free(t.data);
}

static void matmul(SemView d, SemView a, SemView b, int accumulate) {
  int aliased = d.data == a.data || d.data == b.data;
  SemView out = aliased ? temporary(d) : d;
  for (int64_t i = 0; i < d.rows; i++)
    for (int64_t j = 0; j < d.cols; j++) {
      float acc = accumulate ? *at(d, i, j) : 0.0f;
      for (int64_t k = 0; k < a.cols; k++) acc += *at(a, i, k) * *at(b, k, j);
      *at(out, i, j) = acc;
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

void sem_apply(int op, SemView dst, SemView a, SemView b, float imm) {
  switch (op) {
  case BFRT_FILL: fill(dst, imm); break;
  case BFRT_ADD: case BFRT_SUB: case BFRT_MUL: case BFRT_MAX: map_binary(op, dst, a, b); break;
  case BFRT_ADD_ROW: case BFRT_SUB_ROW: case BFRT_MUL_ROW: map_row(op, dst, a, b); break;
  case BFRT_ROWSUM: case BFRT_ROWMAX: reduce_rows(op, dst, a); break;
  case BFRT_MATMUL: matmul(dst, a, b, 0); break;
  case BFRT_MATMUL_ACC: matmul(dst, a, b, 1); break;
  case BFRT_TRANSPOSE: transpose(dst, a); break;
  case BFRT_LOAD: case BFRT_STORE: case BFRT_COPY: case BFRT_SCALE: case BFRT_EXP:
  case BFRT_RELU: case BFRT_TANH: case BFRT_RSQRT: case BFRT_RECIP:
    map_unary(op, dst, a, imm);
    break;
  default: abort(); /* the caller checked op against ops.def */
  }
}
