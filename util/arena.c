/* arena.c: the bump allocator behind every compilation.
 *
 * A compilation allocates many small nodes and frees them all at once, so
 * memory comes from large zeroed chunks and is never returned piecemeal.
 * Chunks grow geometrically (up to a cap) so a 5 MB kernel needs only a
 * few hundred of them; an allocation larger than a chunk gets its own. */
#include "util/arena.h"

#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/diag.h"

enum { FIRST_CHUNK = 64 << 10, LARGEST_CHUNK = 4 << 20 };

typedef struct Chunk {
  struct Chunk *prev;
  size_t used, size;
  max_align_t data[];
} Chunk;

struct Arena {
  Chunk *head;
  size_t next_size;
};

Arena *arena_new(void) {
  Arena *arena = calloc(1, sizeof *arena);
  if (!arena) bug("out of memory");
  arena->next_size = FIRST_CHUNK;
  return arena;
}

void arena_free(Arena *arena) {
  if (!arena) return;
  for (Chunk *c = arena->head, *prev; c; c = prev) {
    prev = c->prev;
    free(c);
  }
  free(arena);
}

static Chunk *new_chunk(Arena *arena, size_t at_least) {
  size_t size = arena->next_size > at_least ? arena->next_size : at_least;
  if (size > SIZE_MAX - sizeof(Chunk)) bug("arena allocation of %zu bytes", at_least);
  Chunk *c = calloc(1, sizeof(Chunk) + size);
  if (!c) bug("out of memory (%zu bytes)", size);
  c->size = size;
  c->prev = arena->head;
  arena->head = c;
  if (arena->next_size < LARGEST_CHUNK) arena->next_size *= 2;
  return c;
}

void *arena_alloc(Arena *arena, size_t size) {
  const size_t align = alignof(max_align_t);
  if (size > SIZE_MAX - align) bug("arena allocation of %zu bytes", size);
  size = (size + align - 1) / align * align;
  if (size == 0) size = align;
  Chunk *c = arena->head;
  if (!c || c->size - c->used < size) c = new_chunk(arena, size);
  void *p = (char *)c->data + c->used;
  c->used += size;
  return p;
}

char *arena_strndup(Arena *arena, const char *s, size_t n) {
  char *copy = arena_alloc(arena, n + 1);
  memcpy(copy, s, n);
  return copy;
}

char *arena_printf(Arena *arena, const char *fmt, ...) {
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) bug("arena_printf: bad format '%s'", fmt);
  char *s = arena_alloc(arena, (size_t)n + 1);
  vsnprintf(s, (size_t)n + 1, fmt, again);
  va_end(again);
  return s;
}

void *arena_grow(Arena *arena, void *items, size_t elem, int n, int *cap) {
  if (n < *cap) return items;
  int new_cap = *cap ? *cap * 2 : 4;
  if (new_cap < *cap) bug("arena_grow: too many items");
  void *bigger = arena_alloc(arena, elem * (size_t)new_cap);
  if (n) memcpy(bigger, items, elem * (size_t)n);
  *cap = new_cap;
  return bigger;
}
