/* stubs.c: TEMPORARY weak definitions so every part links while the others
 * are written in parallel. Real definitions override these. Deleted before
 * the first landing. */
#include <stdlib.h>
#include "frontend/program.h"
#include "driver/commands.h"
#define STUB __attribute__((weak))
STUB Program *program_new(const char *a, const char *b, size_t c, const Target *d, FILE *e) { (void)a; (void)b; (void)c; (void)d; (void)e; abort(); }
STUB Program *program_load(const char *a, const Target *b, FILE *c) { (void)a; (void)b; (void)c; abort(); }
STUB void program_free(Program *p) { (void)p; abort(); }
STUB void parse(Program *p) { (void)p; abort(); }
STUB void check(Program *p) { (void)p; abort(); }
STUB void fmt(const Program *p, FILE *o) { (void)p; (void)o; abort(); }
STUB void transform_barrier_free(Program *p) { (void)p; abort(); }
STUB void transform_barrier(Program *p) { (void)p; abort(); }
STUB void ir_print(const Program *p, FILE *o) { (void)p; (void)o; abort(); }
STUB void ir_explain(const Program *p, FILE *o) { (void)p; (void)o; abort(); }
STUB void ir_validate(Program *p) { (void)p; abort(); }
STUB const Target *target_default(void) { abort(); }
STUB int target_engine(const Target *t, const char *n) { (void)t; (void)n; abort(); }
STUB int target_can_run(const Target *t, int e, int o) { (void)t; (void)e; (void)o; abort(); }
STUB int expr_eval(const Expr *e, const int64_t *p, const int64_t *l, int64_t *o, const Expr **b) { (void)e; (void)p; (void)l; (void)o; (void)b; abort(); }
STUB int cmd_check(int c, char **v) { (void)c; (void)v; abort(); }
STUB int cmd_fmt(int c, char **v) { (void)c; (void)v; abort(); }
STUB int cmd_compile(int c, char **v) { (void)c; (void)v; abort(); }
STUB int cmd_verify(int c, char **v) { (void)c; (void)v; abort(); }
STUB int cmd_run(int c, char **v) { (void)c; (void)v; abort(); }
STUB int cmd_gen(int c, char **v) { (void)c; (void)v; abort(); }
STUB Arena *arena_new(void) { abort(); }
STUB void arena_free(Arena *a) { (void)a; abort(); }
STUB void *arena_alloc(Arena *a, size_t n) { (void)a; (void)n; abort(); }
STUB char *arena_strndup(Arena *a, const char *s, size_t n) { (void)a; (void)s; (void)n; abort(); }
STUB char *arena_printf(Arena *a, const char *f, ...) { (void)a; (void)f; abort(); }
STUB void bug(const char *f, ...) { (void)f; abort(); }
STUB void diag_error(Diag *d, Span s, const char *f, ...) { (void)d; (void)s; (void)f; abort(); }
STUB void diag_note(Diag *d, Span s, const char *f, ...) { (void)d; (void)s; (void)f; abort(); }
STUB void source_position(const Source *s, uint32_t o, int *l, int *c) { (void)s; (void)o; (void)l; (void)c; abort(); }
STUB Span span_join(Span a, Span b) { (void)a; (void)b; abort(); }
