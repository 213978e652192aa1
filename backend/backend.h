/* backend.h: from checked, transformed kernels to running code.
 *
 * emit_c prints the transform's per-engine streams as one C99 file against
 * the runtime API (bfrt.h); jit compiles that file in memory with libtcc and
 * hands back the kernel descriptor; the reference executor walks the checked
 * AST in program order and is the ground truth the JIT'd run is compared
 * with; npy reads and writes numpy's .npy files for tensors in and out. */
#ifndef BACKEND_H
#define BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "frontend/program.h"
#include "runtime/bfrt_cost.h"
#include "transform/ir.h"
#include "util/json.h"

/* BFSYNC_VERSION, stamped into generated files and printed by --version,
 * comes from the Makefile's VERSION, its one definition. */

/* Requires: p->ir validated. Ensures: one self-contained C99 file on out. */
void emit_c(const Program *p, FILE *out);
/* emit_c into a NUL-terminated string in p's arena. */
char *emit_c_string(Program *p);
/* The one external symbol of the emitted file, the kernel's descriptor:
 * bfk_<kernel>_<mode> (mode barrier_free or barrier), so any kernels and
 * both modes of one link into one program. */
const char *emit_c_symbol(const Program *p);

/* ---- JIT (libtcc, in memory). */
typedef struct Jit Jit;
/* Compile generated C; NULL with a message in *err when the runtime
 * headers are not installed beside bfsync; a libtcc error is a backend bug
 * (reported, abort). */
Jit *jit_compile(Program *p, const char *c_source, const char **err);
/* TCC_LIB_DIR: tcc's own headers and libtcc1.a. */
#define TCC_LIB_DIR "/usr/lib/x86_64-linux-gnu/tcc"
/* The folder of the running code (the executable, or libbfsync.so), and
 * the runtime headers' folder found from it (NULL, with the places looked
 * in in *looked, if missing). backend/jit.c */
void jit_code_folder(char *dir, size_t size);
const char *jit_runtime_include_dir(Arena *arena, const char **looked);
/* Requires: a checked kernel. Ensures: a C header on out naming its
 * descriptors and the index of every parameter and tensor (compile --header). */
void emit_header(const Program *p, FILE *out);
/* text[0, len) made safe inside a one-line C block comment: white space and
 * unprintable bytes as one space, and "*" "/" and "??" broken apart. */
void emit_comment_text(FILE *out, const char *text, size_t len);
/* The descriptor the compiled file exports (emit_c_symbol). */
const bfrt_kernel *jit_kernel(const Jit *jit);
/* Release the compiled code; the descriptor is gone after this. */
void jit_free(Jit *jit);

/* ---- The sequential reference executor. */
typedef struct RefTensor {
  int64_t rows, cols;
  float *data; /* rows * cols, row-major; inputs in, results out */
} RefTensor;

/* Shape of every tensor for params, into tensors[t].rows/cols; 0, or -1 with
 * a message (a division by zero, a negative dimension) in *err. */
int reference_shapes(Program *p, const int64_t *params, RefTensor *tensors, const char **err);
/* Run the checked kernel one instruction at a time in program order on
 * tensors (shaped by reference_shapes); 0, or -1 with the first run-time
 * error (hbm tile out of bounds, bad slot, division by zero) in *err. */
int reference_run(Program *p, const int64_t *params, RefTensor *tensors, const char **err);
/* Make tensors' i32 contents the device integers that p's reference and
 * oracle read (p->device_ints); tensors must outlive their use. */
void device_ints_bind(Program *p, const RefTensor *tensors);
/* The member "device": {"NAME": [v, ...], ...} of the object w is in, for
 * p's i32 tensors (row-major), nothing when the kernel has none: what
 * --json reports of them. */
void device_ints_json(const Program *p, JsonWriter *w);

/* ---- The independent numerical reference (reference_f64.c). */
/* A tensor's exact values, and for each the bound on how far an f32
 * computation of it may be (docs/language.md, "Numerical checks"). */
