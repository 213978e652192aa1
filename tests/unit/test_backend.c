/* test_backend.c: the backend's pieces on their own.
 *
 * .npy files: a round trip, a version 2.0 header, and every kind of bad
 * file with the message that names it. The reference executor: a tiny
 * kernel against values computed by hand, and its run-time errors (hbm
 * tile out of bounds, slot out of range, division by zero) with the line.
 * The C emitter and the JIT: hand-written IR streams for the same kernel
 * (so this does not depend on the transform) printed, compiled with libtcc
 * and run on threads must match the reference bit for bit and charge the
 * bookkeeping ir.h defines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "runtime/ops.h"
#include "transform/sync.h"

/* ---- .npy */

static char *temp_path(void) {
  static char path[64];
  strcpy(path, "/tmp/bfsync-npy-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  return path;
}

static void write_bytes(const char *path, const void *bytes, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(bytes, 1, n, f), n);
  fclose(f);
}

/* A .npy file with this version, header dict and data. */
static void write_npy(const char *path, int major, const char *dict, const float *data, size_t n) {
  unsigned char buf[512];
  size_t hlen = strlen(dict), pre = major == 1 ? 10 : 12;
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (unsigned char)major;
  buf[7] = 0;
  for (size_t i = 0; i < pre - 8; i++) buf[8 + i] = (unsigned char)(hlen >> (8 * i));
  memcpy(buf + pre, dict, hlen);
  memcpy(buf + pre + hlen, data, n * sizeof(float));
  write_bytes(path, buf, pre + hlen + n * sizeof(float));
}

static void npy_round_trip(void **state) {
  (void)state;
  Arena *a = arena_new();
  float data[12];
  for (int i = 0; i < 12; i++) data[i] = (float)i * 0.25f - 1.0f;
  data[5] = -0.0f;
  float back[12];
  NpyArray in = {3, 4, data, ELEM_F32, 0, {0}}, out = {3, 4, back, ELEM_F32, 0, {0}};
  const char *path = temp_path(), *err = NULL;
  assert_int_equal(npy_write(a, path, &in, &err), 0);
  assert_int_equal(npy_read(a, path, "T", &out, &err), 0);
  assert_memory_equal(back, data, sizeof data);
  FILE *f = fopen(path, "rb");
  long size = (fseek(f, 0, SEEK_END), ftell(f));
  fclose(f);
  assert_int_equal((size - 12 * 4) % 64, 0); /* header padded to 64 bytes */
  /* an N-D tensor [3, 2, 2] ([6, 2] flattened): written in its shape, read in it and flattened */
  NpyArray nd = {6, 2, data, ELEM_F32, 3, {3, 2, 2}}, nd_back = {6, 2, back, ELEM_F32, 3, {3, 2, 2}};
  NpyArray flat = {6, 2, data, ELEM_F32, 0, {0}}, other = {6, 2, back, ELEM_F32, 3, {2, 3, 2}};
  memset(back, 0, sizeof back);
  assert_int_equal(npy_write(a, path, &nd, &err), 0);
  assert_int_equal(npy_read(a, path, "T", &nd_back, &err), 0);
  assert_memory_equal(back, data, sizeof data);
  assert_int_equal(npy_read(a, path, "T", &other, &err), -1);
  assert_non_null(strstr(err, "shape (3, 2, 2) does not match tensor T [2, 3, 2] (or [6, 2] flattened)"));
  memset(back, 0, sizeof back);
  assert_int_equal(npy_write(a, path, &flat, &err), 0);
  assert_int_equal(npy_read(a, path, "T", &nd_back, &err), 0);
  assert_memory_equal(back, data, sizeof data);
  unlink(path);
  arena_free(a);
}

/* bf16 goes out as its bit patterns ('<u2') and back; a '<f4' file for a
 * bf16 tensor is rounded to nearest even. fp8e4 goes out as '|u1'. */
