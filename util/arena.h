/* arena.h: one arena per compilation; everything the pipeline builds
 * (AST, IR, strings) lives until arena_free, so no pass frees anything. */
#ifndef ARENA_H
#define ARENA_H

#include <stddef.h>

typedef struct Arena Arena;

/* A new, empty arena. */
Arena *arena_new(void);
/* Free the arena and everything allocated from it. */
void arena_free(Arena *arena);
/* size zeroed bytes, aligned for any type. Aborts when memory runs out. */
void *arena_alloc(Arena *arena, size_t size);
/* A copy of the n bytes at s, NUL-terminated. */
char *arena_strndup(Arena *arena, const char *s, size_t n);
/* printf into the arena. */
char *arena_printf(Arena *arena, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A growable array: items (n of them, room for *cap) with room for at least
 * n + 1, copied into a twice-as-large block when full; *cap is updated. */
void *arena_grow(Arena *arena, void *items, size_t elem, int n, int *cap);

#define ARENA_NEW(arena, type) ((type *)arena_alloc((arena), sizeof(type)))
#define ARENA_ARRAY(arena, type, n) ((type *)arena_alloc((arena), sizeof(type) * (size_t)(n)))

#endif
