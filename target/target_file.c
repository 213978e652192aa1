/* target_file.c: the target file reader (format: docs/targets.md).
 *
 * A target file is the machine a kernel runs on, as plain text a person
 * edits and cites sources in: the engines (name and kind) and, per engine
 * kind, the cost model the simulator charges. It is line-based, INI-like:
 *
 *   name = trn1                 # top level: name, clock_ghz, counter_bits
 *   clock_ghz = 1.4
 *   counter_bits = 32
 *   [engines]                   # NAME = KIND, in engine order
 *   pe = pe
 *   [kind pe]                   # costs of every engine of this kind
 *   overhead = 60
 *   [limits]                    # hardware limits sema enforces (optional)
 *   partitions = 128
 *
 * Each line is read on its own, so an error names its line and column and
 * the next line starts afresh: every mistake of a file is reported in one
 * run, through util's diagnostics (file:line:col: error: ...).
 * Every cycle count is at the target's one clock_ghz, the simulator's time
 * base; a figure published at another engine clock is converted in the
 * file, where its comment shows the arithmetic (targets/trn1.target). */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/diag.h"
#include "util/numbers.h"
#include "target/target.h"

enum { MAX_TARGET_BYTES = 1 << 20, MAX_INTEGER_DIGITS = 15 };

/* Every key has a range, so no value can make the simulator's arithmetic
 * overflow or a cost go negative: cycle counts up to 10^9 (0.7 s at
 * 1.4 GHz, far beyond any instruction), counts up to what a NeuronCore's
 * shape could plausibly be, throughputs 0 (unset: one per cycle) or from
 * 10^-3 to 10^6 per cycle. */
typedef struct KindKey {
  const char *name;
  int integer; /* else a real number */
  size_t offset; /* in bfrt_engine_cost */
  double max;    /* the largest value */
  double min;    /* the smallest value above 0 (0 itself is always allowed) */
} KindKey;

#define CYCLES 1e9, 0
#define COUNT(max) max, 0
#define RATE 1e6, 1e-3
#define COST(field) offsetof(bfrt_engine_cost, field)
static const KindKey kind_keys[] = {
    {"overhead", 1, COST(overhead), CYCLES},
    {"lanes", 1, COST(lanes), COUNT(65536)},
    {"elems_per_cycle.matmul", 0, COST(elems_per_cycle[BFRT_CLASS_MATMUL]), RATE},
    {"elems_per_cycle.elemwise", 0, COST(elems_per_cycle[BFRT_CLASS_ELEMWISE]), RATE},
    {"elems_per_cycle.transcendental", 0, COST(elems_per_cycle[BFRT_CLASS_TRANSCENDENTAL]), RATE},
    {"elems_per_cycle.reduce", 0, COST(elems_per_cycle[BFRT_CLASS_REDUCE]), RATE},
    {"two_input_factor", 0, COST(two_input_factor), 1e3, 1e-3},
    {"pe_rows", 1, COST(pe_rows), COUNT(65536)},
    {"pe_cols", 1, COST(pe_cols), COUNT(65536)},
    {"matmul_min_cols", 1, COST(matmul_min_cols), COUNT(1e6)},
    {"matmul_narrow_factor", 0, COST(matmul_narrow_factor), 1e3, 1e-3},
    {"dma_latency", 1, COST(dma_latency), CYCLES},
    {"dma_bytes_per_cycle", 0, COST(dma_bytes_per_cycle), RATE},
    {"dma_outstanding", 1, COST(dma_outstanding), COUNT(1024)},
    {"dma_split", 1, COST(dma_split), COUNT(BFRT_MAX_DMA_SPLIT)},
    {"dma_row_bytes", 1, COST(dma_row_bytes), COUNT(1e6)},
    {"sem_latency", 1, COST(sem_latency), CYCLES},
    {"wait_cost", 1, COST(wait_cost), CYCLES},
    {"bookkeep_cost", 1, COST(bookkeep_cost), CYCLES},
    {"barrier_cost", 1, COST(barrier_cost), CYCLES},
    {"device_read", 1, COST(device_read_cost), CYCLES},
};
#define NKIND_KEYS (sizeof kind_keys / sizeof kind_keys[0])
#undef COST
#undef RATE
#undef COUNT
#undef CYCLES