static void npy_narrow_types(void **state) {
  (void)state;
  Arena *a = arena_new();
  const char *path = temp_path(), *err = NULL;
  float bf[4] = {1.0f, -0x1.FEp127f, 0x1p-133f, -0.0f}, back[4];
  NpyArray in = {2, 2, bf, ELEM_BF16, 0, {0}}, out = {2, 2, back, ELEM_BF16, 0, {0}};
  assert_int_equal(npy_write(a, path, &in, &err), 0);
  assert_int_equal(npy_read(a, path, "T", &out, &err), 0);
  assert_memory_equal(back, bf, sizeof bf);
  FILE *f = fopen(path, "rb");
  long size = (fseek(f, 0, SEEK_END), ftell(f));
  fclose(f);
  assert_int_equal((size - 4 * 2) % 64, 0); /* two bytes an element */
  float wide[4] = {1.00390625f, 1.01171875f, 1.0f + 0x1p-8f + 0x1p-20f, 3.3f}; /* ties, above a tie */
  write_npy(path, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", wide, 4);
  assert_int_equal(npy_read(a, path, "T", &out, &err), 0);
  assert_memory_equal(back, ((float[]){1.0f, 1.015625f, 1.0078125f, 3.296875f}), sizeof back);
  float fp8[4] = {448.0f, -0x1p-9f, 1.125f, -0.0f};
  NpyArray in8 = {2, 2, fp8, ELEM_FP8E4, 0, {0}}, out8 = {2, 2, back, ELEM_FP8E4, 0, {0}};
  assert_int_equal(npy_write(a, path, &in8, &err), 0);
  assert_int_equal(npy_read(a, path, "T", &out8, &err), 0);
  assert_memory_equal(back, fp8, sizeof fp8);
  out8.type = ELEM_F32; /* an f32 tensor reads no '|u1' */
  assert_int_equal(npy_read(a, path, "T", &out8, &err), -1);
  assert_non_null(strstr(err, "dtype is '|u1', but tensor T is f32"));
  out.type = ELEM_I32;
  write_npy(path, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", wide, 4);
  assert_int_equal(npy_read(a, path, "T", &out, &err), -1);
  assert_non_null(strstr(err, "tensor T is i32"));
  unlink(path);
  arena_free(a);
}

static void npy_reads_version_2(void **state) {
  (void)state;
  Arena *a = arena_new();
  float data[2] = {1.5f, -2.0f};
  const char *path = temp_path(), *err = NULL;
  write_npy(path, 2, "{\"descr\": \"<f4\", \"shape\": (1, 2), \"fortran_order\": False}\n", data, 2);
  float back[2];
  NpyArray out = {1, 2, back, ELEM_F32, 0, {0}};
  assert_int_equal(npy_read(a, path, "T", &out, &err), 0);
  assert_memory_equal(back, data, sizeof data);
  unlink(path);
  arena_free(a);
}

/* npy_read of a file with this version, dict and n floats fails naming want. */
static void expect_bad(int major, const char *dict, size_t n, const char *want) {
  Arena *a = arena_new();
  float data[8] = {0};
  const char *path = temp_path(), *err = NULL;
  write_npy(path, major, dict, data, n);
  float back[4];
  NpyArray out = {2, 2, back, ELEM_F32, 0, {0}};
  assert_int_equal(npy_read(a, path, "T", &out, &err), -1);
  assert_non_null(err);
  if (!strstr(err, want)) fail_msg("message '%s' does not mention '%s'", err, want);
  unlink(path);
  arena_free(a);
}

static void npy_bad_files(void **state) {
  (void)state;
  const char *ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
  expect_bad(1, ok, 3, "truncated");
  expect_bad(1, ok, 5, "trailing");
  expect_bad(3, ok, 4, "version");
  expect_bad(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", 8, "'<f8'");
  expect_bad(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 4, "Fortran");
  expect_bad(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 4, "1-D");
  expect_bad(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 2), }", 4, "3-D");
  expect_bad(1, "{'descr': '<f4', 'shape': (2, 2), }", 4, "bad .npy header");
  expect_bad(1, "not a dict at all", 4, "bad .npy header");
  expect_bad(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), 'x': 1}", 4, "bad .npy header");
  /* A key given twice was read with its last value. */
  expect_bad(1, "{'descr': '<f4', 'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }", 4, "bad .npy header");
  /* A header claiming 2^40 rows is rejected by its shape before any allocation. */
  expect_bad(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 2), }", 4,
             "shape (1099511627776, 2) does not match tensor T [2, 2]");

  Arena *a = arena_new();
  const char *path = temp_path(), *err = NULL;
  float back[4];
  NpyArray out = {2, 2, back, ELEM_F32, 0, {0}};
  write_bytes(path, "PK\3\4 not numpy", 15);
  assert_int_equal(npy_read(a, path, "T", &out, &err), -1);
  assert_non_null(strstr(err, "bad magic"));
  write_bytes(path, "\x93NUMPY\1\0\xff", 9);
  assert_int_equal(npy_read(a, path, "T", &out, &err), -1);
  assert_non_null(strstr(err, "truncated"));
  unlink(path);
  assert_int_equal(npy_read(a, path, "T", &out, &err), -1);
  assert_non_null(strstr(err, path));
  arena_free(a);
}

/* ---- The reference executor. */

