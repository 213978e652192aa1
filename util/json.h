/* json.h: a small, strict JSON reader for files bfsync reads back (its own
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

#endif
