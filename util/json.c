/* json.c: the strict pull reader of json.h.
 *
 * Hostile input is the point: a file that is truncated, nested too deep,
 * holds a NUL byte, a stray byte of invalid UTF-8, a number too large for
 * a double, or a string too long for its buffer fails with a positioned
 * message, never a crash, and the reader never reads past len. Recursion
 * only happens in json_skip, bounded by JSON_MAX_DEPTH. */
#include "util/json.h"

#include "util/numbers.h"
#include "util/utf8.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_NUMBER_CHARS = 64 };

static int string(JsonReader *j, char *buf, size_t size, bool cut, const char *what);

void json_init(JsonReader *j, const char *path, const char *text, size_t len) {
  *j = (JsonReader){.path = path, .text = text, .len = len};
}

int json_error_at(JsonReader *j, size_t at, const char *fmt, ...) {
  if (j->failed) return -1;
  j->failed = true;
  int line = 1, col = 1;
  for (size_t i = 0; i < at && i < j->len; i++) {
    if (j->text[i] == '\n') line++, col = 1;
    else col++;
  }
  int n = snprintf(j->error, sizeof j->error, "%s:%d:%d: error: ", j->path, line, col);
  va_list ap;
  va_start(ap, fmt);
  if (n > 0 && (size_t)n < sizeof j->error) vsnprintf(j->error + n, sizeof j->error - (size_t)n, fmt, ap);
  va_end(ap);
  return -1;
}

static void skip_space(JsonReader *j) {
  while (j->pos < j->len && strchr(" \t\r\n", j->text[j->pos]) && j->text[j->pos]) j->pos++;
}

size_t json_offset(JsonReader *j) {
  skip_space(j);
  return j->pos;
}

char json_peek(JsonReader *j) {
  skip_space(j);
  return j->pos < j->len ? j->text[j->pos] : 0;
}

/* What is at the reader, for "expected X, found Y". */
static const char *found(JsonReader *j) {
  if (j->pos >= j->len) return "the end of the file";
  char c = j->text[j->pos];
  if (c == 0) return "a NUL byte";
  return strchr("{[\"-0123456789tfn", c) ? "another value" : "an unexpected character";
}

static int expect(JsonReader *j, char c, const char *what) {
  if (j->failed) return -1;
  if (json_peek(j) != c) return json_error_at(j, j->pos, "expected %s, found %s", what, found(j));
  j->pos++;
  return 0;
}

static int open_nest(JsonReader *j, char c, const char *what) {
  if (expect(j, c, what)) return -1;
  if (++j->depth > JSON_MAX_DEPTH)
    return json_error_at(j, j->pos - 1, "nested deeper than %d levels", JSON_MAX_DEPTH);
  return 0;
}

int json_object(JsonReader *j) { return open_nest(j, '{', "an object"); }
int json_array(JsonReader *j) { return open_nest(j, '[', "an array"); }

/* The common part of json_member and json_element: 1 for another item,
 * 0 after close. */
static int next_item(JsonReader *j, bool *first, char close) {
  if (j->failed) return -1;
  char c = json_peek(j);
  if (c == close) {
    j->pos++;
    j->depth--;
    return 0;
  }
  if (!*first && expect(j, ',', close == '}' ? "',' or '}'" : "',' or ']'")) return -1;
  *first = false;
  return 1;
}

int json_member(JsonReader *j, bool *first, char *key, size_t size) {
  bool was_first = *first;
  int more = next_item(j, first, '}');
  if (more <= 0) return more;
  if (json_peek(j) != '"')
    return json_error_at(j, j->pos, "expected %s, found %s", was_first ? "a member name or '}'" : "a member name",
                         found(j));
  if (string(j, key, size, false, "a member name") || expect(j, ':', "':'")) return -1;
  return 1;
}