/* Row-normalise-ish: Y[i] = x * rowsum(x), tile by tile (line numbers matter). */
static const char tiny_kernel[] =
    "kernel tiny(N: int) {\n"                        /* 1 */
    "  hbm in  X: f32[N * 2, 2];\n"                  /* 2 */
    "  hbm out Y: f32[N * 2, 2];\n"                  /* 3 */
    "  sbuf x[2]: f32[2, 2];\n"                      /* 4 */
    "  sbuf s: f32[2, 1];\n"                         /* 5 */
    "  for i in 0 .. N {\n"                          /* 6 */
    "    dma: load x[i % 2], X[i, 0];\n"             /* 7 */
    "    dve: rowsum s, x[i % 2];\n"                 /* 8 */
    "    act: mul_row x[i % 2], x[i % 2], s;\n"      /* 9 */
    "    dma: store Y[i, 0], x[i % 2];\n"            /* 10 */
    "  }\n"
    "}\n";

static Program *checked(const char *text) {
  Program *p = program_new("tiny.bfk", text, strlen(text), target_default(), stderr);
  parse(p);
  assert_int_equal(p->diag.errors, 0);
  check(p);
  assert_int_equal(p->diag.errors, 0);
  return p;
}

/* Tensors for params, X filled with 1, 2, 3, ... */
static RefTensor *tensors_for(Program *p, const int64_t *params) {
  RefTensor *t = ARENA_ARRAY(p->arena, RefTensor, p->kernel->ntensors);
  const char *err = NULL;
  assert_int_equal(reference_shapes(p, params, t, &err), 0);
  for (int i = 0; i < p->kernel->ntensors; i++) {
    t[i].data = ARENA_ARRAY(p->arena, float, t[i].rows * t[i].cols + 1);
    if (p->kernel->tensors[i].io != IO_OUT)
      for (int64_t j = 0; j < t[i].rows * t[i].cols; j++) t[i].data[j] = (float)(j + 1);
  }
  return t;
}

static void reference_computes_by_hand(void **state) {
  (void)state;
  Program *p = checked(tiny_kernel);
  int64_t params[1] = {2};
  RefTensor *t = tensors_for(p, params);
  assert_int_equal(t[0].rows, 4);
  assert_int_equal(t[0].cols, 2);
  const char *err = NULL;
  assert_int_equal(reference_run(p, params, t, &err), 0);
  /* X rows (1 2) (3 4) (5 6) (7 8); row sums 3 7 11 15. */
  const float want[8] = {3, 6, 21, 28, 55, 66, 105, 120};
  assert_memory_equal(t[1].data, want, sizeof want);
  program_free(p);
}

/* Replace the first occurrence of from in tiny_kernel with to, run with N. */
static const char *reference_error(const char *from, const char *to, int64_t n) {
  static char text[1024];
  const char *at = strstr(tiny_kernel, from);
  assert_non_null(at);
  snprintf(text, sizeof text, "%.*s%s%s", (int)(at - tiny_kernel), tiny_kernel, to, at + strlen(from));
  Program *p = checked(text);
  int64_t params[1] = {n};
  RefTensor *t = tensors_for(p, params);
  const char *err = NULL;
  assert_int_equal(reference_run(p, params, t, &err), -1);
  static char copy[512];
  snprintf(copy, sizeof copy, "%s", err);
  program_free(p);
  return copy;
}

static void reference_reports_errors(void **state) {
  (void)state;
  assert_string_equal(reference_error("Y[i, 0]", "Y[i + 1, 0]", 2),
                      "kernel tiny, line 10: store to Y[2, 0] is out of bounds (rows 4..5 of 4)");
  assert_string_equal(reference_error("X[i, 0]", "X[0, i]", 2),
                      "kernel tiny, line 7: load from X[0, 1] is out of bounds (cols 2..3 of 2)");
  assert_string_equal(reference_error("dve: rowsum s, x[i % 2]", "dve: rowsum s, x[i]", 3),
                      "kernel tiny, line 8: rowsum: slot x[2] is out of range (2 slots)");
}

/* ---- The f64 reference. */

static ExactTensor *exact_for(Program *p, const int64_t *params, const RefTensor *inputs) {
  ExactTensor *exact = ARENA_ARRAY(p->arena, ExactTensor, p->kernel->ntensors);
  const char *err = NULL;
  if (reference_f64(p, params, inputs, exact, &err)) fail_msg("reference_f64: %s", err);
  return exact;
}

static RefTensor *copied(Program *p, const RefTensor *from) {
  RefTensor *to = ARENA_ARRAY(p->arena, RefTensor, p->kernel->ntensors);
  for (int i = 0; i < p->kernel->ntensors; i++) {
    to[i] = from[i];
    to[i].data = ARENA_ARRAY(p->arena, float, from[i].rows * from[i].cols + 1);
    memcpy(to[i].data, from[i].data, (size_t)(from[i].rows * from[i].cols) * sizeof(float));
  }
  return to;
}

