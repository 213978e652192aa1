/* npy.c: numpy's .npy files, the way tensors go in and out of `bfsync run`.
 *
 * Only what a kernel's tensors can be: 2-D, little-endian, C order, in the
 * dtype of the tensor's element type: f32 '<f4', i32 '<i4', fp16 '<f2', bf16
 * '<u2' and fp8e4 and fp8e5 '|u1' (numpy has no dtype for these three, so
 * the file holds their bit patterns, which ml_dtypes' bfloat16,
 * float8_e4m3fn and float8_e5m2 views read back); a tensor of a narrow
 * float type also takes '<f4', rounded to nearest even as a store to it
 * would be (bfrt_round). The format is a magic string, a version, a little-endian header
 * length (2 bytes in version 1.0, 4 in 2.0), an ASCII Python dict literal
 * padded to a multiple of 64 bytes, then the raw data. The dict is parsed
 * strictly enough that anything numpy would not have written is rejected
 * with a message saying what is wrong, and a short file is never read past
 * its end, and a header is checked against the tensor it fills before any
 * data is read. Files are written as version 1.0, which every numpy reads,
 * atomically (util/files.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "util/files.h"
#include "util/numbers.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_MAX_HEADER (1 << 20)

typedef struct Header {
  char descr[16];
  int fortran;  /* -1 until seen */
  int rank;     /* -1 until seen */
  int64_t shape[MAX_RANK]; /* the first MAX_RANK dimensions */
} Header;

typedef struct Cursor {
  const char *s, *end;
} Cursor;

static void skip_space(Cursor *c) {
  while (c->s < c->end && isspace((unsigned char)*c->s)) c->s++;
}

static bool accept(Cursor *c, char ch) {
  skip_space(c);
  if (c->s < c->end && *c->s == ch) {
    c->s++;
    return true;
  }
  return false;
}

/* string = "'" chars "'" | '"' chars '"' */
static bool parse_string(Cursor *c, char *out, size_t size) {
  skip_space(c);
  if (c->s >= c->end || (*c->s != '\'' && *c->s != '"')) return false;
  char quote = *c->s++;
  size_t n = 0;
  while (c->s < c->end && *c->s != quote) {
    if (n + 1 >= size || !*c->s) return false; /* (a NUL would cut the string short) */
    out[n++] = *c->s++;
  }
  out[n] = 0;
  return accept(c, quote);
}

static bool parse_word(Cursor *c, const char *word) {
  skip_space(c);
  size_t n = strlen(word);
  if ((size_t)(c->end - c->s) < n || strncmp(c->s, word, n)) return false;
  c->s += n;
  return true;
}

/* shape = "(" [ int { "," int } [ "," ] ] ")" */
static bool parse_shape(Cursor *c, Header *h) {
  if (!accept(c, '(')) return false;
  h->rank = 0;
  while (!accept(c, ')')) {
    skip_space(c);
    if (c->s >= c->end || !isdigit((unsigned char)*c->s)) return false;
    const char *digits = c->s;
    while (c->s < c->end && isdigit((unsigned char)*c->s)) c->s++;
    uint64_t v;
    if (parse_digits(digits, (size_t)(c->s - digits), INT64_MAX, &v)) return false;
    if (h->rank < MAX_RANK) h->shape[h->rank] = (int64_t)v;
    h->rank++;
    if (!accept(c, ',') && !(skip_space(c), c->s < c->end && *c->s == ')')) return false;
  }
  return true;
}

/* dict = "{" { key ":" value "," } "}" with keys descr, fortran_order, shape,
 * each once */
