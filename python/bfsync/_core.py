"""Kernels, runs and errors over libbfsync.so (docs/python.md).

Everything bfsync does happens in the C library: parsing, checking, the
synchronization, the JIT, the executors, both references, the oracle, the
dtype conversions and the diagnostics. This module only moves numpy
buffers and names across, and turns the library's errors into exceptions.
"""
import ctypes
import json

import numpy as np

from . import _lib

_lib_c = _lib.lib

# Element types, and the numpy dtypes that carry them (docs/python.md).
OUTPUT_DTYPES = {"f32": np.float32, "i32": np.int32}
BIT_DTYPES = {"bf16": np.uint16, "fp16": np.float16, "fp8e4": np.uint8, "fp8e5": np.uint8}


def version():
    """The version of the bfsync library, as `bfsync --version` prints it."""
    return _lib_c.bfs_version().decode()


class Diagnostic:
    """One diagnostic: kind ('error', 'warning' or 'note'), message, and
    where: file, line, column (in bytes, as the command line prints it),
    end_line, end_column (the last character), display_column; children are
    its notes. line is None for a message about no place in particular."""

    __slots__ = ("kind", "message", "file", "line", "column", "end_line", "end_column", "display_column",
                 "children")

    def __init__(self, d):
        self.kind, self.message = d["kind"], d["message"]
        loc = d["locations"][0] if d["locations"] else None
        caret, finish = (loc["caret"], loc["finish"]) if loc else ({}, {})
        self.file = caret.get("file")
        self.line, self.column = caret.get("line"), caret.get("byte-column")
        self.display_column = caret.get("display-column")
        self.end_line, self.end_column = finish.get("line"), finish.get("byte-column")
        self.children = [Diagnostic(c) for c in d.get("children", [])]

    def __repr__(self):
        where = "%s:%s:%s: " % (self.file, self.line, self.column) if self.line else ""
        return "<Diagnostic %s%s: %s>" % (where, self.kind, self.message)


class BfsyncError(Exception):
    """A failure reported by bfsync. str() is what the command line prints;
    .diagnostics the same as Diagnostic objects; .status the library's
    code (1 kernel error, 2 usage error, 3 run-time error, 4 internal)."""

    def __init__(self, text, diagnostics, status):
        super().__init__(text.rstrip("\n"))
        self.text, self.diagnostics, self.status = text, diagnostics, status

    def __str__(self):
        return self.text.rstrip("\n")


class KernelError(BfsyncError):
    """The kernel does not compile (or cannot be read)."""


class UsageError(BfsyncError, ValueError):
    """A bad argument: a missing or unknown parameter, an array of the wrong
    dtype or shape, an unknown sync mode or executor."""


class KernelRuntimeError(BfsyncError, RuntimeError):
    """The kernel failed while it ran: .line is the kernel line, .message
    what happened (out of bounds, NaN from finite inputs, a read before a
    write, a division by zero, a deadlock)."""

    @property
    def line(self):
        return next((d.line for d in self.diagnostics if d.line), None)

    @property
    def message(self):
        return self.diagnostics[0].message if self.diagnostics else str(self)


class InternalError(BfsyncError):
    """A bug in bfsync, memory exhausted, or a broken installation (no tcc
    command, no temporary folder): reported, never a crash."""


_ERRORS = {1: KernelError, 2: UsageError, 3: KernelRuntimeError, 4: InternalError}


def _raise(err):
    """Raise the exception for the library's bfs_error (and free it)."""
    try:
        status = _lib_c.bfs_error_status(err)
        text = _lib_c.bfs_error_text(err).decode("utf-8", "replace")
        diags = [Diagnostic(d) for d in json.loads(_lib_c.bfs_error_json(err).decode("utf-8", "replace"))]
    finally:
        _lib_c.bfs_error_free(err)
    raise _ERRORS.get(status, BfsyncError)(text, diags, status)


def _check(ok, err):
    if not ok:
        if not err.value:
            raise MemoryError("bfsync: out of memory")
        _raise(err.value)