/* The f64 reference computes the tiny kernel exactly; the f32 results are
 * within its bounds, and a result off by 0.1% is not. */
static void f64_reference_by_hand(void **state) {
  (void)state;
  Program *p = checked(tiny_kernel);
  int64_t params[1] = {2};
  RefTensor *inputs = tensors_for(p, params);
  RefTensor *got = copied(p, inputs);
  const char *err = NULL;
  assert_int_equal(reference_run(p, params, got, &err), 0);
  ExactTensor *exact = exact_for(p, params, inputs);
  const double want[8] = {3, 6, 21, 28, 55, 66, 105, 120};
  for (int i = 0; i < 8; i++) {
    assert_true(exact[1].value[i] == want[i]);
    /* one rounding of the row sum, then of the product */
    assert_true(exact[1].bound[i] > 0 && exact[1].bound[i] < 1e-5 * want[i]);
  }
  ExactErrors errors;
  const char *report;
  assert_true(reference_f64_compare(p, got, exact, &errors, &report));
  assert_null(report);
  assert_true(errors.max_abs_err == 0 && errors.max_bound_ratio == 0);
  got[1].data[3] *= 1.001f;
  assert_false(reference_f64_compare(p, got, exact, &errors, &report));
  assert_non_null(report);
  assert_non_null(strstr(report, "tensor Y is off the f64 reference at [1, 1]: 28.02"));
  assert_true(errors.max_bound_ratio > 1000 && errors.max_rel_err > 0.0009 && errors.max_rel_err < 0.0011);
  program_free(p);
}

/* Every op of the table, run by the runtime's code (the sequential
 * reference) and by the f64 reference's own definitions, one small kernel
 * per op storing the op's result directly: they agree within the bounds,
 * and a wrong constant in either (a gelu off by 1e-4) would not. x is in
 * (-1, 1], x2 = x^2 + 0.5, c a [1, 8] and r an [8, 1] vector. */
