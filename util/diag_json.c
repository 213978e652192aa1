/* diag_json.c: diagnostics as data for tools, two ways (docs/diagnostics.md).
 *
 *   json   gcc's -fdiagnostics-format=json: an array of diagnostics, each
 *          with kind, message, locations (caret, start and finish, each a
 *          file, line, display-column, byte-column and column), children
 *          (its notes), column-origin 1 and escape-source false;
 *   sarif  SARIF 2.1.0, one run of the tool bfsync: a result per error or
 *          warning (level, message, a physical location whose region
 *          counts columns in code points), its notes as relatedLocations.
 *
 * Both read the records a Diag with a sink keeps (util/diag.c). The
 * messages bfsync prints without a Diag (a file it cannot read, a run-time
 * error, a target file's errors) reach the sink through
 * diag_sink_add_text, which reads the command line's own text back: a line
 * "PATH:LINE:COL: KIND: MESSAGE" with its source line and caret line, or
 * "bfsync: error: MESSAGE", or a run-time error "kernel NAME, line N:
 * MESSAGE" (at line N of the kernel's file). Everything is written with the one JSON writer
 * (util/json.h). */
#include "util/diag_json.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

/* ---- Reading the command line's text back. */

static bool parse_int(const char *s, size_t n, int *out) {
  if (n == 0 || n > 9) return false;
  int v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return v > 0;
}

/* "PATH:LINE:COL: KIND: MESSAGE" into r (message and path not copied:
 * their bounds in *msg, *path_len). */
static bool located_line(const char *line, size_t len, DiagRecord *r, const char **msg, size_t *path_len) {
  static const char *const kinds[] = {"error", "warning", "note"};
  for (int k = 0; k < 3; k++) {
    char mark[16];
    int m = snprintf(mark, sizeof mark, ": %s: ", kinds[k]);
    const char *at = NULL;
    for (const char *p = line; (p = memchr(p, ':', (size_t)(line + len - p))); p++)
      if ((size_t)(line + len - p) >= (size_t)m && !memcmp(p, mark, (size_t)m)) {
        at = p;
        break;
      }
    if (!at) continue;
    const char *c2 = at, *c1 = NULL, *c0 = NULL; /* PATH c0 LINE c1 COL c2 */
    for (const char *p = at - 1; p >= line && !c0; p--)
      if (*p == ':') {
        if (!c1) c1 = p;
        else c0 = p;
      }
    if (!c0 || c0 == line || !parse_int(c0 + 1, (size_t)(c1 - c0 - 1), &r->caret.line) ||
        !parse_int(c1 + 1, (size_t)(c2 - c1 - 1), &r->caret.byte_column))
      return false;
    r->caret.display_column = r->caret.cp_column = r->caret.byte_column;
    r->finish = r->caret;
    snprintf(r->kind, sizeof r->kind, "%s", kinds[k]);
    *path_len = (size_t)(c0 - line);
    *msg = at + m;
    return true;
  }
  return false;
}

/* A caret line "  ...^~~~" under the last located record: its finish. */
static void caret_line(DiagSink *s, const char *line, size_t len) {
  const char *caret = memchr(line, '^', len);
  if (!caret || s->n == 0 || !s->items[s->n - 1].located) return;
  int tildes = 0;
  for (const char *p = caret + 1; p < line + len && *p == '~'; p++) tildes++;
  DiagRecord *r = &s->items[s->n - 1];
  r->finish = r->caret;
  r->finish.byte_column += tildes;
  r->finish.display_column += tildes;
  r->finish.cp_column += tildes;
}

/* A run-time error of the reference or the runtime, "kernel NAME, line N:
 * MESSAGE": at line N of path. */