static bool parse_dict(Cursor *c, Header *h) {
  static const char *const keys[] = {"descr", "fortran_order", "shape"};
  bool seen[3] = {false, false, false};
  if (!accept(c, '{')) return false;
  while (!accept(c, '}')) {
    char key[32];
    if (!parse_string(c, key, sizeof key) || !accept(c, ':')) return false;
    int k = 0;
    while (k < 3 && strcmp(key, keys[k])) k++;
    if (k == 3 || seen[k]) return false;
    seen[k] = true;
    bool ok;
    if (k == 0)
      ok = parse_string(c, h->descr, sizeof h->descr);
    else if (k == 1)
      ok = (parse_word(c, "False") && (h->fortran = 0, true)) ||
           (parse_word(c, "True") && (h->fortran = 1, true));
    else
      ok = parse_shape(c, h);
    if (!ok) return false;
    if (!accept(c, ',') && !(skip_space(c), c->s < c->end && *c->s == '}')) return false;
  }
  return seen[0] && seen[1] && seen[2];
}

static uint32_t little_endian(const unsigned char *b, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | b[i];
  return v;
}

/* The bytes of an element of a dtype bfsync reads, or 0. */
static int dtype_bytes(const char *descr) {
  if (!strcmp(descr, "<f4") || !strcmp(descr, "<i4")) return 4;
  if (!strcmp(descr, "<u2") || !strcmp(descr, "<f2")) return 2;
  if (!strcmp(descr, "|u1") || !strcmp(descr, "<u1")) return 1;
  return 0;
}

/* The dtype a tensor of type is written in, and the one it reads besides '<f4'. */
static const char *native_dtype(ElemType type) {
  static const char *const names[ELEM_NTYPES] = {"<f4", "<i4", "<u2", "|u1", "|u1", "<f2"};
  return names[type];
}

/* Whether a tensor of type reads a file of dtype descr. */
bool npy_dtype_reads(ElemType type, const char *descr) {
  if (!strcmp(descr, native_dtype(type))) return true;
  if ((type == ELEM_FP8E4 || type == ELEM_FP8E5) && !strcmp(descr, "<u1")) return true;
  return bfrt_dtype_narrow((int)type) && !strcmp(descr, "<f4");
}

/* ---- Bit patterns of the narrow formats: S E..E M..M, exponent bias
 * 2^(E-1) - 1, E = 0 subnormal (M * 2^(1 - bias - fraction bits)). In an
 * IEEE-like format (fp8e5, fp16) the largest exponent holds Inf (M = 0)
 * and NaN; fp8e4 (OCP E4M3) has no Inf and one NaN, S 1111 111. */
typedef struct Format {
  int exponent_bits, fraction_bits;
  bool ieee;
} Format;

static const Format *format_of(ElemType type) {
  static const Format fp8e4 = {4, 3, false}, fp8e5 = {5, 2, true}, fp16 = {5, 10, true};
  return type == ELEM_FP8E4 ? &fp8e4 : type == ELEM_FP8E5 ? &fp8e5 : &fp16;
}

static float pattern_value(unsigned bits, const Format *f) {
  unsigned top = (1u << f->exponent_bits) - 1, fraction_mask = (1u << f->fraction_bits) - 1;
  unsigned e = bits >> f->fraction_bits & top, m = bits & fraction_mask;
  int bias = (int)(top >> 1);
  float magnitude;
  if (f->ieee && e == top) magnitude = m ? NAN : INFINITY;
  else if (!f->ieee && e == top && m == fraction_mask) magnitude = NAN;
  else if (e == 0) magnitude = ldexpf((float)m, 1 - bias - f->fraction_bits);
  else magnitude = ldexpf((float)(fraction_mask + 1 + m), (int)e - bias - f->fraction_bits);
  return bits >> (f->exponent_bits + f->fraction_bits) & 1 ? -magnitude : magnitude;
}

/* The pattern of x, a value the format holds (or a NaN, or Inf in an
 * IEEE-like format). */