static void f64_agrees_with_every_op(void **state) {
  (void)state;
  static const struct {
    const char *shape, *instr;
  } cases[] = {
      {"8, 8", "act: copy y, x"},         {"8, 8", "act: fill y, 0.1"},        {"8, 8", "act: scale y, x, 0.7"},
      {"8, 8", "act: exp y, x"},          {"8, 8", "act: relu y, x"},          {"8, 8", "act: tanh y, x"},
      {"8, 8", "act: rsqrt y, x2"},       {"8, 8", "act: recip y, x2"},        {"8, 8", "dve: add y, x, x2"},
      {"8, 8", "dve: sub y, x, x2"},      {"8, 8", "dve: mul y, x, x2"},       {"8, 8", "dve: max y, x, x2"},
      {"8, 1", "dve: rowsum y, x"},       {"8, 1", "dve: rowmax y, x"},        {"8, 8", "act: add_row y, x, r"},
      {"8, 8", "act: sub_row y, x, r"},   {"8, 8", "act: mul_row y, x, r"},    {"8, 8", "act: add y, x, 0.3"},
      {"8, 8", "act: sub y, x, 1e-5"},    {"8, 8", "act: mul y, x, 1.0 / 3"},  {"8, 8", "act: max y, x, -0.25"},
      {"8, 8", "dve: add_col y, x, c"},   {"8, 8", "dve: sub_col y, x, c"},    {"8, 8", "pool: mul_col y, x, c"},
      {"8, 8", "act: sigmoid y, x"},      {"8, 8", "act: gelu y, x"},          {"8, 8", "act: silu y, x"},
      {"8, 8", "act: square y, x"},       {"8, 8", "act: sqrt y, x2"},         {"8, 8", "act: abs y, x"},
      {"8, 1", "act: rowsum_square y, x"}, {"8, 1", "act: rowsum_exp y, x"},   {"8, 8", "pe: transpose y, x"},
      /* matmul writes f32 psum on trn1 (matmul_psum_f32): the result is copied out of p */
      {"8, 8", "pe: matmul p, x, x2;\n  act: copy y, p"},
      {"8, 8", "pe: matmul p, x, x2;\n  pe: matmul_acc p, x2, x;\n  act: copy y, p"},
      /* the nki.isa instructions */
      {"8, 8", "pe: nc_matmul p, x, x2;\n  act: copy y, p"},
      {"8, 8", "pe: nc_matmul p, x, x2;\n  pe: nc_matmul_acc p, x2, x;\n  act: copy y, p"},
      {"8, 8", "pe: nc_transpose y, x"},  {"8, 8", "dve: nc_transpose y, x"}, {"8, 8", "dve: memset y, 0.1"},
      {"8, 8", "pool: iota y, 1, -3, 8"},
      {"8, 8", "pool: affine_select y, -1, 0, 1, x, -3.0, greater_equal"},
      {"8, 1", "dve: tensor_reduce y, add, x"}, {"8, 1", "dve: tensor_reduce y, maximum, x, negate"},
      {"8, 1", "dve: tensor_reduce y, multiply, x2"},
      {"8, 8", "dve: tensor_scalar y, x, multiply, 0.7"}, {"8, 8", "act: tensor_scalar y, x, subtract, r"},
      {"8, 8", "pool: tensor_scalar y, x, add, 0.3, multiply, 3"},
      {"8, 8", "dve: tensor_scalar y, x, subtract, r, multiply, r"},
      {"8, 8", "dve: tensor_scalar y, x, greater, 0.1"},
      {"8, 8", "act: activation y, exp, x"}, {"8, 8", "act: activation y, gelu_apprx_tanh, x, r, 0.5"},
      {"8, 1", "act: copy y, r;\n  act: activation_acc x2, tanh, x, r, 0.5, y"},
      {"8, 8", "dve: tensor_tensor_scan y, x, x2, 0.5, multiply, add"},
      {"8, 8", "dve: tensor_tensor_scan y, x, x2, r, maximum, subtract"},
      {"8, 8", "pool: permute y, x, 4"}, {"8, 6", "dve: bn_stats y, x"}, {"8, 2", "dve: bn_stats s6, x;\n  dve: bn_aggr y, s6"},
  };
  /* the result stored in f32, and again in each narrow type: the bound counts each store's rounding */
  static const char *const types[] = {"f32", "bf16", "fp8e4", "fp8e5", "fp16"};
  static const int dtypes[] = {BFRT_DTYPE_F32, BFRT_DTYPE_BF16, BFRT_DTYPE_FP8E4, BFRT_DTYPE_FP8E5, BFRT_DTYPE_FP16};
  static const int significant_bits[] = {24, 8, 4, 3, 11};
  bool used[BFRT_NOPS] = {false};
  for (size_t n = 0; n < sizeof types / sizeof types[0] * (sizeof cases / sizeof cases[0]); n++) {
    size_t ty = n / (sizeof cases / sizeof cases[0]), i = n % (sizeof cases / sizeof cases[0]);
    char text[1280];
    snprintf(text, sizeof text,
             "kernel op(N: int) {\n"
             "  hbm in X: f32[8, 8];\n  hbm in C: f32[1, 8];\n  hbm in R: f32[8, 1];\n  hbm out Y: %s[%s];\n"
             "  sbuf x: f32[8, 8];\n  sbuf x2: f32[8, 8];\n  sbuf c: f32[1, 8];\n  sbuf r: f32[8, 1];\n"
             "  psum p: f32[8, 8];\n  sbuf s6: f32[8, 6];\n"
             "  sbuf y: %s[%s];\n"
             "  dma { load x, X[0, 0]; load c, C[0, 0]; load r, R[0, 0]; }\n"
             "  act { mul x, x, 1.0 / 32; sub x, x, 1; }\n"
             "  dve { mul x2, x, x; add x2, x2, 0.5; }\n"
             "  %s;\n"
             "  dma: store Y[0, 0], y;\n"
             "}\n",
             types[ty], cases[i].shape, types[ty], cases[i].shape, cases[i].instr);
    Program *p = checked(text);
    int64_t params[1] = {1};
    RefTensor *inputs = tensors_for(p, params);
    RefTensor *got = copied(p, inputs);
    const char *err = NULL;
    assert_int_equal(reference_run(p, params, got, &err), 0);
    ExactTensor *exact = exact_for(p, params, inputs);
    ExactErrors errors;
    const char *report;
    if (!reference_f64_compare(p, got, exact, &errors, &report)) fail_msg("%s (%s): %s", cases[i].instr, types[ty], report);
    if (ty > 0 && !strcmp(cases[i].instr, "act: exp y, x")) { /* two steps of the type off are over the bound */
      float *y = got[3].data;
      for (int step = 0; step < 2; step++) {
        int e;
        frexpf(y[5], &e); /* y[5] in [2^(e-1), 2^e): a step is 2^(e - p) */
        y[5] = bfrt_round(y[5] + ldexpf(1.0f, e - significant_bits[ty]), dtypes[ty]);
      }
      assert_false(reference_f64_compare(p, got, exact, &errors, &report));
      /* off by at least 1.5 steps, a bound of at most one: the store's rounding is counted once */
      if (!(errors.max_bound_ratio > 1.4)) fail_msg("%s: two steps off are %g of the bound", types[ty], errors.max_bound_ratio);
    }
    for (int j = 0; j < p->kernel->ninstrs; j++) used[p->kernel->instrs[j]->op] = true;
    program_free(p);
  }
  for (int op = 0; op < BFRT_NOPS; op++)
    if (!used[op]) fail_msg("op %s (%d) is not tested", op_info(op)->name, op);
}