static bool runtime_line(DiagSink *s, const char *line, const char *path) {
  const char *comma = strstr(line, ", line ");
  int n = 0;
  if (!path || !*path || strncmp(line, "kernel ", 7) || !comma) return false;
  const char *digits = comma + 7, *colon = strchr(digits, ':');
  if (!colon || colon[1] != ' ' || !parse_int(digits, (size_t)(colon - digits), &n)) return false;
  int before = s->n;
  diag_sink_add(s, "error", NULL, path, (Span){0, 0}, line);
  if (s->n > before) {
    DiagRecord *r = &s->items[s->n - 1];
    r->located = 1;
    r->caret = (DiagPos){n, 1, 1, 1};
    r->finish = r->caret;
  }
  return true;
}

static void add_line(DiagSink *s, const char *line, size_t len, const char *path) {
  while (len && (line[len - 1] == '\r' || line[len - 1] == ' ')) len--;
  if (!len) return;
  if (len >= 2 && line[0] == ' ' && line[1] == ' ') {
    caret_line(s, line, len);
    return;
  }
  char *copy = malloc(len + 1);
  if (!copy) return;
  memcpy(copy, line, len);
  copy[len] = 0;
  DiagRecord r = {0};
  const char *msg;
  size_t path_len;
  if (located_line(copy, len, &r, &msg, &path_len)) {
    copy[path_len] = 0;
    int n = s->n;
    diag_sink_add(s, r.kind, NULL, copy, (Span){0, 0}, msg);
    if (s->n > n) {
      DiagRecord *added = &s->items[s->n - 1];
      added->located = 1;
      added->caret = r.caret;
      added->finish = r.finish;
      added->end = 1; /* the text shows at least the caret's character */
    }
  } else {
    const char *m = copy, *kind = "error";
    if (!strncmp(m, "bfsync: ", 8)) m += 8;
    if (!strncmp(m, "error: ", 7)) m += 7;
    else if (!strncmp(m, "warning: ", 9)) m += 9, kind = "warning";
    else if (!strncmp(m, "note: ", 6)) m += 6, kind = "note";
    if (!runtime_line(s, m, path)) diag_sink_add(s, kind, NULL, "", (Span){0, 0}, m);
  }
  free(copy);
}

void diag_sink_add_text(DiagSink *s, const char *text, size_t len, const char *path) {
  for (size_t at = 0; at < len;) {
    const char *nl = memchr(text + at, '\n', len - at);
    size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
    add_line(s, text + at, n, path);
    at += n + 1;
  }
}

/* ---- gcc's JSON. */

static void gcc_position(JsonWriter *w, const char *key, const DiagRecord *r, const DiagPos *p) {
  jw_key(w, key);
  jw_object(w);
  jw_key_string(w, "file", r->path);
  jw_key_int(w, "line", p->line);
  jw_key_int(w, "display-column", p->display_column);
  jw_key_int(w, "byte-column", p->byte_column);
  jw_key_int(w, "column", p->display_column);
  jw_close(w);
}

static void gcc_diagnostic(JsonWriter *w, const DiagSink *s, int i) {
  const DiagRecord *r = &s->items[i];
  jw_object(w);
  jw_key_string(w, "kind", r->kind);
  jw_key_string(w, "message", r->message);
  jw_key(w, "locations");
  jw_array(w);
  if (r->located) {
    jw_object(w);
    gcc_position(w, "caret", r, &r->caret);
    gcc_position(w, "start", r, &r->caret);
    gcc_position(w, "finish", r, &r->finish);
    jw_close(w);
  }
  jw_close(w);
  if (r->parent < 0) {
    jw_key(w, "children");
    jw_array(w);
    for (int c = i + 1; c < s->n && s->items[c].parent == i; c++) gcc_diagnostic(w, s, c);
    jw_close(w);
    jw_key_int(w, "column-origin", 1);
    jw_key(w, "escape-source");
    jw_bool(w, false);
  }
  jw_close(w);
}

void diag_sink_write_json(const DiagSink *s, FILE *out) {
  JsonWriter w;
  jw_init(&w, out, false);
  jw_array(&w);
  for (int i = 0; i < s->n; i++)
    if (s->items[i].parent < 0) gcc_diagnostic(&w, s, i);
  if (s->dropped) {
    DiagRecord more = {.kind = "note", .path = "", .parent = -1};
    char message[96];
    snprintf(message, sizeof message, "%d more diagnostics were not recorded", s->dropped);
    more.message = message;
    DiagSink one = {.items = &more, .n = 1};
    gcc_diagnostic(&w, &one, 0);
  }
  jw_close(&w);
  fputc('\n', out);
}

