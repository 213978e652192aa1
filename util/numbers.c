/* numbers.c: decimal text to numbers (numbers.h). Integers are read digit
 * by digit with the overflow test before each step, so no value wraps and
 * errno plays no part; reals go through strtod on a NUL-terminated copy of
 * exactly the span, after a syntax check, so nothing past the span (or a
 * hex float, "inf", "nan") is ever read. */
#include "util/numbers.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int parse_digits(const char *text, size_t len, uint64_t max, uint64_t *out) {
  if (len == 0) return -1;
  uint64_t v = 0;
  for (size_t i = 0; i < len; i++) {
    if (text[i] < '0' || text[i] > '9') return -1;
    uint64_t digit = (uint64_t)(text[i] - '0');
    if (digit > max || v > (max - digit) / 10) return -1;
    v = v * 10 + digit;
  }
  *out = v;
  return 0;
}

int parse_integer(const char *text, int64_t min, uint64_t max, uint64_t *out) {
  bool negative = text[0] == '-';
  uint64_t v;
  if (!negative) {
    if (parse_digits(text, strlen(text), max, &v) || (min > 0 && v < (uint64_t)min)) return -1;
    *out = v;
    return 0;
  }
  if (min >= 0) return -1;
  uint64_t most = (uint64_t)(-(min + 1)) + 1; /* |min|, without overflow at INT64_MIN */
  if (parse_digits(text + 1, strlen(text + 1), most, &v)) return -1;
  *out = 0 - v;
  return 0;
}

/* digits [ "." digits ] [ ("e" | "E") [ "+" | "-" ] digits ], at least one
 * digit before the exponent. */
static bool decimal_syntax(const char *t, size_t len) {
  size_t i = 0, digits = 0;
  while (i < len && t[i] >= '0' && t[i] <= '9') i++, digits++;
  if (i < len && t[i] == '.')
    for (i++; i < len && t[i] >= '0' && t[i] <= '9'; i++) digits++;
  if (!digits) return false;
  if (i < len && (t[i] == 'e' || t[i] == 'E')) {
    i++;
    if (i < len && (t[i] == '+' || t[i] == '-')) i++;
    size_t at = i;
    while (i < len && t[i] >= '0' && t[i] <= '9') i++;
    if (i == at) return false;
  }
  return i == len;
}

int parse_real(const char *text, size_t len, double *out) {
  bool negative = len > 0 && text[0] == '-';
  if (!decimal_syntax(text + negative, len - negative)) return -1;
  char small[64], *copy = len < sizeof small ? small : malloc(len + 1);
  if (!copy) return -1;
  memcpy(copy, text, len);
  copy[len] = 0;
  errno = 0;
  double v = strtod(copy, NULL);
  bool huge = !isfinite(v) || (errno == ERANGE && fabs(v) > 1);
  if (copy != small) free(copy);
  *out = huge ? (negative ? -INFINITY : INFINITY) : v;
  return huge ? 1 : 0;
}

int64_t gcd_i64(int64_t a, int64_t b) {
  while (b) {
    int64_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}