/* The bound of a scan's element and of a statistic grows with the length
 * it is computed over: a running sum of N positive terms is rounded N
 * times, each time at its size, so its last element's bound grows as N^2
 * u (roughly), and bn_aggr's mean and variance over N elements inherit
 * the bounds of sums of N terms. The f32 results stay within them. Each
 * bound is taken for a row of N values 1 + j / N (x = X's row 0). */
static double last_bound(const char *instr, int n, int cols_out, int at) {
  char text[1024];
  snprintf(text, sizeof text,
           "kernel grow(N: int) {\n  hbm in X: f32[1, %d];\n  hbm out Y: f32[1, %d];\n  sbuf x: f32[1, %d];\n"
           "  sbuf z: f32[1, %d];\n  sbuf st: f32[1, 6];\n  sbuf y: f32[1, %d];\n"
           "  dma: load x, X[0, 0];\n  dve: memset z, 0;\n  %s;\n  dma: store Y[0, 0], y;\n}\n",
           n, cols_out, n, n, cols_out, instr);
  Program *p = checked(text);
  int64_t params[1] = {1};
  RefTensor *inputs = tensors_for(p, params);
  for (int j = 0; j < n; j++) inputs[0].data[j] = 1.0f + (float)j / (float)n;
  RefTensor *got = copied(p, inputs);
  const char *err = NULL;
  assert_int_equal(reference_run(p, params, got, &err), 0);
  ExactTensor *exact = exact_for(p, params, inputs);
  ExactErrors errors;
  const char *report;
  if (!reference_f64_compare(p, got, exact, &errors, &report)) fail_msg("%s: %s", instr, report);
  double bound = exact[1].bound[at];
  program_free(p);
  return bound;
}

static void f64_bounds_grow_with_length(void **state) {
  (void)state;
  const char *scan = "dve: tensor_tensor_scan y, x, z, 0.0, add, add";
  double s16 = last_bound(scan, 16, 16, 15), s256 = last_bound(scan, 256, 256, 255);
  /* 16 times the length: the last partial sum is 16 times larger and rounded 16 times as often */
  if (!(s256 > 100 * s16)) fail_msg("scan bound %g at 16, %g at 256", s16, s256);
  const char *stats = "dve: bn_stats st, x;\n  dve: bn_aggr y, st";
  double m16 = last_bound(stats, 16, 2, 0), m256 = last_bound(stats, 256, 2, 0);
  double v16 = last_bound(stats, 16, 2, 1), v256 = last_bound(stats, 256, 2, 1);
  if (!(m256 > 4 * m16 && v256 > 4 * v16)) fail_msg("bn mean bound %g, %g; variance %g, %g", m16, m256, v16, v256);
  printf("bounds at 16 and 256: scan %.3g %.3g, bn mean %.3g %.3g, bn variance %.3g %.3g\n", s16, s256, m16, m256, v16, v256);
}

/* The diagnostics: run the tiny kernel edited, through reference_f64. */
static const char *f64_error(const char *from, const char *to, int64_t n) {
  static char text[1024];
  const char *at = strstr(tiny_kernel, from);
  assert_non_null(at);
  snprintf(text, sizeof text, "%.*s%s%s", (int)(at - tiny_kernel), tiny_kernel, to, at + strlen(from));
  Program *p = checked(text);
  int64_t params[1] = {n};
  RefTensor *inputs = tensors_for(p, params);
  ExactTensor *exact = ARENA_ARRAY(p->arena, ExactTensor, p->kernel->ntensors);
  const char *err = NULL;
  assert_int_equal(reference_f64(p, params, inputs, exact, &err), -1);
  static char copy[512];
  snprintf(copy, sizeof copy, "%s", err);
  program_free(p);
  return copy;
}

static void f64_diagnostics(void **state) {
  (void)state;
  assert_string_equal(f64_error("dve: rowsum s, x[i % 2]", "dve: rowsum s, x[(i + 1) % 2]", 2),
                      "kernel tiny, line 8: 'rowsum' reads tile x[1] before anything wrote it");
  assert_string_equal(f64_error("Y[i, 0]", "Y[0, 0]", 2),
                      "kernel tiny, line 3: 4 of the 8 elements of out tensor Y are never stored, the first at [2, 0]");
  assert_string_equal(f64_error("dve: rowsum s, x[i % 2]",
                                "act: sub x[i % 2], x[i % 2], 4;\n    act: rsqrt x[i % 2], x[i % 2];\n"
                                "    dve: rowsum s, x[i % 2]",
                                2),
                      "kernel tiny, line 9: 'rsqrt' produces NaN from finite inputs, at [0, 0] of 'x'");
}