static unsigned pattern_bits(float x, const Format *f) {
  unsigned top = (1u << f->exponent_bits) - 1;
  int bias = (int)(top >> 1);
  unsigned sign = signbit(x) ? 1u << (f->exponent_bits + f->fraction_bits) : 0;
  float magnitude = fabsf(x);
  if (isnan(x)) return sign | top << f->fraction_bits | (f->ieee ? 1u << (f->fraction_bits - 1) : (1u << f->fraction_bits) - 1);
  if (isinf(x)) return sign | top << f->fraction_bits;
  if (magnitude < ldexpf(1.0f, 1 - bias)) return sign | (unsigned)ldexpf(magnitude, bias - 1 + f->fraction_bits);
  int exponent;
  float fraction = frexpf(magnitude, &exponent); /* [0.5, 1): the pattern's exponent is exponent - 1 + bias */
  unsigned m = (unsigned)ldexpf(fraction, f->fraction_bits + 1) & ((1u << f->fraction_bits) - 1);
  return sign | (unsigned)(exponent - 1 + bias) << f->fraction_bits | m;
}

/* A short read's message: the system's reason when reading failed (a
 * directory, an I/O error), else what the file lacks. */
static const char *short_read(Arena *a, FILE *f, const char *path, const char *lacking) {
  return ferror(f) ? arena_printf(a, "%s: %s", path, strerror(errno)) : arena_printf(a, "%s: %s", path, lacking);
}

/* Check the header of f against a 2-D C-order array; -1 with *err. */
static int read_header(Arena *a, FILE *f, const char *path, Header *h, const char **err) {
  unsigned char pre[12];
  if (fread(pre, 1, 8, f) != 8 || memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN)) {
    *err = short_read(a, f, path, "not a .npy file (bad magic)");
    return -1;
  }
  int major = pre[6];
  if (major != 1 && major != 2) {
    *err = arena_printf(a, "%s: unsupported .npy version %d.%d (1.0 and 2.0 are read)", path, major, pre[7]);
    return -1;
  }
  int lenbytes = major == 1 ? 2 : 4;
  if (fread(pre + 8, 1, (size_t)lenbytes, f) != (size_t)lenbytes) {
    *err = short_read(a, f, path, "truncated .npy header");
    return -1;
  }
  uint32_t hlen = little_endian(pre + 8, lenbytes);
  if (hlen > NPY_MAX_HEADER) {
    *err = arena_printf(a, "%s: bad .npy header (length %" PRIu32 ")", path, hlen);
    return -1;
  }
  char *text = arena_alloc(a, hlen + 1);
  if (fread(text, 1, hlen, f) != hlen) {
    *err = short_read(a, f, path, "truncated .npy header");
    return -1;
  }
  *h = (Header){"", -1, -1, {0}};
  Cursor c = {text, text + hlen};
  if (!parse_dict(&c, h) || !h->descr[0] || h->fortran < 0 || h->rank < 0) {
    *err = arena_printf(a, "%s: bad .npy header (expected {'descr': ..., 'fortran_order': ..., 'shape': (...)})", path);
    return -1;
  }
  if (!dtype_bytes(h->descr)) {
    *err = arena_printf(a,
                        "%s: dtype is '%s', expected float32 ('<f4'), int32 ('<i4', i32 tensors), uint16 ('<u2', "
                        "bf16 bit patterns), float16 ('<f2', fp16) or uint8 ('|u1', fp8e4 and fp8e5 bit patterns)",
                        path, h->descr);
    return -1;
  }
  if (h->fortran) {
    *err = arena_printf(a, "%s: array is in Fortran order; save it in C order", path);
    return -1;
  }
  if (h->rank < 2 || h->rank > MAX_RANK) {
    *err = arena_printf(a, "%s: array is %d-D; tensors have 2 to %d dimensions", path, h->rank, MAX_RANK);
    return -1;
  }
  return 0;
}

/* Bytes left in f from here, or -1 when f cannot seek (a pipe). */
static long remaining_bytes(FILE *f) {
  long here = ftell(f);
  if (here < 0 || fseek(f, 0, SEEK_END)) return -1;
  long end = ftell(f);
  if (fseek(f, here, SEEK_SET)) return -1;
  return end - here;
}