/* SECTION_SKIP: after a malformed header, whose entries would only cascade. */
enum { SECTION_TOP, SECTION_ENGINES, SECTION_KIND, SECTION_LIMITS, SECTION_SKIP };

/* [limits]: integers, and psum_engines, a comma-separated list of kinds. */
#define LIMIT(field) offsetof(TargetLimits, field)
static const struct {
  const char *name;
  size_t offset;
  const char *on, *off; /* a flag (0 or 1): what 1 and 0 mean; NULL: a count */
} limit_keys[] = {
    {"partitions", LIMIT(partitions), NULL, NULL},
    {"sbuf_bytes_per_partition", LIMIT(sbuf_bytes_per_partition), NULL, NULL},
    {"psum_bytes_per_partition", LIMIT(psum_bytes_per_partition), NULL, NULL},
    {"psum_banks", LIMIT(psum_banks), NULL, NULL},
    {"matmul_psum_f32", LIMIT(matmul_psum_f32), "matmul writes an f32 psum tile", "any tile"},
    {"matmul_sbuf_inputs", LIMIT(matmul_sbuf_inputs), "matmul reads sbuf tiles", "any tile"},
};
#undef LIMIT
#define NLIMIT_KEYS (sizeof limit_keys / sizeof limit_keys[0])
enum { TOP_NAME, TOP_CLOCK, TOP_COUNTER_BITS, NTOP_KEYS };

/* The resource keys of a [kind] section, beside its costs: limits the
 * transform must fit (Target.semaphores, Target.registers). */
enum { RES_SEMAPHORES, RES_REGISTERS, NRES_KEYS };
static const char *const resource_keys[NRES_KEYS] = {"semaphores", "registers"};

/* Where each setting came from (0 = not set; else 1 + the key's offset),
 * for duplicate reports and required keys. */
typedef struct Reader {
  Diag diag;
  Arena *arena;
  Target *out;
  const char *text;
  uint32_t len, pos; /* pos: start of the line being read */
  int section, kind;
  uint32_t top_set[NTOP_KEYS];
  uint32_t kind_section[BFRT_NKINDS];
  uint32_t kind_set[BFRT_NKINDS][NKIND_KEYS];
  uint32_t resource_set[BFRT_NKINDS][NRES_KEYS];
  uint32_t engine_at[BFRT_MAX_ENGINES];
  uint32_t engines_section;
  uint32_t limits_section;
  uint32_t limit_set[NLIMIT_KEYS + 1]; /* the last: psum_engines */
} Reader;

/* ---- Lexical pieces of a line. */

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
static int is_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}
static int is_identifier(const char *s, size_t n) {
  if (!n || (s[0] >= '0' && s[0] <= '9') || memchr(s, '.', n)) return 0;
  for (size_t i = 0; i < n; i++)
    if (!is_word(s[i])) return 0;
  return 1;
}

static uint32_t line_end(const Reader *r, uint32_t at) {
  const char *nl = memchr(r->text + at, '\n', r->len - at);
  return nl ? (uint32_t)(nl - r->text) : r->len;
}

static uint32_t skip_blanks(const Reader *r, uint32_t at, uint32_t end) {
  while (at < end && is_blank(r->text[at])) at++;
  return at;
}

/* A run of non-blank characters up to a comment: the value of an entry. */
static Span token(const Reader *r, uint32_t at, uint32_t end) {
  uint32_t stop = at;
  while (stop < end && !is_blank(r->text[stop]) && r->text[stop] != '#') stop++;
  return (Span){at, stop};
}

static int span_is(const Reader *r, Span s, const char *word) {
  size_t n = strlen(word);
  return s.end - s.begin == n && !memcmp(r->text + s.begin, word, n);
}

static char *span_text(Reader *r, Span s) { return arena_strndup(r->arena, r->text + s.begin, s.end - s.begin); }

/* Whether nothing but blanks and a comment follow at. */
static int rest_is_empty(const Reader *r, uint32_t at, uint32_t end) {
  at = skip_blanks(r, at, end);
  return at == end || r->text[at] == '#';
}

/* ---- Values. */

