/* test_types.c: the narrow float types, fp8e4, fp8e5 and fp16, exhaustively.
 *
 * The runtime rounds by scaling to its binade's quantum and rintf
 * (runtime/semantics.c); this file checks it against a reference built a
 * different way: every bit pattern of the format decoded as if none were
 * special, in increasing order, and a value rounded to the nearer of the
 * two patterns around it, the even pattern on a tie, with a pattern in the
 * special range meaning the overflow (Inf, or NaN for fp8e4, whose only
 * NaN is the top pattern). The points: every value of the format and both
 * signs, every midpoint between neighbours (the ties) and the floats just
 * either side of it, the overflow boundary, f32's extremes, and 200,000
 * random f32 bit patterns. For fp16 the compiler's own conversion
 * (_Float16, when it has one: gcc 12 and clang on x86-64 do) is a third
 * opinion on every point.
 *
 * Then every bit pattern goes through a .npy file of the type's dtype
 * ('|u1', '<f2') into a tensor and back out: the same bytes (a NaN as the
 * type's canonical NaN of the same sign), the values the reference
 * decodes, and each value unchanged by bfrt_round. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "runtime/bfrt.h"

typedef struct Format {
  int dtype;
  ElemType type;
  int exponent_bits, fraction_bits;
  bool ieee; /* the top exponent holds Inf and NaN; else only the top pattern is NaN */
} Format;

static const Format formats[] = {
    {BFRT_DTYPE_FP8E4, ELEM_FP8E4, 4, 3, false},
    {BFRT_DTYPE_FP8E5, ELEM_FP8E5, 5, 2, true},
    {BFRT_DTYPE_FP16, ELEM_FP16, 5, 10, true},
};

static unsigned patterns(const Format *f) { return 1u << (f->exponent_bits + f->fraction_bits); } /* of one sign */

/* Pattern p (no sign) as if every pattern were a finite number. */
static double as_if_finite(const Format *f, unsigned p) {
  int bias = (1 << (f->exponent_bits - 1)) - 1;
  unsigned e = p >> f->fraction_bits, m = p & ((1u << f->fraction_bits) - 1);
  if (e == 0) return ldexp((double)m, 1 - bias - f->fraction_bits);
  return ldexp((double)((1u << f->fraction_bits) + m), (int)e - bias - f->fraction_bits);
}

static bool special(const Format *f, unsigned p) {
  unsigned top = (1u << f->exponent_bits) - 1;
  return f->ieee ? p >> f->fraction_bits == top : p == patterns(f) - 1;
}

/* The value of pattern p (no sign) in the format. */
static double decoded(const Format *f, unsigned p) {
  if (!special(f, p)) return as_if_finite(f, p);
  return f->ieee && (p & ((1u << f->fraction_bits) - 1)) == 0 ? INFINITY : NAN;
}

/* x rounded to nearest even, by search over the patterns. */
static float reference_round(const Format *f, float x) {
  if (isnan(x)) return x;
  double a = fabs((double)x);
  double overflow = f->ieee ? INFINITY : NAN;
  unsigned n = patterns(f), lo = 0, hi = n - 1;
  if (a >= as_if_finite(f, n - 1)) return (float)copysign(overflow, x); /* beyond every pattern */
  while (hi - lo > 1) { /* as_if_finite(lo) <= a < as_if_finite(hi) */
    unsigned mid = lo + (hi - lo) / 2;
    if (as_if_finite(f, mid) <= a) lo = mid;
    else hi = mid;
  }
  double below = a - as_if_finite(f, lo), above = as_if_finite(f, hi) - a;
  unsigned p = below < above ? lo : above < below ? hi : (lo % 2 == 0 ? lo : hi);
  return (float)copysign(special(f, p) ? overflow : as_if_finite(f, p), x);
}

static bool same(float a, float b) { return (isnan(a) && isnan(b) && !signbit(a) == !signbit(b)) || !memcmp(&a, &b, sizeof a); }

