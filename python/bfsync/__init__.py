"""bfsync from Python: compile a kernel, run it on numpy arrays, verify it.

    import bfsync
    r = bfsync.compile_file("examples/matmul.bfk").run(M=2, N=2, K=3)
    print(r.match, r.waits, r.outputs["C"].shape)

Everything runs in the C library libbfsync.so (api/bfsync.h) through
ctypes; see docs/python.md for the API, the dtypes of bf16, fp16 and fp8
tensors, errors and threads.
"""
from ._core import (BfsyncError, Diagnostic, InternalError, Kernel, KernelError, KernelRuntimeError, Result,
                    Tensor, UsageError, Verification, compile, compile_file, version)

__all__ = ["BfsyncError", "Diagnostic", "InternalError", "Kernel", "KernelError", "KernelRuntimeError", "Result",
           "Tensor", "UsageError", "Verification", "compile", "compile_file", "version"]
__version__ = version()