/* value: digit { digit } (at most MAX_INTEGER_DIGITS of them) */
static int read_integer(Reader *r, Span s, int64_t *out) {
  uint32_t n = s.end - s.begin;
  int ok = n > 0 && n <= MAX_INTEGER_DIGITS;
  for (uint32_t i = 0; ok && i < n; i++) ok = r->text[s.begin + i] >= '0' && r->text[s.begin + i] <= '9';
  if (!ok) {
    diag_error(&r->diag, s, "expected a non-negative integer of at most %d digits", MAX_INTEGER_DIGITS);
    return -1;
  }
  uint64_t v;
  if (parse_digits(r->text + s.begin, n, INT64_MAX, &v)) bug("target reader: %u digits do not fit", n);
  *out = (int64_t)v;
  return 0;
}

/* value: digits [ "." digits ] [ ("e" | "E") [ "+" | "-" ] digits ], finite and >= 0.
 * A value too small for a double (1e-320) reads as the tiny number it is,
 * so the key's range check names the limit it misses. */
static int read_real(Reader *r, Span s, double *out) {
  const char *text = r->text + s.begin;
  int ok = s.end > s.begin && ((text[0] >= '0' && text[0] <= '9') || text[0] == '.');
  double v = 0;
  int read = ok ? parse_real(text, s.end - s.begin, &v) : -1;
  if (read < 0) {
    diag_error(&r->diag, s, "expected a non-negative decimal number");
    return -1;
  }
  if (read > 0) {
    diag_error(&r->diag, s, "number too large (at most about 1.8e308)");
    return -1;
  }
  *out = v;
  return 0;
}

/* Whether v (read from s) is 0 or within [min, max]; reports the range. */
static int in_range(Reader *r, Span s, Span key, double v, double min, double max) {
  if (v == 0 || (v >= min && v <= max)) return 1;
  if (min > 0)
    diag_error(&r->diag, s, "%.*s must be 0 or from %.15g to %.15g", (int)(key.end - key.begin), r->text + key.begin,
               min, max);
  else
    diag_error(&r->diag, s, "%.*s must be at most %.15g", (int)(key.end - key.begin), r->text + key.begin, max);
  return 0;
}

/* ---- Settings. */

static int first_setting(Reader *r, uint32_t *seen, Span key) {
  if (*seen) {
    diag_error(&r->diag, key, "duplicate entry '%.*s'", (int)(key.end - key.begin),
               r->text + key.begin);
    diag_note(&r->diag, (Span){*seen - 1, *seen - 1}, "first set here");
    return 0;
  }
  *seen = key.begin + 1;
  return 1;
}

static void set_top(Reader *r, Span key, Span value) {
  if (span_is(r, key, "name")) {
    if (!first_setting(r, &r->top_set[TOP_NAME], key)) return;
    if (!is_identifier(r->text + value.begin, value.end - value.begin))
      diag_error(&r->diag, value, "a target name is an identifier (letters, digits, '_')");
    else
      r->out->name = span_text(r, value);
  } else if (span_is(r, key, "clock_ghz")) {
    if (!first_setting(r, &r->top_set[TOP_CLOCK], key)) return;
    double ghz;
    if (read_real(r, value, &ghz)) return;
    if (ghz < 1e-3 || ghz > 1e3) diag_error(&r->diag, value, "clock_ghz must be from 0.001 to 1000");
    else r->out->costs.clock_ghz = ghz;
  } else if (span_is(r, key, "counter_bits")) {
    if (!first_setting(r, &r->top_set[TOP_COUNTER_BITS], key)) return;
    int64_t bits = 0;
    if (!read_integer(r, value, &bits) && (bits < 2 || bits > 64))
      diag_error(&r->diag, value, "counter_bits must be 2 to 64");
    else
      r->out->counter_bits = (int)bits;
  } else {
    diag_error(&r->diag, key, "unknown key '%.*s' at the top level (name, clock_ghz, counter_bits; costs go in a [kind ...] section)",
               (int)(key.end - key.begin), r->text + key.begin);
  }
}

static int kind_named(const Reader *r, Span s) {
  for (int k = 0; k < BFRT_NKINDS; k++)
    if (span_is(r, s, rt_kind_names[k])) return k;
  return -1;
}

/* The reserved words of the kernel language, the lexer's own list: a kernel
 * could never write them before ':', so no engine may be called so. */
