/* utf8.h: the one UTF-8 decoder, for whatever prints or reads text a user
 * gave (diagnostics echo source lines, the lexer names a stray character,
 * the JSON reader checks strings and the writer escapes them, timelines
 * escape titles). Defined in
 * diag.c, which libbfrt links. */
#ifndef UTF8_H
#define UTF8_H

#include <stddef.h>

/* The length of the well-formed UTF-8 sequence of 2 to 4 bytes at s (at
 * most avail bytes, and a NUL byte ends it; no overlong form, surrogate or
 * code point past U+10FFFF), or 0. */
int utf8_length(const unsigned char *s, size_t avail);

#endif
