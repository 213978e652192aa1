/* numbers.h: the one integer parser and the one number parser, and the
 * one greatest common divisor. Every
 * decimal bfsync reads (kernel literals, command-line numbers, target-file
 * values, .npy shapes, JSON numbers) is converted here, from text whose
 * syntax the caller has checked or checks through these: no leading
 * blanks or signs accepted where the caller does not expect them, no
 * overflow wrapping, no locale. Each caller words its own message. */
#ifndef NUMBERS_H
#define NUMBERS_H

#include <stddef.h>
#include <stdint.h>

/* The decimal digits text[0 .. len) (one or more, nothing else) as a value
 * of at most max into *out: 0, or -1 when they are not all digits or the
 * value is larger than max. */
int parse_digits(const char *text, size_t len, uint64_t max, uint64_t *out);
/* A decimal integer, "-" first when negative, within [min, max] (min <= 0
 * or not), the whole NUL-terminated text: 0, or -1. *out holds the value's
 * two's-complement bits (cast to int64_t when min < 0). */
int parse_integer(const char *text, int64_t min, uint64_t max, uint64_t *out);
/* The decimal number text[0 .. len) (digits, an optional fraction and
 * exponent, as C and JSON write them; the caller checks which forms it
 * allows) into *out: 0; -1 when it is not such a number; 1 when it is
 * too large for a double (*out is then an infinity; a value too small
 * for a double reads as the tiny or zero number it rounds to). */
int parse_real(const char *text, size_t len, double *out);

/* The greatest common divisor of a and b by Euclid (gcd(a, 0) = a), as
 * the alignment and cell-size arguments of the analyses use it. */
int64_t gcd_i64(int64_t a, int64_t b);

#endif