static const char *const language_keywords[] = {
#define KEYWORD(spelling, token) spelling,
#include "util/keywords.def"
#undef KEYWORD
};

static int is_keyword(const Reader *r, Span s) {
  for (size_t i = 0; i < sizeof language_keywords / sizeof language_keywords[0]; i++)
    if (span_is(r, s, language_keywords[i])) return 1;
  return 0;
}

/* entry in [engines]: NAME "=" KIND */
static void add_engine(Reader *r, Span key, Span value) {
  Target *t = r->out;
  if (!is_identifier(r->text + key.begin, key.end - key.begin)) {
    diag_error(&r->diag, key, "an engine name is an identifier (letters, digits, '_')");
    return;
  }
  if (is_keyword(r, key)) {
    diag_error(&r->diag, key, "'%.*s' is a reserved word of the kernel language, which no kernel can use as an engine",
               (int)(key.end - key.begin), r->text + key.begin);
    return;
  }
  for (int e = 0; e < t->nengines; e++)
    if (span_is(r, key, t->engines[e].name)) {
      diag_error(&r->diag, key, "duplicate engine '%s'", t->engines[e].name);
      diag_note(&r->diag, (Span){r->engine_at[e], r->engine_at[e]}, "first declared here");
      return;
    }
  int kind = kind_named(r, value);
  if (kind < 0) {
    diag_error(&r->diag, value, "unknown engine kind '%.*s' (pe, act, dve, pool, dma)",
               (int)(value.end - value.begin), r->text + value.begin);
    return;
  }
  if (t->nengines == BFRT_MAX_ENGINES) {
    diag_error(&r->diag, key, "too many engines (at most %d)", BFRT_MAX_ENGINES);
    return;
  }
  r->engine_at[t->nengines] = key.begin;
  t->engines[t->nengines++] = (Engine){span_text(r, key), kind};
}

/* entry in [kind K]: one of kind_keys */
static void set_cost(Reader *r, Span key, Span value) {
  bfrt_engine_cost *c = &r->out->costs.kind[r->kind];
  int64_t *limits[NRES_KEYS] = {&r->out->semaphores[r->kind], &r->out->registers[r->kind]};
  for (int i = 0; i < NRES_KEYS; i++) {
    if (!span_is(r, key, resource_keys[i])) continue;
    if (!first_setting(r, &r->resource_set[r->kind][i], key)) return;
    if (!read_integer(r, value, limits[i]) && *limits[i] < 1)
      diag_error(&r->diag, value, "%s must be at least 1", resource_keys[i]);
    return;
  }
  for (size_t i = 0; i < NKIND_KEYS; i++) {
    if (!span_is(r, key, kind_keys[i].name)) continue;
    if (!first_setting(r, &r->kind_set[r->kind][i], key)) return;
    const KindKey *k = &kind_keys[i];
    char *field = (char *)c + k->offset;
    if (k->integer) {
      int64_t v;
      if (!read_integer(r, value, &v) && in_range(r, value, key, (double)v, k->min, k->max))
        *(int64_t *)(void *)field = v;
    } else {
      double v;
      if (!read_real(r, value, &v) && in_range(r, value, key, v, k->min, k->max)) *(double *)(void *)field = v;
    }
    return;
  }
  diag_error(&r->diag, key, "unknown key '%.*s' in a [kind] section (see docs/targets.md)",
             (int)(key.end - key.begin), r->text + key.begin);
}

/* psum_engines = KIND{,KIND} */
static void set_psum_engines(Reader *r, Span value) {
  unsigned kinds = 0;
  for (uint32_t at = value.begin; at <= value.end;) {
    uint32_t stop = at;
    while (stop < value.end && r->text[stop] != ',') stop++;
    int kind = kind_named(r, (Span){at, stop});
    if (kind < 0) {
      diag_error(&r->diag, (Span){at, stop > at ? stop : at + 1},
                 "expected an engine kind (pe, act, dve, pool, dma) in the list");
      return;
    }
    kinds |= 1u << kind;
    at = stop + 1;
  }
  r->out->limits.psum_kinds = kinds;
}