typedef struct ExactTensor {
  int64_t rows, cols;
  double *value, *bound;
} ExactTensor;

/* Run the checked kernel in double precision on inputs (shaped and filled
 * as for reference_run; read only), every op computed from its definition
 * without the runtime's code, with a first-order error bound beside every
 * value; results[t] gets tensor t (in p's arena). 0, or -1 with the first
 * diagnostic in *err: a tile slot read before it was written, NaN or Inf
 * (or a value beyond f32) produced from finite inputs, elements of an out
 * tensor never stored, or a run-time error. */
int reference_f64(Program *p, const int64_t *params, const RefTensor *inputs, ExactTensor *results,
                  const char **err);

typedef struct ExactErrors {
  double max_abs_err;     /* the largest |got - exact| */
  double max_rel_err;     /* the largest relative error (reference_f64_rel_err), over the f32 tensors */
  double max_bound_ratio; /* the largest |got - exact| / its bound: over 1 is out of tolerance */
  double max_type_err;    /* over the narrow-typed tensors: the largest |got - exact| / (u_t m), in units of
                             the type's precision u_t (2^-8 for bf16) at m, the largest |exact| of the tensor */
  bool f32_out, narrow_out; /* whether any out or inout tensor is f32, narrower */
} ExactErrors;

/* Compare every out and inout tensor of got (f32 results) with exact.
 * Whether every element is within its bound; *errors gets the largest
 * errors, *report a description of the worst element beyond its bound
 * (else NULL). */
bool reference_f64_compare(Program *p, const RefTensor *got, const ExactTensor *exact, ExactErrors *errors,
                           const char **report);
/* Relative error of got against want, the exact value, where scale is the
 * largest |value| of want's tensor: |got - want| / max(|want|, scale * 2^-10,
 * FLT_MIN); a NaN or an infinity on one side only is infinite. */
double reference_f64_rel_err(float got, double want, double scale);

/* ---- numpy .npy files: 2-D (an N-D tensor's: its own dimensions, or
 * flattened to [rows, cols]), C order, little-endian; the dtype by the
 * tensor's element type (docs/runtime.md, "The .npy contract"): f32 '<f4',
 * i32 '<i4', fp16 '<f2', and, as numpy has no bfloat16 or float8, bf16 as
 * its bit patterns in '<u2' and fp8e4 and fp8e5 as their bit patterns in
 * '|u1'. A tensor of these narrow types also reads '<f4', rounding each
 * value to nearest even. */
typedef struct NpyArray {
  int64_t rows, cols;
  float *data;   /* rows * cols 4-byte cells: the values (int32 cells for i32) */
  ElemType type; /* the tensor's element type */
  int rank;      /* an N-D tensor's dimensions (3 .. MAX_RANK, their product rows * cols), else 0 */
  int64_t dims[MAX_RANK];
} NpyArray;

/* Read path into into->data, which is into->rows x into->cols of
 * into->type (the dtype must be one that type reads): a file of any other
 * shape is an error (naming tensor) before anything is read. 0, or -1 with
 * a message in *err. */
int npy_read(Arena *arena, const char *path, const char *tensor, const NpyArray *into, const char **err);
/* The same conversions on memory, for the library (api/bfsync.c): whether
 * a tensor of type takes elements of dtype descr ('<f4', '<u2', ...); what
 * to give it instead (a phrase: "bf16: give its bit patterns as ..."); the
 * dtype it is written in; n elements of descr at the front of data made
 * the tensor's cells in place; a narrow cell's bit pattern. */
bool npy_dtype_reads(ElemType type, const char *descr);
const char *npy_dtype_advice(ElemType type);
const char *npy_dtype_native(ElemType type);
void npy_widen(float *data, int64_t n, const char *descr, ElemType type);
unsigned npy_pattern(float cell, ElemType type);
/* Write a version 1.0 file, atomically (a temporary file renamed over
 * path); 0, or -1 with a message (and the reason) in *err. */
int npy_write(Arena *arena, const char *path, const NpyArray *array, const char **err);

#endif
