/* json.h: bfsync's one JSON reader and one JSON writer.
 *
 * The reader: small and strict, for files bfsync reads back (its own
 * Chrome traces), in the pull style of a hand-written parser: the caller
 * walks the document it expects (an object, its members, an array, its
 * elements, a string, a number) and skips what it does not need, so
 * nothing is built that the caller throws away and memory stays the
 * caller's. RFC 8259 and nothing more (no comments, no trailing commas,
 * no NaN, valid UTF-8, no unpaired surrogates), nesting at most
 * JSON_MAX_DEPTH deep. Every failure records one message,
 * "PATH:LINE:COL: error: ...", in the reader and returns -1; after a
 * failure every call fails, so a caller may check once at the end of a
 * sequence. */
#ifndef JSON_H
#define JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { JSON_MAX_DEPTH = 64 };

typedef struct JsonReader {
  const char *path; /* for messages */
  const char *text;
  size_t len, pos;
  int depth;
  bool failed;
  char error[512];
} JsonReader;

void json_init(JsonReader *j, const char *path, const char *text, size_t len);
/* The next value's first character ('{', '[', '"', 't', 'f', 'n', a digit
 * or '-'), or 0 at the end of the text; skips white space. */
char json_peek(JsonReader *j);
/* The offset of the next value (after white space), for json_error_at. */
size_t json_offset(JsonReader *j);
/* Fail with a message at offset at. Returns -1. */
int json_error_at(JsonReader *j, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* '{' ... Then json_member(j, &first, key, size) per member: 1 with the
 * key in key (a key longer than size - 1 bytes is an error; size 0: the
 * key is only checked) and the reader
 * before its value, 0 after the closing '}', -1 on error. first starts
 * true. Arrays alike: json_array, then json_element(j, &first). */
int json_object(JsonReader *j);
int json_member(JsonReader *j, bool *first, char *key, size_t size);
int json_array(JsonReader *j);
int json_element(JsonReader *j, bool *first);

/* A string into buf (decoded, NUL-terminated; longer than size - 1 bytes
 * or holding a NUL is an error naming what). */
int json_string(JsonReader *j, char *buf, size_t size, const char *what);
/* The same, cut to its first whole characters that fit (a label to show). */
int json_string_cut(JsonReader *j, char *buf, size_t size, const char *what);
/* A number (finite as a double), what naming it in messages. */
int json_number(JsonReader *j, double *out, const char *what);
/* Any value, checked and discarded. */
int json_skip(JsonReader *j);
/* Nothing but white space left. */
int json_end(JsonReader *j);

/* The writer (util/json_write.c), behind every JSON bfsync prints: --json
 * of run, verify, compile --resources and campaign, and the runtime's
 * traces. The caller says what comes (open, key, value, close) and the
 * writer puts the commas and colons, escapes every string and writes
 * null for a number JSON cannot hold (NaN, an infinity), so no caller
 * prints a separator or a quote by hand. A spaced writer separates with
 * ", " and ": " (one line a document, as the goldens keep it), a compact
 * one with "," and ":" (traces). Misuse (a value where a key belongs,
 * nesting past JSON_MAX_DEPTH, closing what is not open) is a bug in
 * bfsync and aborts with a message. */
typedef struct JsonWriter {
  FILE *out;
  bool compact;
  bool key_done; /* a key was written: its value comes next */
  int depth;
  struct {
    char close; /* '}' or ']' */
    bool any;   /* an item was written */
    bool lines; /* an array with an element a line */
  } level[JSON_MAX_DEPTH];
} JsonWriter;

void jw_init(JsonWriter *w, FILE *out, bool compact);
void jw_object(JsonWriter *w);
void jw_array(JsonWriter *w);
/* An array that puts each element on a line of its own ("[\n" item
 * ",\n" item "\n]"): a trace's events. */
void jw_lines(JsonWriter *w);
/* Closes the innermost open object or array. */
void jw_close(JsonWriter *w);
void jw_key(JsonWriter *w, const char *key);
void jw_string(JsonWriter *w, const char *s);
void jw_int(JsonWriter *w, int64_t v);
void jw_uint(JsonWriter *w, uint64_t v);
void jw_bool(JsonWriter *w, bool v);
void jw_null(JsonWriter *w);
/* v with decimals digits after the point (%.*f), or null. */
void jw_fixed(JsonWriter *w, double v, int decimals);
/* v with digits significant digits (%.*g), or null. */
void jw_sig(JsonWriter *w, double v, int digits);
/* A value that is already JSON, n bytes, as it is (an id echoed, an
 * answer a child process wrote: the language server's). */
void jw_raw(JsonWriter *w, const char *json, size_t n);
/* key and value in one call. */
void jw_key_string(JsonWriter *w, const char *key, const char *s);
void jw_key_int(JsonWriter *w, const char *key, int64_t v);
void jw_key_bool(JsonWriter *w, const char *key, bool v);
/* s as a JSON string on out: quotes, backslashes and control characters
 * escaped, a byte that is not well-formed UTF-8 written as U+FFFD. The
 * one escaper. */
void json_write_string(FILE *out, const char *s);

#endif