/* ---- SARIF 2.1.0. */

/* A path as a URI reference: unreserved characters and '/' kept, the rest
 * percent-encoded (a relative path stays relative). */
static void uri(JsonWriter *w, const char *path) {
  size_t n = strlen(path);
  char *buf = malloc(3 * n + 1), *o = buf;
  if (!buf) {
    jw_string(w, "");
    return;
  }
  for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("-._~/", *p))
      *o++ = (char)*p;
    else
      o += sprintf(o, "%%%02X", *p);
  }
  *o = 0;
  jw_string(w, buf);
  free(buf);
}

static void sarif_message(JsonWriter *w, const char *text) {
  jw_key(w, "message");
  jw_object(w);
  jw_key_string(w, "text", text);
  jw_close(w);
}

static void sarif_physical(JsonWriter *w, const DiagRecord *r) {
  jw_key(w, "physicalLocation");
  jw_object(w);
  jw_key(w, "artifactLocation");
  jw_object(w);
  jw_key(w, "uri");
  uri(w, r->path);
  jw_close(w);
  jw_key(w, "region");
  jw_object(w);
  jw_key_int(w, "startLine", r->caret.line);
  jw_key_int(w, "startColumn", r->caret.cp_column);
  jw_key_int(w, "endLine", r->finish.line);
  /* SARIF's end column is the one after the region */
  jw_key_int(w, "endColumn", r->finish.cp_column + (r->end > r->begin ? 1 : 0));
  jw_close(w);
  jw_close(w);
}

static void sarif_result(JsonWriter *w, const DiagSink *s, int i) {
  const DiagRecord *r = &s->items[i];
  jw_object(w);
  jw_key_string(w, "level", r->kind);
  sarif_message(w, r->message);
  jw_key(w, "locations");
  jw_array(w);
  if (r->located) {
    jw_object(w);
    sarif_physical(w, r);
    jw_close(w);
  }
  jw_close(w);
  jw_key(w, "relatedLocations");
  jw_array(w);
  int id = 0;
  for (int c = i + 1; c < s->n && s->items[c].parent == i; c++) {
    jw_object(w);
    jw_key_int(w, "id", id++);
    if (s->items[c].located) sarif_physical(w, &s->items[c]);
    sarif_message(w, s->items[c].message);
    jw_close(w);
  }
  jw_close(w);
  jw_close(w);
}

void diag_sink_write_sarif(const DiagSink *s, const char *version, FILE *out) {
  JsonWriter w;
  jw_init(&w, out, false);
  jw_object(&w);
  jw_key_string(&w, "$schema", "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json");
  jw_key_string(&w, "version", "2.1.0");
  jw_key(&w, "runs");
  jw_array(&w);
  jw_object(&w);
  jw_key(&w, "tool");
  jw_object(&w);
  jw_key(&w, "driver");
  jw_object(&w);
  jw_key_string(&w, "name", "bfsync");
  jw_key_string(&w, "version", version);
  jw_close(&w);
  jw_close(&w);
  jw_key_string(&w, "columnKind", "unicodeCodePoints");
  jw_key(&w, "results");
  jw_array(&w);
  for (int i = 0; i < s->n; i++)
    if (s->items[i].parent < 0) sarif_result(&w, s, i);
  jw_close(&w);
  jw_close(&w);
  jw_close(&w);
  jw_close(&w);
  fputc('\n', out);
}

const char *const diag_format_names[] = {"text", "json", "sarif", NULL};

void diag_sink_write(const DiagSink *s, DiagFormat format, const char *version, FILE *out) {
  if (format == DIAG_JSON) diag_sink_write_json(s, out);
  else if (format == DIAG_SARIF) diag_sink_write_sarif(s, version, out);
}