def _bytes(s, what):
    if isinstance(s, bytes):
        return s
    if not isinstance(s, str):
        raise TypeError("%s must be a str, not %s" % (what, type(s).__name__))
    return s.encode("utf-8", "surrogateescape")


class Tensor:
    """A kernel's hbm tensor: name, io ('in', 'out', 'inout'), type
    ('f32', 'i32', 'bf16', 'fp8e4', 'fp8e5', 'fp16')."""

    __slots__ = ("name", "io", "type")

    def __init__(self, name, io, type):
        self.name, self.io, self.type = name, io, type

    def __repr__(self):
        return "<Tensor %s %s %s>" % (self.io, self.name, self.type)


class Result:
    """One run in one sync mode: outputs (every out and inout tensor, by
    name, as numpy arrays) and what `bfsync run --json` reports. ok is
    whether it all holds (matches the sequential reference bit for bit and
    the f64 reference within its bounds); report says what differed."""

    _FIELDS = ("outputs_match", "within_f64", "max_abs_err", "max_abs_err_f64", "max_rel_err_f64",
               "error_bound_ratio_f64", "waits_executed", "instructions", "bookkeeping", "barriers",
               "backpressure_held", "spills", "races", "cycles", "ideal_cycles", "ideal_sync_cycles", "wall_ns")
    _OPTIONAL = ("races", "cycles", "ideal_cycles", "ideal_sync_cycles")  # -1: does not apply

    def __init__(self, kernel, sync, exec, params, c_result, report, outputs):
        self.kernel, self.sync, self.exec, self.params = kernel, sync, exec, dict(params)
        for name in self._FIELDS:
            value = getattr(c_result, name)
            if name in self._OPTIONAL and value < 0:
                value = None
            elif name in ("outputs_match", "within_f64"):
                value = None if value < 0 else bool(value)  # None: a timing-only run compares nothing
            setattr(self, name, value)
        self.report, self.outputs = report, outputs

    # The short names of the issue and the README.
    match = property(lambda self: self.outputs_match)
    waits = property(lambda self: self.waits_executed)
    ideal = property(lambda self: self.ideal_cycles)
    ideal_sync = property(lambda self: self.ideal_sync_cycles)
    ok = property(lambda self: bool(self.outputs_match and self.within_f64))
    timing_only = property(lambda self: self.exec == "timing-only")

    def as_dict(self):
        """The keys of `bfsync run --json` this run has."""
        d = {"kernel": self.kernel, "sync": self.sync, "exec": self.exec, "params": self.params}
        d.update((name, getattr(self, name)) for name in self._FIELDS)
        return d

    def __repr__(self):
        return "<Result %s %s/%s match=%s waits=%d>" % (self.kernel, self.sync, self.exec, self.match, self.waits)


class Verification:
    """What `bfsync verify --json` counts; ok unless it failed."""

    _FIELDS = ("instructions", "waits", "races", "early", "late", "late_explained", "redundant", "subsumed",
               "bookkeeping", "deadlocks", "mismatches", "schedules")

    def __init__(self, c_result):
        self.failed = bool(c_result.failed)
        for name in self._FIELDS:
            setattr(self, name, getattr(c_result, name))

    ok = property(lambda self: not self.failed)

    def as_dict(self):
        d = {name: getattr(self, name) for name in self._FIELDS}
        d["failed"] = self.failed
        return d

    def __repr__(self):
        return "<Verification %s races=%d waits=%d>" % ("ok" if self.ok else "FAILED", self.races, self.waits)


def _params(params, kwargs):
    """NAME=VALUE pairs as the library's two arrays."""
    merged = dict(params or {})
    merged.update(kwargs)
    names = (ctypes.c_char_p * (len(merged) + 1))(*[_bytes(n, "a parameter name") for n in merged])
    values = (ctypes.c_int64 * (len(merged) + 1))()
    for i, v in enumerate(merged.values()):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError("parameter values must be integers, not %r" % (v,))
        if not -2**63 <= int(v) < 2**63:
            raise OverflowError("parameter value %d does not fit in 64 bits" % v)
        values[i] = int(v)
    return merged, names, values, len(merged)