static void reference_division_by_zero(void **state) {
  (void)state;
  const char *text =
      "kernel d(N: int, D: int) {\n"
      "  hbm in X: f32[2, 2];\n"
      "  sbuf x: f32[2, 2];\n"
      "  for i in 0 .. N {\n"
      "    dma: load x, X[i / D, 0];\n"
      "  }\n"
      "}\n";
  Program *p = checked(text);
  int64_t params[2] = {1, 0};
  RefTensor *t = tensors_for(p, params);
  const char *err = NULL;
  assert_int_equal(reference_run(p, params, t, &err), -1);
  assert_string_equal(err, "kernel d, line 5: division by zero");
  params[0] = 0; /* no iteration, no division */
  assert_int_equal(reference_run(p, params, t, &err), 0);
  program_free(p);
}

/* ---- Hand-written streams through emit_c, libtcc and the threads runtime. */

typedef struct Builder {
  Program *p;
  IrExpr *i; /* the loop variable */
} Builder;

static IrNode *node(Builder *b, IrKind kind, int line) {
  IrNode *n = ARENA_NEW(b->p->arena, IrNode);
  n->kind = kind;
  n->line = line;
  return n;
}

static IrNode *op(Builder *b, int instr_id) {
  const Stmt *s = b->p->kernel->instrs[instr_id];
  IrNode *n = node(b, IR_OP, 7 + instr_id);
  n->instr = s;
  n->op = s->op;
  n->noperands = s->noperands;
  n->operands = ARENA_ARRAY(b->p->arena, IrOperand, s->noperands);
  for (int k = 0; k < s->noperands; k++) {
    const Operand *o = &s->operands[k];
    IrOperand *x = &n->operands[k];
    x->kind = o->kind;
    x->decl = o->decl;
    x->imm = o->imm;
    if (o->kind == OPND_TILE) x->slot = o->slot ? ir_from_expr(b->p, o->slot) : ir_const(b->p->arena, 0);
    if (o->kind == OPND_HBM) {
      x->row = ir_from_expr(b->p, o->row);
      x->col = ir_from_expr(b->p, o->col);
    }
  }
  return n;
}

/* wait S_engine >= scale * i + offset */
static IrNode *wait(Builder *b, const char *engine, int64_t scale, int64_t offset, int line) {
  Arena *a = b->p->arena;
  IrNode *n = node(b, IR_WAIT, line);
  n->engine = target_engine(b->p->target, engine);
  n->threshold = ir_binary(a, IX_ADD, ir_binary(a, IX_MUL, ir_const(a, scale), b->i, 0), ir_const(a, offset), 0);
  return n;
}

static IrNode *chain(IrNode **nodes, int n) {
  for (int k = 0; k + 1 < n; k++) nodes[k]->next = nodes[k + 1];
  return n ? nodes[0] : NULL;
}

static IrNode *loop(Builder *b, IrNode *body) {
  IrNode *n = node(b, IR_LOOP, 6);
  n->loop_id = 0;
  n->lo = ir_const(b->p->arena, 0);
  n->hi = ir_leaf(b->p->arena, IX_PARAM, 0);
  n->body = body;
  return n;
}

/* The exact barrier-free streams of tiny_kernel, plus one counter on dma
 * (an IR_SET per iteration) so that bookkeeping is exercised. */
static void build_streams(Program *p) {
  Builder b = {p, ir_leaf(p->arena, IX_LOOPVAR, 0)};
  IrProgram *ir = ARENA_NEW(p->arena, IrProgram);
  ir->sync = SYNC_BARRIER_FREE;
  ir->nengines = p->target->nengines;
  IrNode *set = node(&b, IR_SET, 7);
  set->var = 0;
  set->value = ir_binary(p->arena, IX_ADD, ir_leaf(p->arena, IX_VAR, 0), ir_const(p->arena, 1), 0);
  IrNode *dma[] = {op(&b, 0), wait(&b, "act", 1, 1, 10), op(&b, 3), set};
  IrNode *dve[] = {wait(&b, "dma", 2, 1, 8), wait(&b, "act", 1, 0, 8), op(&b, 1)};
  IrNode *act[] = {wait(&b, "dma", 2, 1, 9), wait(&b, "dve", 1, 1, 9), op(&b, 2)};
  IrStream *s = ir->streams;
  int e_dma = target_engine(p->target, "dma");
  s[e_dma].body = loop(&b, chain(dma, 4));
  s[e_dma].nvars = 1;
  static const char *names[] = {"iterations"};
  s[e_dma].var_names = names;
  s[target_engine(p->target, "dve")].body = loop(&b, chain(dve, 3));
  s[target_engine(p->target, "act")].body = loop(&b, chain(act, 3));
  p->ir = ir;
}