/* Convert n elements of dtype descr, read into the front of data as they
 * were in the file, to the tensor's cells in place (back to front, as a
 * cell is at least as wide as an element). */
void npy_widen(float *data, int64_t n, const char *descr, ElemType type) {
  int bytes = dtype_bytes(descr);
  bool bf16 = !strcmp(descr, "<u2"), f32 = !strcmp(descr, "<f4");
  const unsigned char *raw = (const unsigned char *)data;
  for (int64_t i = n - 1; i >= 0; i--) {
    float value;
    if (bf16) {
      uint32_t bits = (uint32_t)(raw[2 * i] | raw[2 * i + 1] << 8) << 16;
      memcpy(&value, &bits, sizeof value);
    } else if (bytes == 4) {
      memcpy(&value, raw + 4 * i, sizeof value);
      if (!f32) continue; /* i32 values stay the file's cells */
    } else {
      value = pattern_value(bytes == 1 ? raw[i] : (unsigned)(raw[2 * i] | raw[2 * i + 1] << 8), format_of(type));
    }
    data[i] = bfrt_round(value, (int)type);
  }
}

/* The data into want's storage, once the header's shape is want's: a
 * header that claims any other shape (a huge one included) is rejected
 * before anything is read or allocated. */
/* A shape as numpy prints it, (a, b, c), and as bfsync does, [a, b, c]. */
static const char *shape_text(Arena *a, const int64_t *dims, int rank, bool brackets) {
  const char *s = "";
  for (int i = 0; i < rank; i++) s = arena_printf(a, "%s%s%" PRId64, s, i ? ", " : "", dims[i]);
  return arena_printf(a, brackets ? "[%s]" : "(%s)", s);
}

/* Whether the header's shape is want's: [rows, cols], or an N-D tensor's own dimensions. */
static bool shape_fits(const Header *h, const NpyArray *want) {
  if (h->rank == 2 && h->shape[0] == want->rows && h->shape[1] == want->cols) return true;
  if (!want->rank || h->rank != want->rank) return false;
  for (int i = 0; i < want->rank; i++)
    if (h->shape[i] != want->dims[i]) return false;
  return true;
}

static int read_data(Arena *a, FILE *f, const char *path, const Header *h, const NpyArray *want,
                     const char *tensor, const char **err) {
  if (!shape_fits(h, want)) {
    int64_t flat[2] = {want->rows, want->cols};
    int rank = want->rank ? want->rank : 2;
    *err = arena_printf(a, "%s: %sshape %s does not match tensor %s %s%s", path,
                        h->rank != rank && h->rank != 2 ? arena_printf(a, "array is %d-D: ", h->rank) : "",
                        shape_text(a, h->shape, h->rank, false), tensor,
                        want->rank ? shape_text(a, want->dims, want->rank, true) : shape_text(a, flat, 2, true),
                        want->rank ? arena_printf(a, " (or %s flattened)", shape_text(a, flat, 2, true)) : "");
    return -1;
  }
  int64_t n = want->rows * want->cols; /* the tensor's, within the size limit */
  int bytes = dtype_bytes(h->descr);
  long left = remaining_bytes(f);
  if (left >= 0 && left != n * bytes) {
    *err = arena_printf(a, "%s: %s data: %ld bytes for shape %s, expected %" PRId64,
                        path, left < n * bytes ? "truncated" : "trailing bytes after the", left,
                        shape_text(a, h->shape, h->rank, false), n * bytes);
    return -1;
  }
  if (fread(want->data, (size_t)bytes, (size_t)n, f) != (size_t)n || fgetc(f) != EOF) {
    *err = short_read(a, f, path,
                      arena_printf(a, "data does not match shape %s", shape_text(a, h->shape, h->rank, false)));
    return -1;
  }
  npy_widen(want->data, n, h->descr, want->type);
  return 0;
}