static void check_point(const Format *f, float x, long *checked) {
  float got = bfrt_round(x, f->dtype), want = reference_round(f, x);
  if (!same(got, want)) fail_msg("%s: %a rounds to %a, the reference says %a", bfrt_dtype_name(f->dtype), x, got, want);
#ifdef __FLT16_MAX__
  if (f->dtype == BFRT_DTYPE_FP16) {
    float compiler = (float)(_Float16)x;
    if (!same(got, compiler) && !(isnan(got) && isnan(compiler))) /* the compiler's NaN sign is its own */
      fail_msg("fp16: %a rounds to %a, _Float16 says %a", x, got, compiler);
  }
#endif
  (*checked)++;
}

static void check_both_signs(const Format *f, float x, long *checked) {
  check_point(f, x, checked);
  check_point(f, -x, checked);
}

static void rounding_matches_the_reference(void **state) {
  (void)state;
  uint64_t rng = 13;
  for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
    const Format *f = &formats[i];
    long checked = 0;
    unsigned n = patterns(f);
    for (unsigned p = 0; p + 1 < n; p++) {
      double v = as_if_finite(f, p), next = as_if_finite(f, p + 1), mid = (v + next) / 2;
      assert_true((double)(float)mid == mid); /* ties are f32 values */
      check_both_signs(f, (float)v, &checked);
      check_both_signs(f, (float)mid, &checked);
      check_both_signs(f, nextafterf((float)mid, 0.0f), &checked);
      check_both_signs(f, nextafterf((float)mid, INFINITY), &checked);
    }
    static const float extremes[] = {0.0f, 0x1p-149f, 0x1p-126f, 1.0f, 65504.0f, 65520.0f, 57344.0f, 61440.0f, 448.0f, 464.0f, 480.0f, FLT_MAX, INFINITY, NAN};
    for (size_t e = 0; e < sizeof extremes / sizeof *extremes; e++) check_both_signs(f, extremes[e], &checked);
    for (int r = 0; r < 200000; r++) {
      rng = rng * 6364136223846793005u + 1442695040888963407u;
      uint32_t bits = (uint32_t)(rng >> 32);
      float x;
      memcpy(&x, &bits, sizeof x);
      check_point(f, x, &checked);
    }
    assert_true(checked > 200000);
  }
}

/* The boundaries the docs state, written out: the largest finite value,
 * where overflow starts, the smallest subnormal and the tie below it. */
static void boundaries(void **state) {
  (void)state;
  const int e4 = BFRT_DTYPE_FP8E4, e5 = BFRT_DTYPE_FP8E5, h = BFRT_DTYPE_FP16;
  struct { float x; int dtype; float want; } cases[] = {
      {57344.0f, e5, 57344.0f},          {61439.996f, e5, 57344.0f},        {61440.0f, e5, INFINITY},
      {-61440.0f, e5, -INFINITY},        {0x1p-16f, e5, 0x1p-16f},          {0x1p-17f, e5, 0.0f},
      {0x1.8p-17f, e5, 0x1p-16f},        {0x1.8p-16f, e5, 0x1p-15f},        {1.125f, e5, 1.0f},
      {1.375f, e5, 1.5f},                {INFINITY, e5, INFINITY},          {65504.0f, h, 65504.0f},
      {65519.996f, h, 65504.0f},         {65520.0f, h, INFINITY},           {0x1p-24f, h, 0x1p-24f},
      {0x1p-25f, h, 0.0f},               {0x1.8p-25f, h, 0x1p-24f},         {0x1.8p-24f, h, 0x1p-23f},
      {1.0f + 0x1p-11f, h, 1.0f},        {1.0f + 3 * 0x1p-11f, h, 1.0f + 0x1p-9f}, {0x1.FFCp-15f, h, 0x1p-14f}, /* a tie between the largest subnormal and the smallest normal */
      {464.0f, e4, 448.0f},              {464.00003f, e4, NAN},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    float got = bfrt_round(cases[i].x, cases[i].dtype);
    if (!same(got, cases[i].want))
      fail_msg("case %zu: %a rounds in %s to %a, not %a", i, cases[i].x, bfrt_dtype_name(cases[i].dtype), got, cases[i].want);
  }
  assert_int_equal(bfrt_dtype_bytes(e5), 1);
  assert_int_equal(bfrt_dtype_bytes(h), 2);
}

