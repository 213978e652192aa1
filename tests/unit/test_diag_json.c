/* test_diag_json.c: diagnostics as data, and the JSON writer.
 *
 * The writer's jw_raw beside its escapes (quotes, control bytes, malformed
 * UTF-8 as U+FFFD), which the language server relies on. The records of a Diag's sink: byte, display (tabs to
 * 8) and code-point columns, the finish at the last character of a
 * multi-byte span, an empty span, notes attached to their error, the cap
 * on records. Reading the command line's text back. gcc's JSON and SARIF
 * of a note. bug() caught by a BugTrap instead of aborting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/diag.h"
#include "util/diag_json.h"
#include "util/json.h"

typedef struct Out {
  char *text;
  size_t len;
  FILE *f;
} Out;

static FILE *out_open(Out *o) {
  o->text = NULL;
  o->f = open_memstream(&o->text, &o->len);
  assert_non_null(o->f);
  return o->f;
}

static char *out_close(Out *o) {
  fclose(o->f);
  return o->text;
}

static void writer_raw_and_escapes(void **state) {
  (void)state;
  Out o;
  JsonWriter w;
  jw_init(&w, out_open(&o), false);
  jw_object(&w);
  jw_key_string(&w, "s", "a\"b\\c\n\x01 \xc3\xa9 x\xc3(\xff");
  jw_key(&w, "raw");
  jw_raw(&w, "{\"x\": 1}", 8);
  jw_key(&w, "list");
  jw_array(&w);
  jw_raw(&w, "[]", 2);
  jw_raw(&w, "null", 4);
  jw_close(&w);
  jw_close(&w);
  char *text = out_close(&o);
  assert_string_equal(text, "{\"s\": \"a\\\"b\\\\c\\u000a\\u0001 \xc3\xa9 x\\ufffd(\\ufffd\", \"raw\": {\"x\": 1}, "
                            "\"list\": [[], null]}");
  free(text);
}

static Source source_of(const char *text) { return (Source){"k.bfk", text, strlen(text), NULL, 0}; }

static void records_columns(void **state) {
  (void)state;
  /* line 2: a tab, "é€ ", then "bogus" at byte 9 (0-based 8) */
  const char *text = "first\n\t\xc3\xa9\xe2\x82\xac bogus \xc3\xa9\n";
  Source src = source_of(text);
  DiagSink s = {0};
  uint32_t at = (uint32_t)(strstr(text, "bogus") - text);
  diag_sink_add(&s, "error", &src, src.path, (Span){at, at + 5}, "unknown op");
  const DiagRecord *r = &s.items[0];
  assert_int_equal(r->caret.line, 2);
  assert_int_equal(r->caret.byte_column, 8);    /* tab 1, é 2, € 3, space 1 */
  assert_int_equal(r->caret.display_column, 12); /* tab to 9, é, €, space */
  assert_int_equal(r->caret.cp_column, 5);
  assert_int_equal(r->finish.byte_column, 12);
  /* a span ending in a multi-byte character: finish at its first byte */
  uint32_t e = (uint32_t)(strrchr(text, '\xc3') - text);
  diag_sink_add(&s, "note", &src, src.path, (Span){at, e + 2}, "here");
  assert_int_equal(s.items[1].finish.byte_column, (int)(e - 6 + 1));
  assert_int_equal(s.items[1].parent, 0);
  /* an empty span at the end of the text */
  diag_sink_add(&s, "error", &src, src.path, (Span){(uint32_t)src.len, (uint32_t)src.len + 7}, "eof");
  assert_int_equal(s.items[2].caret.line, 3);
  assert_int_equal(s.items[2].finish.byte_column, s.items[2].caret.byte_column);
  assert_int_equal(s.items[2].parent, -1);
  diag_sink_free(&s);
}