static void emitted_c_runs_and_matches(void **state) {
  (void)state;
  Program *p = checked(tiny_kernel);
  build_streams(p);
  char *c = emit_c_string(p);
  assert_non_null(strstr(c, "for (int64_t i = 0, bf_end0 = N; i < bf_end0; i++)"));
  assert_non_null(strstr(c, "/* line 9: act: mul_row x[i % 2], x[i % 2], s; */"));
  assert_non_null(strstr(c, "const bfrt_kernel bfk_tiny"));
  const char *jit_err;
  Jit *jit = jit_compile(p, c, &jit_err);
  assert_non_null(jit);
  const bfrt_kernel *k = jit_kernel(jit);
  assert_string_equal(k->name, "tiny");
  assert_int_equal(k->ntensors, 2);
  for (int64_t n = 0; n <= 5; n++) {
    int64_t params[1] = {n};
    RefTensor *t = tensors_for(p, params);
    const char *err = NULL;
    bfrt *rt = bfrt_new(k, params, &err);
    assert_non_null(rt);
    memcpy(bfrt_tensor_data(rt, 0), t[0].data, (size_t)(t[0].rows * t[0].cols) * sizeof(float));
    bfrt_options opt = {0};
    opt.jitter_seed = (uint64_t)n;
    assert_int_equal(bfrt_run(rt, &opt), 0);
    assert_int_equal(reference_run(p, params, t, &err), 0);
    assert_memory_equal(bfrt_tensor_data(rt, 1), t[1].data, (size_t)(t[1].rows * t[1].cols) * sizeof(float));
    const bfrt_stats *st = bfrt_get_stats(rt);
    assert_int_equal(st->instructions, 4 * n);
    assert_int_equal(st->bookkeeping, 6 * n); /* 1 set + 5 run-time thresholds per iteration */
    bfrt_delete(rt);
  }
  jit_free(jit);
  program_free(p);
}

/* The descriptor's tensor_shape: floor division and modulo like the
 * language, and the source line of a zero divisor. */
static void emitted_tensor_shapes(void **state) {
  (void)state;
  const char *text =
      "kernel d(N: int, D: int) {\n"
      "  hbm in  X: f32[N / D, 4];\n"
      "  hbm out Y: f32[N % D + 4, 4];\n"
      "  sbuf x: f32[4, 4];\n"
      "  dma: load x, X[0, 0];\n"
      "  dma: store Y[0, 0], x;\n"
      "}\n";
  Program *p = checked(text);
  transform_barrier_free(p);
  ir_validate(p);
  const char *jit_err;
  Jit *jit = jit_compile(p, emit_c_string(p), &jit_err);
  assert_non_null(jit);
  const bfrt_kernel *k = jit_kernel(jit);
  int64_t shape[2], params[2] = {8, 0};
  assert_int_equal(k->tensor_shape(params, 0, shape), 2);
  assert_int_equal(k->tensor_shape(params, 1, shape), 3);
  params[1] = -3;
  RefTensor t[2];
  const char *err = NULL;
  assert_int_equal(reference_shapes(p, params, t, &err), -1); /* N / D = -3 rows */
  assert_int_equal(k->tensor_shape(params, 0, shape), 0);
  assert_int_equal(shape[0], -3);
  assert_int_equal(shape[1], 4);
  assert_int_equal(k->tensor_shape(params, 1, shape), 0);
  assert_int_equal(shape[0], 3); /* 8 mod -3 = -1 */
  params[1] = 3;
  assert_int_equal(reference_shapes(p, params, t, &err), 0);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(k->tensor_shape(params, i, shape), 0);
    assert_int_equal(shape[0], t[i].rows);
    assert_int_equal(shape[1], t[i].cols);
  }
  jit_free(jit);
  program_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(npy_round_trip),
      cmocka_unit_test(npy_reads_version_2),
      cmocka_unit_test(npy_narrow_types),
      cmocka_unit_test(npy_bad_files),
      cmocka_unit_test(reference_computes_by_hand),
      cmocka_unit_test(reference_reports_errors),
      cmocka_unit_test(reference_division_by_zero),
      cmocka_unit_test(f64_reference_by_hand),
      cmocka_unit_test(f64_agrees_with_every_op),
      cmocka_unit_test(f64_bounds_grow_with_length),
      cmocka_unit_test(f64_diagnostics),
      cmocka_unit_test(emitted_c_runs_and_matches),
      cmocka_unit_test(emitted_tensor_shapes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
