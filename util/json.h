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
/* The writer, below the reader, is the one way bfsync prints JSON for a tool
 * to read: it escapes every string (control bytes as \u00XX, malformed
 * UTF-8 as U+FFFD, so the output is always valid JSON), prints a number
 * JSON cannot hold (NaN, an infinity) as null, and places the commas; an
 * indent of 0 prints one line, else that many spaces a level. */
#ifndef JSON_H
#define JSON_H

#include <stdbool.h>
#include <stddef.h>
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

/* ---- The writer. */
typedef struct JsonWriter {
  FILE *out;
  int indent; /* spaces a level; 0: all on one line */
  int depth;
  bool comma[JSON_MAX_DEPTH + 1]; /* a value was written at this depth */
  bool after_key;                 /* the next value follows "key": */
} JsonWriter;

void json_writer_init(JsonWriter *w, FILE *out, int indent);
/* { and }, [ and ]: nested at most JSON_MAX_DEPTH deep (deeper is a bug). */
void json_begin_object(JsonWriter *w);
void json_end_object(JsonWriter *w);
void json_begin_array(JsonWriter *w);
void json_end_array(JsonWriter *w);
/* A member's key; its value comes next. */
void json_key(JsonWriter *w, const char *key);
void json_write_string(JsonWriter *w, const char *s);
void json_write_string_n(JsonWriter *w, const char *s, size_t n);
void json_write_int(JsonWriter *w, long long v);
void json_write_number(JsonWriter *w, double v); /* null unless finite */
void json_write_bool(JsonWriter *w, bool v);
void json_write_null(JsonWriter *w);
/* A value that is already JSON (n bytes, checked by whoever made it). */
void json_write_raw(JsonWriter *w, const char *json, size_t n);
/* Shorthands for a member: key then value. */
void json_member_string(JsonWriter *w, const char *key, const char *s);
void json_member_int(JsonWriter *w, const char *key, long long v);

#endif