int json_element(JsonReader *j, bool *first) {
  int more = next_item(j, first, ']');
  if (more <= 0) return more;
  if (json_peek(j) == ']') return json_error_at(j, j->pos, "expected a value after ','");
  return 1;
}

static int hex4(JsonReader *j, size_t at, unsigned *out) {
  if (at + 4 > j->len) return json_error_at(j, j->len, "unterminated string");
  unsigned v = 0;
  for (size_t i = at; i < at + 4; i++) {
    char c = j->text[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return json_error_at(j, i, "expected 4 hex digits after \\u");
    v = v * 16 + (unsigned)d;
  }
  *out = v;
  return 0;
}

static size_t put_utf8(char *out, unsigned cp) {
  if (cp < 0x80) return out[0] = (char)cp, 1;
  if (cp < 0x800) return out[0] = (char)(0xc0 | cp >> 6), out[1] = (char)(0x80 | (cp & 0x3f)), 2;
  if (cp < 0x10000)
    return out[0] = (char)(0xe0 | cp >> 12), out[1] = (char)(0x80 | ((cp >> 6) & 0x3f)),
           out[2] = (char)(0x80 | (cp & 0x3f)), 3;
  out[0] = (char)(0xf0 | cp >> 18), out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), out[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

/* One escape after the backslash at j->pos - 1: its code point. */
static int escape(JsonReader *j, unsigned *cp) {
  size_t at = j->pos - 1;
  if (j->pos >= j->len) return json_error_at(j, j->len, "unterminated string");
  char c = j->text[j->pos++];
  const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
  const char *hit = c ? strchr(from, c) : NULL;
  if (hit) return *cp = (unsigned char)to[hit - from], 0;
  if (c != 'u') return json_error_at(j, at, "invalid escape '\\%c'", c >= 0x20 && c < 0x7f ? c : '?');
  if (hex4(j, j->pos, cp)) return -1;
  j->pos += 4;
  if (*cp >= 0xdc00 && *cp < 0xe000) return json_error_at(j, at, "unpaired surrogate \\u%04x", *cp);
  if (*cp < 0xd800 || *cp >= 0xdc00) return 0;
  unsigned low;
  if (j->pos + 2 > j->len || j->text[j->pos] != '\\' || j->text[j->pos + 1] != 'u' || hex4(j, j->pos + 2, &low) ||
      low < 0xdc00 || low >= 0xe000)
    return json_error_at(j, at, "unpaired surrogate \\u%04x", *cp);
  j->pos += 6;
  *cp = 0x10000 + ((*cp - 0xd800) << 10) + (low - 0xdc00);
  return 0;
}

/* A string; into buf when size > 0 (else only checked), its first whole
 * characters that fit when cut (else a longer one is an error). */
static int string(JsonReader *j, char *buf, size_t size, bool cut, const char *what) {
  bool full = false;
  size_t start = json_offset(j), n = 0;
  if (expect(j, '"', what)) return -1;
  for (;;) {
    if (j->pos >= j->len) return json_error_at(j, j->len, "unterminated string");
    unsigned char c = (unsigned char)j->text[j->pos];
    char bytes[4];
    size_t len = 1;
    if (c == '"') break;
    if (c == 0) return json_error_at(j, j->pos, "a NUL byte in a string");
    if (c < 0x20) return json_error_at(j, j->pos, "control character 0x%02x in a string", c);
    if (c == '\\') {
      unsigned cp;
      j->pos++;
      if (escape(j, &cp)) return -1;
      if (cp == 0 && size) return json_error_at(j, start, "%s holds a NUL character", what);
      len = put_utf8(bytes, cp);
    } else if (c >= 0x80) {
      len = (size_t)utf8_length((const unsigned char *)j->text + j->pos, j->len - j->pos);
      if (!len) return json_error_at(j, j->pos, "invalid UTF-8 in a string");
      memcpy(bytes, j->text + j->pos, len);
      j->pos += len;
    } else {
      bytes[0] = (char)c;
      j->pos++;
    }
    if (size && n + len >= size && !cut) return json_error_at(j, start, "%s longer than %zu bytes", what, size - 1);
    full |= size && n + len >= size;
    if (size && !full) {
      memcpy(buf + n, bytes, len);
      n += len;
    }
  }
  j->pos++;
  if (size) buf[n] = 0;
  return 0;
}

int json_string(JsonReader *j, char *buf, size_t size, const char *what) {
  if (json_peek(j) != '"' && !j->failed) return json_error_at(j, j->pos, "%s must be a string", what);
  return string(j, buf, size, false, what);
}

int json_string_cut(JsonReader *j, char *buf, size_t size, const char *what) {
  if (json_peek(j) != '"' && !j->failed) return json_error_at(j, j->pos, "%s must be a string", what);
  return string(j, buf, size, true, what);
}

static size_t digits(const JsonReader *j, size_t at) {
  while (at < j->len && j->text[at] >= '0' && j->text[at] <= '9') at++;
  return at;
}

/* number: [ "-" ] ( "0" | digit1-9 { digit } ) [ "." digit { digit } ] [ ( "e" | "E" ) [ "+" | "-" ] digit { digit } ] */
int json_number(JsonReader *j, double *out, const char *what) {
  size_t start = json_offset(j), at = start;
  if (j->failed) return -1;
  if (at < j->len && j->text[at] == '-') at++;
  if (at >= j->len || j->text[at] < '0' || j->text[at] > '9') return json_error_at(j, start, "%s must be a number", what);
  at = j->text[at] == '0' ? at + 1 : digits(j, at);
  if (at < j->len && j->text[at] == '.') {
    if (digits(j, at + 1) == at + 1) return json_error_at(j, at + 1, "expected a digit after '.'");
    at = digits(j, at + 1);
  }
  if (at < j->len && (j->text[at] == 'e' || j->text[at] == 'E')) {
    at++;
    if (at < j->len && (j->text[at] == '+' || j->text[at] == '-')) at++;
    if (digits(j, at) == at) return json_error_at(j, at, "expected a digit in the exponent");
    at = digits(j, at);
  }
  if (at - start > MAX_NUMBER_CHARS) return json_error_at(j, start, "%s: a number longer than %d characters", what, MAX_NUMBER_CHARS);
  double v;
  if (parse_real(j->text + start, at - start, &v)) return json_error_at(j, start, "%s: number out of range", what);
  j->pos = at;
  *out = v;
  return 0;
}

static int literal(JsonReader *j, const char *word) {
  size_t n = strlen(word);
  if (j->len - j->pos < n || memcmp(j->text + j->pos, word, n)) return json_error_at(j, j->pos, "expected a value, found %s", found(j));
  j->pos += n;
  return 0;
}

int json_skip(JsonReader *j) {
  bool first = true;
  char key[1];
  int more;
  switch (json_peek(j)) {
  case '{':
    if (json_object(j)) return -1;
    while ((more = json_member(j, &first, key, 0)) > 0)
      if (json_skip(j)) return -1;
    return more;
  case '[':
    if (json_array(j)) return -1;
    while ((more = json_element(j, &first)) > 0)
      if (json_skip(j)) return -1;
    return more;
  case '"': return string(j, key, 0, false, "a string");
  case 't': return literal(j, "true");
  case 'f': return literal(j, "false");
  case 'n': return literal(j, "null");
  default: {
    double ignored;
    if (j->failed) return -1;
    if (json_peek(j) == '-' || (json_peek(j) >= '0' && json_peek(j) <= '9')) return json_number(j, &ignored, "a number");
    return json_error_at(j, j->pos, "expected a value, found %s", found(j));
  }
  }
}

int json_end(JsonReader *j) {
  if (j->failed) return -1;
  if (json_peek(j) || j->pos < j->len) return json_error_at(j, j->pos, "unexpected text after the document");
  return 0;
}