def _options(sync, exec, seed, max_steps, check, jitter):
    if not 0 <= int(seed) < 2**64:
        raise ValueError("seed must be from 0 to 2^64 - 1")
    return _lib.Options(_bytes(sync, "sync"), _bytes(exec, "exec"), int(seed), int(max_steps), int(bool(check)),
                        int(bool(jitter)))


class Kernel:
    """A parsed and checked kernel (compile() or compile_file()). name,
    params (parameter names in order), tensors (name -> Tensor), warnings
    (as the command line prints them). Several threads may run one kernel
    at once; its memory is freed when the object goes away (or close())."""

    def __init__(self, handle):
        self._h = handle
        lib = _lib_c
        self.name = lib.bfs_kernel_name(handle).decode()
        self.params = tuple(lib.bfs_kernel_param(handle, i).decode() for i in range(lib.bfs_kernel_nparams(handle)))
        self.tensors = {}
        for t in range(lib.bfs_kernel_ntensors(handle)):
            name = lib.bfs_tensor_name(handle, t).decode()
            self.tensors[name] = Tensor(name, lib.bfs_tensor_io(handle, t).decode(),
                                        lib.bfs_tensor_type(handle, t).decode())
        self._order = list(self.tensors)
        self.warnings = lib.bfs_kernel_warnings(handle).decode("utf-8", "replace")

    def close(self, _free=_lib_c.bfs_kernel_free):
        """Free the kernel now (it is freed anyway when collected)."""
        h, self._h = getattr(self, "_h", None), None
        if h:
            _free(h)  # bound at definition: still there while the interpreter exits

    __del__ = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if not self._h:
            raise ValueError("kernel %s is closed" % self.name)
        return self._h

    def __repr__(self):
        return "<Kernel %s(%s)>" % (self.name, ", ".join(self.params))

    def shapes(self, params=None, **kwargs):
        """Every tensor's (rows, cols) for these parameters, by name."""
        _, names, values, n = _params(params, kwargs)
        out = (ctypes.c_int64 * (2 * len(self._order) + 2))()
        err = ctypes.c_void_p()
        _check(_lib_c.bfs_tensor_shapes(self._handle(), names, values, n, out, ctypes.byref(err)) == 0, err)
        return {name: (out[2 * t], out[2 * t + 1]) for t, name in enumerate(self._order)}

    def _buffers(self, inputs, keep):
        """The inputs as the library's buffers, one per tensor in order."""
        inputs = dict(inputs or {})
        unknown = [name for name in inputs if name not in self.tensors]
        if unknown:
            raise UsageError("bfsync: error: kernel %s has no tensor %s (its tensors: %s)\n"
                             % (self.name, ", ".join(map(repr, unknown)), ", ".join(self._order)), [], 2)
        buffers = (_lib.Buffer * (len(self._order) + 1))()
        for t, name in enumerate(self._order):
            if name not in inputs:
                continue
            a = np.ascontiguousarray(inputs[name])  # the same dtype: never converted here
            if a.size == 0:
                a = np.zeros((1,), dtype=a.dtype)[:0].reshape(a.shape)  # a valid pointer even when empty
            dtype = a.dtype.str.encode()
            keep += [a, dtype]
            rows, cols = a.shape if a.ndim == 2 else (-1, a.ndim)
            buffers[t] = _lib.Buffer(a.ctypes.data_as(ctypes.c_void_p), dtype, rows, cols)
        return buffers

    def run(self, inputs=None, *, params=None, sync="barrier-free", exec="threads", seed=1, check=False,
            jitter=False, max_steps=0, narrow="float32", **kwargs):
        """Run the kernel and compare it with both references.

        inputs: tensor name -> numpy array, for in and inout tensors (the
        rest get bfsync's seeded default inputs, as `bfsync run` makes
        them). Parameters as keywords (M=2) or params={...}. sync:
        'barrier-free' or 'barrier'; exec: 'threads', 'sim', or
        'timing-only' (the simulator's cycles without tensor data: no
        outputs, nothing compared; only i32 inputs). narrow:
        how bf16, fp16 and fp8 outputs come back: 'float32' (their exact
        values) or 'bits' (uint16 / float16 / uint8 patterns).

        Returns a Result. Raises UsageError (parameters, dtype, shape),
        KernelRuntimeError (the kernel failed while it ran), never crashes."""
        if narrow not in ("float32", "bits"):
            raise ValueError("narrow must be 'float32' or 'bits', not %r" % (narrow,))
        merged, names, values, n = _params(params, kwargs)
        keep = []
        buffers = self._buffers(inputs, keep)
        opt = _options(sync, exec, seed, max_steps, check, jitter)
        err = ctypes.c_void_p()
        run = _lib_c.bfs_run_kernel(self._handle(), names, values, n, buffers, len(self._order), ctypes.byref(opt),
                                    ctypes.byref(err))
        _check(run, err)
        try:
            outputs = {}
            for t, name in enumerate(self._order):
                tensor = self.tensors[name]
                if tensor.io == "in" or exec == "timing-only":
                    continue
                dtype = OUTPUT_DTYPES.get(tensor.type) or (BIT_DTYPES[tensor.type] if narrow == "bits" else np.float32)
                rows, cols = ctypes.c_int64(), ctypes.c_int64()
                _lib_c.bfs_run_shape(run, t, ctypes.byref(rows), ctypes.byref(cols))
                out = np.empty((rows.value, cols.value), dtype=dtype)
                _check(_lib_c.bfs_run_output(run, t, out.ctypes.data_as(ctypes.c_void_p), out.dtype.str.encode(),
                                             ctypes.byref(err)) == 0, err)
                outputs[name] = out
            result = Result(self.name, sync, exec, merged, _lib_c.bfs_run_result(run).contents,
                            _lib_c.bfs_run_report(run).decode("utf-8", "replace"), outputs)
        finally:
            _lib_c.bfs_run_free(run)
        return result

    def verify(self, params=None, *, sync="barrier-free", schedules=4, seed=1, max_steps=0, **kwargs):
        """The exactness oracle under `schedules` random interleavings, as
        `bfsync verify` runs it. Returns a Verification."""
        _, names, values, n = _params(params, kwargs)
        opt = _options(sync, "threads", seed, max_steps, False, False)
        out = _lib.VerifyResult()
        err = ctypes.c_void_p()
        _check(_lib_c.bfs_verify(self._handle(), names, values, n, ctypes.byref(opt), int(schedules),
                                 ctypes.byref(out), ctypes.byref(err)) == 0, err)
        return Verification(out)

    def explain(self, sync="barrier-free"):
        """`bfsync compile --explain`: every inserted wait, its threshold and why."""
        err = ctypes.c_void_p()
        text = _lib_c.bfs_explain(self._handle(), _bytes(sync, "sync"), ctypes.byref(err))
        _check(text, err)
        try:
            return ctypes.string_at(text).decode("utf-8", "replace")
        finally:
            _lib_c.bfs_free(text)


def compile(text, name="<string>", target=None):
    """A Kernel from source text; name is the file name diagnostics cite.
    target: a target file (default: the kernel's `// target:` line, else
    the built-in trn1). Raises KernelError with the diagnostics."""
    data = _bytes(text, "the kernel text")
    err = ctypes.c_void_p()
    h = _lib_c.bfs_compile_string(data, len(data), _bytes(name, "name"),
                                  _bytes(target, "target") if target else None, ctypes.byref(err))
    _check(h, err)
    return Kernel(h)


def compile_file(path, target=None):
    """A Kernel from a .bfk file (see compile)."""
    import os
    err = ctypes.c_void_p()
    h = _lib_c.bfs_compile_file(_bytes(os.fspath(path), "path"), _bytes(target, "target") if target else None,
                                ctypes.byref(err))
    _check(h, err)
    return Kernel(h)
