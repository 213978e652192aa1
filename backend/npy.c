/* npy.c: numpy's .npy files, the way tensors go in and out of `bfsync run`.
 *
 * Only what a kernel's tensors can be: 2-D, little-endian f32 ('<f4'), C
 * order. The format is a magic string, a version, a little-endian header
 * length (2 bytes in version 1.0, 4 in 2.0), an ASCII Python dict literal
 * padded to a multiple of 64 bytes, then the raw data. The dict is parsed
 * strictly enough that anything numpy would not have written is rejected
 * with a message saying what is wrong, and a short file is never read past
 * its end, and a header is checked against the tensor it fills before any
 * data is read. Files are written as version 1.0, which every numpy reads,
 * atomically (frontend/files.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "frontend/files.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_MAX_HEADER (1 << 20)

typedef struct Header {
  char descr[16];
  int fortran;  /* -1 until seen */
  int rank;     /* -1 until seen */
  int64_t shape[2];
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
    if (n + 1 >= size) return false;
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
    int64_t v = 0;
    while (c->s < c->end && isdigit((unsigned char)*c->s)) {
      if (v > (INT64_MAX - 9) / 10) return false;
      v = v * 10 + (*c->s++ - '0');
    }
    if (h->rank < 2) h->shape[h->rank] = v;
    h->rank++;
    if (!accept(c, ',') && !(skip_space(c), c->s < c->end && *c->s == ')')) return false;
  }
  return true;
}

/* dict = "{" { key ":" value "," } "}" with keys descr, fortran_order, shape */
static bool parse_dict(Cursor *c, Header *h) {
  if (!accept(c, '{')) return false;
  while (!accept(c, '}')) {
    char key[32];
    if (!parse_string(c, key, sizeof key) || !accept(c, ':')) return false;
    bool ok;
    if (!strcmp(key, "descr"))
      ok = parse_string(c, h->descr, sizeof h->descr);
    else if (!strcmp(key, "fortran_order"))
      ok = (parse_word(c, "False") && (h->fortran = 0, true)) ||
           (parse_word(c, "True") && (h->fortran = 1, true));
    else if (!strcmp(key, "shape"))
      ok = parse_shape(c, h);
    else
      return false;
    if (!ok) return false;
    if (!accept(c, ',') && !(skip_space(c), c->s < c->end && *c->s == '}')) return false;
  }
  return true;
}

static uint32_t little_endian(const unsigned char *b, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | b[i];
  return v;
}

/* Check the header of f against an f32 2-D C-order array; -1 with *err. */
static int read_header(Arena *a, FILE *f, const char *path, Header *h, const char **err) {
  unsigned char pre[12];
  if (fread(pre, 1, 8, f) != 8 || memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN)) {
    *err = arena_printf(a, "%s: not a .npy file (bad magic)", path);
    return -1;
  }
  int major = pre[6];
  if (major != 1 && major != 2) {
    *err = arena_printf(a, "%s: unsupported .npy version %d.%d (1.0 and 2.0 are read)", path, major, pre[7]);
    return -1;
  }
  int lenbytes = major == 1 ? 2 : 4;
  if (fread(pre + 8, 1, (size_t)lenbytes, f) != (size_t)lenbytes) {
    *err = arena_printf(a, "%s: truncated .npy header", path);
    return -1;
  }
  uint32_t hlen = little_endian(pre + 8, lenbytes);
  if (hlen > NPY_MAX_HEADER) {
    *err = arena_printf(a, "%s: bad .npy header (length %" PRIu32 ")", path, hlen);
    return -1;
  }
  char *text = arena_alloc(a, hlen + 1);
  if (fread(text, 1, hlen, f) != hlen) {
    *err = arena_printf(a, "%s: truncated .npy header", path);
    return -1;
  }
  *h = (Header){"", -1, -1, {0, 0}};
  Cursor c = {text, text + hlen};
  if (!parse_dict(&c, h) || !h->descr[0] || h->fortran < 0 || h->rank < 0) {
    *err = arena_printf(a, "%s: bad .npy header (expected {'descr': ..., 'fortran_order': ..., 'shape': (...)})", path);
    return -1;
  }
  if (strcmp(h->descr, "<f4") && strcmp(h->descr, "<i4")) {
    *err = arena_printf(a, "%s: dtype is '%s', expected float32 ('<f4') or, for an i32 tensor, int32 ('<i4')",
                        path, h->descr);
    return -1;
  }
  if (h->fortran) {
    *err = arena_printf(a, "%s: array is in Fortran order; save it in C order", path);
    return -1;
  }
  if (h->rank != 2) {
    *err = arena_printf(a, "%s: array is %d-D; tensors are 2-D", path, h->rank);
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

/* The data into want's storage, once the header's shape is want's: a
 * header that claims any other shape (a huge one included) is rejected
 * before anything is read or allocated. */
static int read_data(Arena *a, FILE *f, const char *path, const Header *h, const NpyArray *want,
                     const char *tensor, const char **err) {
  if (h->shape[0] != want->rows || h->shape[1] != want->cols) {
    *err = arena_printf(a, "%s: shape (%" PRId64 ", %" PRId64 ") does not match tensor %s [%" PRId64 ", %" PRId64 "]",
                        path, h->shape[0], h->shape[1], tensor, want->rows, want->cols);
    return -1;
  }
  int64_t n = want->rows * want->cols; /* the tensor's, within the size limit */
  long left = remaining_bytes(f);
  if (left >= 0 && left != n * 4) {
    *err = arena_printf(a, "%s: %s data: %ld bytes for shape (%" PRId64 ", %" PRId64 "), expected %" PRId64,
                        path, left < n * 4 ? "truncated" : "trailing bytes after the", left, h->shape[0],
                        h->shape[1], n * 4);
    return -1;
  }
  if (fread(want->data, sizeof(float), (size_t)n, f) != (size_t)n || fgetc(f) != EOF) {
    *err = arena_printf(a, "%s: data does not match shape (%" PRId64 ", %" PRId64 ")", path, h->shape[0],
                        h->shape[1]);
    return -1;
  }
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
  if (!status && strcmp(h.descr, into->ints ? "<i4" : "<f4")) {
    *err = arena_printf(a, "%s: dtype is '%s', but tensor %s is %s", path, h.descr, tensor,
                        into->ints ? "i32: give int32 ('<i4')" : "f32: give float32 ('<f4')");
    status = -1;
  }
  /* i32 values stay the file's 4-byte little-endian cells, read as they are */
  if (!status) status = read_data(a, f, path, &h, into, tensor, err);
  fclose(f);
  return status;
}

int npy_write(Arena *a, const char *path, const NpyArray *array, const char **err) {
  char dict[128];
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%" PRId64 ", %" PRId64 "), }",
                   array->ints ? "<i4" : "<f4", array->rows, array->cols);
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
  if (count) fwrite(array->data, sizeof(float), count, out.f);
  if (atomic_commit(&out)) {
    *err = arena_printf(a, "%s", out.error);
    return -1;
  }
  return 0;
}
