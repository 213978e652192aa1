/* test_util.c: the ground floor's one-of-everything (util/): the JSON
 * writer (separators, escaping, null for what JSON cannot hold, output the
 * reader takes back), the integer and number parsers at their limits,
 * splitmix64 against an independent implementation, and the clock. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/clock.h"
#include "util/json.h"
#include "util/numbers.h"
#include "util/random.h"

/* What body writes through a writer (spaced or compact), as a string. */
static char *written(bool compact, void (*body)(JsonWriter *)) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  JsonWriter w;
  jw_init(&w, f, compact);
  body(&w);
  fclose(f);
  return text;
}

static void document(JsonWriter *w) {
  jw_object(w);
  jw_key_string(w, "name", "a \"q\" \\ \n\t\x01 \xc3\xa9 \xff");
  jw_key_int(w, "n", INT64_MIN);
  jw_key(w, "u");
  jw_uint(w, UINT64_MAX);
  jw_key(w, "list");
  jw_array(w);
  jw_fixed(w, 1.25, 3);
  jw_sig(w, NAN, 9);
  jw_fixed(w, INFINITY, 1);
  jw_bool(w, false);
  jw_null(w);
  jw_array(w);
  jw_close(w);
  jw_close(w);
  jw_key(w, "empty");
  jw_object(w);
  jw_close(w);
  jw_close(w);
}

static void lines(JsonWriter *w) {
  jw_object(w);
  jw_key(w, "events");
  jw_lines(w);
  jw_int(w, 1);
  jw_int(w, 2);
  jw_close(w);
  jw_key(w, "none");
  jw_lines(w);
  jw_close(w);
  jw_close(w);
}

static void json_writer_separates_and_escapes(void **state) {
  (void)state;
  char *spaced = written(false, document);
  assert_string_equal(spaced, "{\"name\": \"a \\\"q\\\" \\\\ \\u000a\\u0009\\u0001 \xc3\xa9 \\ufffd\", "
                              "\"n\": -9223372036854775808, \"u\": 18446744073709551615, "
                              "\"list\": [1.250, null, null, false, null, []], \"empty\": {}}");
  char *compact = written(true, lines);
  assert_string_equal(compact, "{\"events\":[\n1,\n2\n],\"none\":[]}");
  /* the reader takes the writer's output back */
  JsonReader j;
  json_init(&j, "test", spaced, strlen(spaced));
  assert_int_equal(json_skip(&j), 0);
  assert_int_equal(json_end(&j), 0);
  json_init(&j, "test", compact, strlen(compact));
  assert_int_equal(json_skip(&j), 0);
  assert_int_equal(json_end(&j), 0);
  free(spaced);
  free(compact);
}

static void integers_at_their_limits(void **state) {
  (void)state;
  uint64_t v;
  assert_int_equal(parse_digits("18446744073709551615", 20, UINT64_MAX, &v), 0);
  assert_true(v == UINT64_MAX);
  assert_int_equal(parse_digits("18446744073709551616", 20, UINT64_MAX, &v), -1);
  assert_int_equal(parse_digits("9223372036854775807", 19, INT64_MAX, &v), 0);
  assert_int_equal(parse_digits("9223372036854775808", 19, INT64_MAX, &v), -1);
  assert_int_equal(parse_digits("12", 1, 100, &v), 0); /* only the span */
  assert_int_equal((int)v, 1);
  assert_int_equal(parse_digits("4", 1, 3, &v), -1); /* a digit above max */
  assert_int_equal(parse_digits("3", 1, 3, &v), 0);
  assert_int_equal(parse_digits("0", 1, 0, &v), 0);
  assert_int_equal(parse_digits("1", 1, 0, &v), -1);
  assert_int_equal(parse_digits("", 0, 100, &v), -1);
  assert_int_equal(parse_digits("1a", 2, 100, &v), -1);
  assert_int_equal(parse_digits("+1", 2, 100, &v), -1);
  assert_int_equal(parse_integer("-9223372036854775808", INT64_MIN, INT64_MAX, &v), 0);
  assert_true((int64_t)v == INT64_MIN);
  assert_int_equal(parse_integer("-9223372036854775809", INT64_MIN, INT64_MAX, &v), -1);
  assert_int_equal(parse_integer("-1", 0, 10, &v), -1);
  assert_int_equal(parse_integer("0", 1, 10, &v), -1);
  assert_int_equal(parse_integer("10", 1, 10, &v), 0);
  assert_int_equal(parse_integer("11", 1, 10, &v), -1);
  assert_int_equal(parse_integer("-", -5, 5, &v), -1);
  assert_int_equal(parse_integer(" 1", -5, 5, &v), -1);
}

static void numbers_as_c_and_json_write_them(void **state) {
  (void)state;
  double v;
  assert_int_equal(parse_real("1e-3", 4, &v), 0);
  assert_true(v == 1e-3);
  assert_int_equal(parse_real("3.4028235e38", 12, &v), 0);
  assert_int_equal(parse_real(".5", 2, &v), 0);
  assert_true(v == 0.5);
  assert_int_equal(parse_real("5.", 2, &v), 0);
  assert_int_equal(parse_real("-2.5E+1", 7, &v), 0);
  assert_true(v == -25);
  assert_int_equal(parse_real("1e-400", 6, &v), 0); /* underflows to what it rounds to */
  assert_true(v >= 0 && v < 1e-300);
  assert_int_equal(parse_real("1e999", 5, &v), 1);
  assert_true(isinf(v));
  assert_int_equal(parse_real("1.5x", 3, &v), 0); /* only the span */
  assert_true(v == 1.5);
  const char *bad[] = {"", ".", "e5", "1e", "1e+", "0x10", "inf", "nan", " 1", "1 ", "--1", "1.5x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) assert_int_equal(parse_real(bad[i], strlen(bad[i]), &v), -1);
}

/* The first outputs for seed 1234567 of the published algorithm, as an
 * independent implementation (Python, arbitrary precision) computes them. */
static void splitmix64_is_splitmix64(void **state) {
  (void)state;
  uint64_t s = 1234567;
  assert_true(splitmix64_next(&s) == UINT64_C(6457827717110365317));
  assert_true(splitmix64_next(&s) == UINT64_C(3203168211198807973));
  assert_true(splitmix64_next(&s) == UINT64_C(9817491932198370423));
  assert_true(splitmix64(1234567) == UINT64_C(6457827717110365317));
}

static void clock_is_monotonic(void **state) {
  (void)state;
  int64_t a = clock_now_ns(), b = clock_now_ns();
  assert_true(a > 0 && b >= a);
  struct timespec t = clock_after_ns(1999999999);
  assert_true(t.tv_nsec >= 0 && t.tv_nsec < 1000000000);
  assert_true((int64_t)t.tv_sec * 1000000000 + t.tv_nsec >= b + 1999999999);
  assert_true(clock_now_ms() >= b / 1000000);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(json_writer_separates_and_escapes),
      cmocka_unit_test(integers_at_their_limits),
      cmocka_unit_test(numbers_as_c_and_json_write_them),
      cmocka_unit_test(splitmix64_is_splitmix64),
      cmocka_unit_test(clock_is_monotonic),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
