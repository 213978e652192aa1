"""The C library (api/bfsync.h) through ctypes: where it is, its types and
prototypes. Nothing here knows kernels; bfsync/_core.py builds on it.

libbfsync.so is looked for in this order:
  1. $BFSYNC_LIB, if set (a path to the .so);
  2. three folders up from this package: PREFIX/lib/libbfsync.so after
     `make install PREFIX=...` (the package is PREFIX/lib/python3/site-packages/bfsync);
  3. ../../build/libbfsync.so: the source tree after `make`
     (PYTHONPATH=python).
"""
import ctypes
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    env = os.environ.get("BFSYNC_LIB")
    if env:
        return [env]
    return [os.path.normpath(os.path.join(_HERE, "..", "..", "..", "libbfsync.so")),
            os.path.normpath(os.path.join(_HERE, "..", "..", "build", "libbfsync.so"))]


def _load():
    tried = []
    for path in _candidates():
        if os.path.exists(path):
            return ctypes.CDLL(path), path
        tried.append(path)
    raise ImportError("bfsync: libbfsync.so not found (looked at %s); run `make` in the bfsync tree, "
                      "or set BFSYNC_LIB to its path" % ", ".join(tried))


lib, path = _load()

c_char_p, c_int, c_int64, c_size_t, c_void_p = (ctypes.c_char_p, ctypes.c_int, ctypes.c_int64,
                                                 ctypes.c_size_t, ctypes.c_void_p)


class Options(ctypes.Structure):
    _fields_ = [("sync", c_char_p), ("exec", c_char_p), ("seed", ctypes.c_uint64), ("max_steps", c_int64),
                ("check", c_int), ("jitter", c_int)]


class Buffer(ctypes.Structure):
    _fields_ = [("data", c_void_p), ("dtype", c_char_p), ("rows", c_int64), ("cols", c_int64)]


class Result(ctypes.Structure):
    _fields_ = [("outputs_match", c_int), ("within_f64", c_int), ("max_abs_err", ctypes.c_double),
                ("max_abs_err_f64", ctypes.c_double), ("max_rel_err_f64", ctypes.c_double),
                ("error_bound_ratio_f64", ctypes.c_double)] + \
               [(name, c_int64) for name in ("waits_executed", "instructions", "bookkeeping", "barriers",
                                             "backpressure_held", "spills", "races", "cycles", "ideal_cycles",
                                             "ideal_sync_cycles", "wall_ns")]


class VerifyResult(ctypes.Structure):
    _fields_ = [("failed", c_int)] + \
               [(name, c_int64) for name in ("instructions", "waits", "races", "early", "late", "late_explained",
                                             "redundant", "subsumed", "bookkeeping", "deadlocks", "mismatches")] + \
               [("schedules", c_int)]


Error_p = ctypes.POINTER(c_void_p)


def _proto(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype, f.argtypes = restype, list(argtypes)


NAMES = ctypes.POINTER(c_char_p)
VALUES = ctypes.POINTER(c_int64)
_proto("bfs_version", c_char_p)
_proto("bfs_result_size", c_size_t)
_proto("bfs_verify_result_size", c_size_t)
_proto("bfs_compile_file", c_void_p, c_char_p, c_char_p, Error_p)
_proto("bfs_compile_string", c_void_p, c_char_p, c_size_t, c_char_p, c_char_p, Error_p)
_proto("bfs_kernel_free", None, c_void_p)
_proto("bfs_kernel_warnings", c_char_p, c_void_p)
_proto("bfs_kernel_name", c_char_p, c_void_p)
_proto("bfs_kernel_nparams", c_int, c_void_p)
_proto("bfs_kernel_param", c_char_p, c_void_p, c_int)
_proto("bfs_kernel_ntensors", c_int, c_void_p)
_proto("bfs_tensor_name", c_char_p, c_void_p, c_int)
_proto("bfs_tensor_io", c_char_p, c_void_p, c_int)
_proto("bfs_tensor_type", c_char_p, c_void_p, c_int)
_proto("bfs_tensor_shapes", c_int, c_void_p, NAMES, VALUES, c_int, VALUES, Error_p)
_proto("bfs_run_kernel", c_void_p, c_void_p, NAMES, VALUES, c_int, ctypes.POINTER(Buffer), c_int,
       ctypes.POINTER(Options), Error_p)
_proto("bfs_run_result", ctypes.POINTER(Result), c_void_p)
_proto("bfs_run_report", c_char_p, c_void_p)
_proto("bfs_run_shape", c_int, c_void_p, c_int, VALUES, VALUES)
_proto("bfs_run_output", c_int, c_void_p, c_int, c_void_p, c_char_p, Error_p)
_proto("bfs_run_free", None, c_void_p)
_proto("bfs_verify", c_int, c_void_p, NAMES, VALUES, c_int, ctypes.POINTER(Options), c_int,
       ctypes.POINTER(VerifyResult), Error_p)
_proto("bfs_explain", c_void_p, c_void_p, c_char_p, Error_p)
_proto("bfs_free", None, c_void_p)
_proto("bfs_error_status", c_int, c_void_p)
_proto("bfs_error_text", c_char_p, c_void_p)
_proto("bfs_error_json", c_char_p, c_void_p)
_proto("bfs_error_free", None, c_void_p)

if lib.bfs_result_size() != ctypes.sizeof(Result) or lib.bfs_verify_result_size() != ctypes.sizeof(VerifyResult):
    raise ImportError("bfsync: %s does not match this Python package (a bfs_result of %d bytes, expected %d); "
                      "rebuild with `make`" % (path, lib.bfs_result_size(), ctypes.sizeof(Result)))