/* ---- Every pattern through a .npy file and back. */

static void write_file(const char *path, const char *descr, unsigned count, const unsigned char *data, size_t bytes) {
  char dict[128];
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (1, %u), }", descr, count);
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)n, 0};
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fwrite(pre, 1, sizeof pre, f);
  fwrite(dict, 1, (size_t)n, f);
  fwrite(data, 1, bytes, f);
  fclose(f);
}

/* The data of a .npy file bfsync wrote: after its header. */
static unsigned char *file_data(const char *path, size_t bytes) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  unsigned char pre[10];
  assert_int_equal(fread(pre, 1, 10, f), 10);
  assert_int_equal(fseek(f, pre[8] | pre[9] << 8, SEEK_CUR), 0);
  unsigned char *data = malloc(bytes + 1);
  assert_int_equal(fread(data, 1, bytes, f), bytes);
  assert_int_equal(fgetc(f), EOF);
  fclose(f);
  return data;
}

static void every_pattern_round_trips(void **state) {
  (void)state;
  char path[] = "/tmp/bfsync-types-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
    const Format *f = &formats[i];
    unsigned count = 2 * patterns(f), bytes = (unsigned)bfrt_dtype_bytes(f->dtype);
    unsigned char *raw = malloc((size_t)count * bytes);
    for (unsigned p = 0; p < count; p++) {
      raw[bytes * p] = (unsigned char)p;
      if (bytes == 2) raw[bytes * p + 1] = (unsigned char)(p >> 8);
    }
    write_file(path, bytes == 2 ? "<f2" : "|u1", count, raw, (size_t)count * bytes);
    Arena *a = arena_new();
    float *values = malloc((size_t)count * sizeof(float));
    NpyArray array = {1, count, values, f->type, 0, {0}};
    const char *err = NULL;
    if (npy_read(a, path, "T", &array, &err)) fail_msg("%s", err);
    for (unsigned p = 0; p < count; p++) {
      unsigned magnitude = p & (patterns(f) - 1);
      double want = decoded(f, magnitude);
      float got = values[p];
      if (isnan(want) ? !isnan(got) : fabsf(got) != (float)want || !!signbit(got) != (p >= patterns(f)))
        fail_msg("%s pattern 0x%x reads as %a, not %a", bfrt_dtype_name(f->dtype), p, got, want);
      if (!same(bfrt_round(got, f->dtype), got)) fail_msg("%s pattern 0x%x: its value is not kept by rounding", bfrt_dtype_name(f->dtype), p);
      if (isnan(got) && !!signbit(got) != (p >= patterns(f))) fail_msg("pattern 0x%x: NaN loses its sign", p);
    }
    if (npy_write(a, path, &array, &err)) fail_msg("%s", err);
    unsigned char *back = file_data(path, (size_t)count * bytes);
    unsigned nan_pattern = f->ieee ? ((1u << f->exponent_bits) - 1) << f->fraction_bits | 1u << (f->fraction_bits - 1)
                                   : patterns(f) - 1;
    for (unsigned p = 0; p < count; p++) {
      unsigned was = raw[bytes * p] | (bytes == 2 ? raw[bytes * p + 1] << 8 : 0);
      unsigned now = back[bytes * p] | (bytes == 2 ? back[bytes * p + 1] << 8 : 0);
      unsigned sign = p & patterns(f);
      unsigned expect = isnan(values[p]) ? sign | nan_pattern : was;
      if (now != expect) fail_msg("%s pattern 0x%x is written back as 0x%x", bfrt_dtype_name(f->dtype), was, now);
    }
    free(back);
    free(values);
    free(raw);
    arena_free(a);
  }
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rounding_matches_the_reference),
      cmocka_unit_test(boundaries),
      cmocka_unit_test(every_pattern_round_trips),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