/* entry in [limits] */
static void set_limit(Reader *r, Span key, Span value) {
  if (span_is(r, key, "psum_engines")) {
    if (first_setting(r, &r->limit_set[NLIMIT_KEYS], key)) set_psum_engines(r, value);
    return;
  }
  for (size_t i = 0; i < NLIMIT_KEYS; i++) {
    if (!span_is(r, key, limit_keys[i].name)) continue;
    if (first_setting(r, &r->limit_set[i], key))
      read_integer(r, value, (int64_t *)(void *)((char *)&r->out->limits + limit_keys[i].offset));
    return;
  }
  char known[256] = "";
  size_t n = 0;
  for (size_t i = 0; i < NLIMIT_KEYS && n < sizeof known; i++)
    n += (size_t)snprintf(known + n, sizeof known - n, "%s, ", limit_keys[i].name);
  diag_error(&r->diag, key, "unknown key '%.*s' in [limits] (%spsum_engines)", (int)(key.end - key.begin),
             r->text + key.begin, known);
}

/* ---- Lines. */

/* section: "[" ( "engines" | "kind" KIND ) "]" */
static void read_section(Reader *r, uint32_t at, uint32_t end) {
  uint32_t open = at;
  const char *close = memchr(r->text + at, ']', end - at);
  r->section = SECTION_SKIP;
  if (!close) {
    diag_error(&r->diag, (Span){open, end}, "a section header ends with ']'");
    return;
  }
  uint32_t stop = (uint32_t)(close - r->text);
  if (!rest_is_empty(r, stop + 1, end))
    diag_error(&r->diag, (Span){stop + 1, end}, "unexpected text after the section header");
  uint32_t w = skip_blanks(r, at + 1, stop);
  Span first = {w, w};
  while (first.end < stop && is_word(r->text[first.end])) first.end++;
  uint32_t k = skip_blanks(r, first.end, stop);
  Span second = {k, k};
  while (second.end < stop && is_word(r->text[second.end])) second.end++;
  int tail_empty = skip_blanks(r, second.end, stop) == stop;
  if (span_is(r, first, "engines") && second.begin == second.end && tail_empty) {
    if (r->engines_section) {
      diag_error(&r->diag, (Span){open, stop + 1}, "duplicate section [engines]");
      diag_note(&r->diag, (Span){r->engines_section - 1, r->engines_section - 1}, "first here");
    }
    r->engines_section = open + 1;
    r->section = SECTION_ENGINES;
  } else if (span_is(r, first, "limits") && second.begin == second.end && tail_empty) {
    if (r->limits_section) {
      diag_error(&r->diag, (Span){open, stop + 1}, "duplicate section [limits]");
      diag_note(&r->diag, (Span){r->limits_section - 1, r->limits_section - 1}, "first here");
    }
    r->limits_section = open + 1;
    r->section = SECTION_LIMITS;
  } else if (span_is(r, first, "kind") && tail_empty && kind_named(r, second) >= 0) {
    int kind = kind_named(r, second);
    if (r->kind_section[kind]) {
      diag_error(&r->diag, (Span){open, stop + 1}, "duplicate section [kind %s]", rt_kind_names[kind]);
      diag_note(&r->diag, (Span){r->kind_section[kind] - 1, r->kind_section[kind] - 1}, "first here");
    }
    r->kind_section[kind] = open + 1;
    r->section = SECTION_KIND;
    r->kind = kind;
  } else {
    diag_error(&r->diag, (Span){open, stop + 1},
               "unknown section (expected [engines], [limits] or [kind K], K one of pe, act, dve, pool, dma)");
  }
}

/* entry: KEY "=" VALUE */
static void read_entry(Reader *r, uint32_t at, uint32_t end) {
  Span key = {at, at};
  while (key.end < end && is_word(r->text[key.end])) key.end++;
  uint32_t eq = skip_blanks(r, key.end, end);
  if (key.begin == key.end || eq == end || r->text[eq] != '=') {
    uint32_t where = key.begin == key.end ? at : eq;
    diag_error(&r->diag, (Span){where, where + 1}, key.begin == key.end ? "expected a key" : "expected '=' after the key");
    return;
  }
  uint32_t v = skip_blanks(r, eq + 1, end);
  Span value = token(r, v, end);
  if (value.begin == value.end) {
    diag_error(&r->diag, (Span){v, v + 1}, "expected a value after '='");
    return;
  }
  if (!rest_is_empty(r, value.end, end)) {
    uint32_t extra = skip_blanks(r, value.end, end);
    diag_error(&r->diag, (Span){extra, end}, "unexpected text after the value");
    return;
  }
  if (r->section == SECTION_SKIP) return;
  if (r->section == SECTION_TOP) set_top(r, key, value);
  else if (r->section == SECTION_ENGINES) add_engine(r, key, value);
  else if (r->section == SECTION_LIMITS) set_limit(r, key, value);
  else set_cost(r, key, value);
}