int npy_read(Arena *a, const char *path, const char *tensor, const NpyArray *into, const char **err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    *err = arena_printf(a, "%s: %s", path, strerror(errno));
    return -1;
  }
  Header h;
  int status = read_header(a, f, path, &h, err);
  if (!status && !npy_dtype_reads(into->type, h.descr)) {
    *err = arena_printf(a, "%s: dtype is '%s', but tensor %s is %s", path, h.descr, tensor, npy_dtype_advice(into->type));
    status = -1;
  }
  if (!status) status = read_data(a, f, path, &h, into, tensor, err);
  fclose(f);
  return status;
}

const char *npy_dtype_advice(ElemType type) {
  static const char *const give[ELEM_NTYPES] = {
      "f32: give float32 ('<f4')", "i32: give int32 ('<i4')",
      "bf16: give its bit patterns as uint16 ('<u2') or float32 ('<f4', rounded to nearest even)",
      "fp8e4: give its bit patterns as uint8 ('|u1') or float32 ('<f4', rounded to nearest even)",
      "fp8e5: give its bit patterns as uint8 ('|u1') or float32 ('<f4', rounded to nearest even)",
      "fp16: give float16 ('<f2') or float32 ('<f4', rounded to nearest even)"};
  return give[type];
}

const char *npy_dtype_native(ElemType type) { return native_dtype(type); }

unsigned npy_pattern(float cell, ElemType type) {
  uint32_t bits;
  memcpy(&bits, &cell, sizeof bits);
  return type == ELEM_BF16 ? bits >> 16 : pattern_bits(cell, format_of(type));
}

/* The cells of array in its file dtype: 4-byte cells as they are, bf16 as
 * the upper halves of its cells, fp8e4, fp8e5 and fp16 as their patterns
 * (little-endian). */
static void write_elements(FILE *f, const NpyArray *array, size_t count) {
  if (array->type == ELEM_F32 || array->type == ELEM_I32) {
    if (count) fwrite(array->data, sizeof(float), count, f);
    return;
  }
  for (size_t i = 0; i < count; i++) {
    unsigned pattern = npy_pattern(array->data[i], array->type);
    unsigned char bytes[2] = {(unsigned char)pattern, (unsigned char)(pattern >> 8)};
    fwrite(bytes, 1, (size_t)bfrt_dtype_bytes((int)array->type), f);
  }
}

int npy_write(Arena *a, const char *path, const NpyArray *array, const char **err) {
  char dict[256]; /* four dimensions of 19 digits and the rest fit */
  int64_t flat[2] = {array->rows, array->cols};
  const char *shape = array->rank ? shape_text(a, array->dims, array->rank, false) : shape_text(a, flat, 2, false);
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                   native_dtype(array->type), shape);
  /* Pad with spaces so magic + version + length + header is a multiple of 64. */
  size_t total = (size_t)(NPY_MAGIC_LEN + 2 + 2 + n + 1 + 63) / 64 * 64;
  size_t hlen = total - (NPY_MAGIC_LEN + 2 + 2);
  char *header = arena_alloc(a, total);
  memcpy(header, NPY_MAGIC "\x01\x00", NPY_MAGIC_LEN + 2);
  header[8] = (char)(hlen & 0xff);
  header[9] = (char)(hlen >> 8);
  memset(header + 10, ' ', hlen);
  memcpy(header + 10, dict, (size_t)n);
  header[total - 1] = '\n';
  AtomicFile out;
  if (atomic_open(&out, path)) {
    *err = arena_printf(a, "%s", out.error);
    return -1;
  }
  size_t count = (size_t)(array->rows * array->cols);
  fwrite(header, 1, total, out.f);
  write_elements(out.f, array, count);
  if (atomic_commit(&out)) {
    *err = arena_printf(a, "%s", out.error);
    return -1;
  }
  return 0;
}
