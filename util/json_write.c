/* json_write.c: the JSON writer of json.h. Each value first writes what
 * separates it from the one before (nothing after an opening bracket or a
 * key, a comma otherwise), so a document is well formed by construction,
 * whatever the order of the caller's calls; the only state is one level
 * per open bracket. */
#include "util/json.h"

#include "util/utf8.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

static void misuse(const char *what) {
  fprintf(stderr, "bfsync: internal error: JSON writer: %s\n", what);
  abort();
}

void jw_init(JsonWriter *w, FILE *out, bool compact) {
  w->out = out;
  w->compact = compact;
  w->key_done = false;
  w->depth = 0;
}

/* Before a value (or a key, in an object): its separator. */
static void separate(JsonWriter *w, bool is_key) {
  if (w->key_done) {
    if (is_key) misuse("a key where its value belongs");
    w->key_done = false;
    return;
  }
  if (w->depth == 0) return;
  bool in_object = w->level[w->depth - 1].close == '}';
  if (in_object != is_key) misuse(in_object ? "a value without a key" : "a key in an array");
  if (w->level[w->depth - 1].any) fputs(w->compact ? "," : ", ", w->out);
  if (w->level[w->depth - 1].lines) fputc('\n', w->out);
  w->level[w->depth - 1].any = true;
}

static void open_level(JsonWriter *w, char open, char close, bool lines) {
  separate(w, false);
  if (w->depth == JSON_MAX_DEPTH) misuse("nested too deep");
  fputc(open, w->out);
  w->level[w->depth].close = close;
  w->level[w->depth].any = false;
  w->level[w->depth].lines = lines;
  w->depth++;
}

void jw_object(JsonWriter *w) { open_level(w, '{', '}', false); }
void jw_array(JsonWriter *w) { open_level(w, '[', ']', false); }
void jw_lines(JsonWriter *w) { open_level(w, '[', ']', true); }

void jw_close(JsonWriter *w) {
  if (w->depth == 0 || w->key_done) misuse(w->depth ? "a key without its value" : "closing what is not open");
  w->depth--;
  if (w->level[w->depth].lines && w->level[w->depth].any) fputc('\n', w->out);
  fputc(w->level[w->depth].close, w->out);
}

void jw_key(JsonWriter *w, const char *key) {
  separate(w, true);
  json_write_string(w->out, key);
  fputs(w->compact ? ":" : ": ", w->out);
  w->key_done = true;
}

void json_write_string(FILE *out, const char *s) {
  fputc('"', out);
  for (const unsigned char *c = (const unsigned char *)s; *c;) {
    if (*c >= 0x80) {
      int n = utf8_length(c, 4);
      if (n) fwrite(c, 1, (size_t)n, out);
      else fputs("\\ufffd", out);
      c += n ? n : 1;
      continue;
    }
    if (*c == '"' || *c == '\\') fprintf(out, "\\%c", *c);
    else if (*c < 0x20) fprintf(out, "\\u%04x", *c);
    else fputc(*c, out);
    c++;
  }
  fputc('"', out);
}

void jw_string(JsonWriter *w, const char *s) {
  separate(w, false);
  json_write_string(w->out, s);
}

void jw_int(JsonWriter *w, int64_t v) {
  separate(w, false);
  fprintf(w->out, "%" PRId64, v);
}

void jw_uint(JsonWriter *w, uint64_t v) {
  separate(w, false);
  fprintf(w->out, "%" PRIu64, v);
}

void jw_bool(JsonWriter *w, bool v) {
  separate(w, false);
  fputs(v ? "true" : "false", w->out);
}

void jw_null(JsonWriter *w) {
  separate(w, false);
  fputs("null", w->out);
}

void jw_fixed(JsonWriter *w, double v, int decimals) {
  separate(w, false);
  if (isfinite(v)) fprintf(w->out, "%.*f", decimals, v);
  else fputs("null", w->out);
}

void jw_sig(JsonWriter *w, double v, int digits) {
  separate(w, false);
  if (isfinite(v)) fprintf(w->out, "%.*g", digits, v);
  else fputs("null", w->out);
}

void jw_raw(JsonWriter *w, const char *json, size_t n) {
  separate(w, false);
  fwrite(json, 1, n, w->out);
}

void jw_key_string(JsonWriter *w, const char *key, const char *s) {
  jw_key(w, key);
  jw_string(w, s);
}

void jw_key_int(JsonWriter *w, const char *key, int64_t v) {
  jw_key(w, key);
  jw_int(w, v);
}

void jw_key_bool(JsonWriter *w, const char *key, bool v) {
  jw_key(w, key);
  jw_bool(w, v);
}