/* line: [ section | entry ] [ "#" comment ] */
static void read_line(Reader *r, uint32_t end) {
  uint32_t at = skip_blanks(r, r->pos, end);
  if (at == end || r->text[at] == '#') return;
  if (r->text[at] == '[')
    read_section(r, at, end);
  else
    read_entry(r, at, end);
}

/* ---- The whole file. */

static void check_complete(Reader *r) {
  const TargetLimits *l = &r->out->limits;
  if (l->psum_banks && l->psum_bytes_per_partition % l->psum_banks)
    diag_error(&r->diag, (Span){r->limit_set[3] - 1, r->limit_set[3] - 1},
               "psum_banks must divide psum_bytes_per_partition (%lld bytes in %lld banks)",
               (long long)l->psum_bytes_per_partition, (long long)l->psum_banks);
  for (size_t i = 0; i < NLIMIT_KEYS; i++) {
    int64_t value = *(const int64_t *)(const void *)((const char *)l + limit_keys[i].offset);
    if (limit_keys[i].on && value != 0 && value != 1)
      diag_error(&r->diag, (Span){r->limit_set[i] - 1, r->limit_set[i] - 1}, "%s is 1 (%s) or 0 (%s), not %lld",
                 limit_keys[i].name, limit_keys[i].on, limit_keys[i].off, (long long)value);
  }
  Span eof = {r->len, r->len};
  if (!r->top_set[TOP_NAME]) diag_error(&r->diag, eof, "missing 'name = ...' at the top of the file");
  if (!r->top_set[TOP_CLOCK]) diag_error(&r->diag, eof, "missing 'clock_ghz = ...' at the top of the file");
  if (!r->out->nengines) diag_error(&r->diag, eof, "missing engines: the file needs an [engines] section with at least one engine");
  for (int e = 0; e < r->out->nengines; e++) {
    int kind = r->out->engines[e].kind;
    if (!r->kind_section[kind])
      diag_error(&r->diag, (Span){r->engine_at[e], r->engine_at[e]},
                 "engine '%s' is a %s engine, but the file has no [kind %s] section", r->out->engines[e].name,
                 rt_kind_names[kind], rt_kind_names[kind]);
  }
}

int target_parse(const char *path, const char *text, size_t len, Arena *arena, Target *out, FILE *err) {
  Source src = {path, text, len, NULL, 0};
  Reader *r = ARENA_NEW(arena, Reader);
  r->diag = (Diag){.src = &src, .out = err};
  r->arena = arena;
  r->out = out;
  r->text = text;
  r->len = (uint32_t)len;
  memset(out, 0, sizeof *out);
  if (len > MAX_TARGET_BYTES) {
    diag_error(&r->diag, (Span){0, 0}, "a target file is at most %d bytes", MAX_TARGET_BYTES);
    return -1;
  }
  while (r->pos < r->len) {
    uint32_t end = line_end(r, r->pos);
    read_line(r, end);
    r->pos = end + 1;
  }
  check_complete(r);
  if (!out->counter_bits) out->counter_bits = 64;
  return r->diag.errors ? -1 : 0;
}

int target_load(const char *path, Arena *arena, Target *out, FILE *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    error_print(err, "cannot open target file %s: %s\n", path, strerror(errno));
    return -1;
  }
  char *text = arena_alloc(arena, MAX_TARGET_BYTES + 2);
  size_t len = fread(text, 1, MAX_TARGET_BYTES + 1, f);
  int bad = ferror(f) ? errno : 0;
  fclose(f);
  if (bad) {
    error_print(err, "cannot read target file %s: %s\n", path, strerror(bad));
    return -1;
  }
  return target_parse(path, text, len, arena, out, err);
}