static void records_capped_and_from_a_diag(void **state) {
  (void)state;
  Source src = source_of("kernel k() {}\n");
  DiagSink s = {.max = 3};
  Diag d = {.src = &src, .out = NULL, .sink = &s};
  for (int i = 0; i < 5; i++) diag_error(&d, (Span){0, 6}, "error %d", i);
  assert_int_equal(d.errors, 5);
  assert_int_equal(s.n, 3);
  assert_int_equal(s.dropped, 2);
  assert_string_equal(s.items[2].message, "error 2");
  Out o;
  diag_sink_write_json(&s, out_open(&o));
  char *text = out_close(&o);
  assert_non_null(strstr(text, "\"2 more diagnostics were not recorded\""));
  free(text);
  diag_sink_free(&s);
}

static void text_read_back(void **state) {
  (void)state;
  const char *text = "dir/k.bfk:3:5: error: unknown op 'x'\n"
                     "    x t;\n"
                     "    ^~~\n"
                     "dir/k.bfk:1:2: note: declared here\n"
                     "bfsync: error: cannot read 'q.bfk': No such file or directory\n"
                     "kernel k, line 4: store to Y[2, 0] is out of bounds\n"
                     "a:b: warning: not a position\n";
  DiagSink s = {0};
  diag_sink_add_text(&s, text, strlen(text), "k.bfk");
  assert_int_equal(s.n, 5);
  assert_string_equal(s.items[0].path, "dir/k.bfk");
  assert_int_equal(s.items[0].located, 1);
  assert_int_equal(s.items[0].caret.line, 3);
  assert_int_equal(s.items[0].caret.byte_column, 5);
  assert_int_equal(s.items[0].finish.byte_column, 7);
  assert_string_equal(s.items[1].kind, "note");
  assert_int_equal(s.items[1].parent, 0);
  assert_int_equal(s.items[2].located, 0);
  assert_string_equal(s.items[2].message, "cannot read 'q.bfk': No such file or directory");
  assert_int_equal(s.items[3].located, 1);
  assert_int_equal(s.items[3].caret.line, 4);
  assert_string_equal(s.items[3].path, "k.bfk");
  assert_int_equal(s.items[4].located, 0);
  assert_string_equal(s.items[4].message, "a:b: warning: not a position");
  diag_sink_free(&s);
}

static void sarif_of_a_note(void **state) {
  (void)state;
  Source src = source_of("kernel k(N: int, N: int) {}\n");
  DiagSink s = {0};
  diag_sink_add(&s, "error", &src, "a b.bfk", (Span){17, 18}, "duplicate name 'N'");
  diag_sink_add(&s, "note", &src, "a b.bfk", (Span){9, 10}, "first declared here");
  Out o;
  diag_sink_write_sarif(&s, "9.9", out_open(&o));
  char *text = out_close(&o);
  assert_non_null(strstr(text, "\"uri\": \"a%20b.bfk\""));
  assert_non_null(strstr(text, "\"startColumn\": 18"));
  assert_non_null(strstr(text, "\"endColumn\": 19"));
  assert_non_null(strstr(text, "\"relatedLocations\": [{"));
  assert_non_null(strstr(text, "\"text\": \"first declared here\""));
  free(text);
  diag_sink_write_json(&s, out_open(&o));
  text = out_close(&o);
  assert_non_null(strstr(text, "\"children\": [{"));
  assert_true(strstr(text, "\"kind\": \"note\"") > strstr(text, "\"children\"")); /* the note is a child */
  free(text);
  diag_sink_free(&s);
}

static void bug_is_trapped(void **state) {
  (void)state;
  BugTrap trap;
  volatile int reached = 0;
  if (setjmp(trap.jump) == 0) {
    bug_trap = &trap;
    bug("broken %d", 42);
    reached = 1;
  }
  assert_int_equal(reached, 0);
  assert_null(bug_trap); /* disarmed: a second bug() in the handler would abort */
  assert_string_equal(trap.message, "broken 42");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(writer_raw_and_escapes), cmocka_unit_test(records_columns),
      cmocka_unit_test(records_capped_and_from_a_diag), cmocka_unit_test(text_read_back),
      cmocka_unit_test(sarif_of_a_note),  cmocka_unit_test(bug_is_trapped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
