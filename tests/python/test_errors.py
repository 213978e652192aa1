"""Every error is an exception carrying its diagnostics; nothing crashes the
interpreter."""
import random
import subprocess

import numpy as np
import pytest

import bfsync

MATMUL = "examples/matmul.bfk"


def test_kernel_error_is_positioned_and_prints_as_the_cli(root, bfsync_cli):
    path = root / "tests/bad/names.bfk"
    with pytest.raises(bfsync.KernelError) as e:
        bfsync.compile_file(path)
    cli = subprocess.run([bfsync_cli, "check", str(path)], capture_output=True, text=True).stderr
    assert str(e.value) + "\n" == cli
    d = e.value.diagnostics
    assert d[0].kind == "error" and d[0].file == str(path) and d[0].message == "duplicate name 'N'"
    assert (d[0].line, d[0].column) == (2, 26)
    assert d[0].children and d[0].children[0].kind == "note" and d[0].children[0].line == 2
    assert e.value.status == 1


def test_syntax_error_from_a_string():
    with pytest.raises(bfsync.KernelError) as e:
        bfsync.compile("kernel k(N: int) {\n  sbuf x: f32[4, 4]\n}\n", name="mine.bfk")
    d = e.value.diagnostics[0]
    assert d.file == "mine.bfk" and d.line == 3 and "syntax error" in d.message
    assert str(e.value).startswith("mine.bfk:3:")


def test_unreadable_file():
    with pytest.raises(bfsync.KernelError, match="cannot read '/no/such.bfk'"):
        bfsync.compile_file("/no/such.bfk")


def test_missing_unknown_and_repeated_parameters(root):
    k = bfsync.compile_file(root / MATMUL)
    with pytest.raises(bfsync.UsageError) as e:
        k.run(M=1, N=1)
    assert "K" in str(e.value) and e.value.diagnostics[0].line == 21  # the parameter list
    with pytest.raises(bfsync.UsageError, match="Q"):
        k.run(M=1, N=1, K=1, Q=2)
    with pytest.raises(TypeError):
        k.run(M=1, N=1, K=1.5)


def test_wrong_dtype_is_positioned_at_the_tensor(root):
    k = bfsync.compile_file(root / MATMUL)
    with pytest.raises(bfsync.UsageError) as e:
        k.run({"A": np.zeros((64, 64), np.float64)}, M=1, N=1, K=1)
    d = e.value.diagnostics[0]
    assert d.line == 22 and "'<f8'" in d.message and "float32" in d.message
    assert "examples/matmul.bfk:22:" in str(e.value) and "^" in str(e.value)


def test_wrong_shape_and_rank(root):
    k = bfsync.compile_file(root / MATMUL)
    with pytest.raises(bfsync.UsageError, match=r"\[64, 64\] with these parameters, but the array given is \(64, 65\)"):
        k.run({"A": np.zeros((64, 65), np.float32)}, M=1, N=1, K=1)
    with pytest.raises(bfsync.UsageError, match="1-D"):
        k.run({"A": np.zeros(4096, np.float32)}, M=1, N=1, K=1)
    with pytest.raises(bfsync.UsageError, match="out tensor"):
        k.run({"C": np.zeros((64, 64), np.float32)}, M=1, N=1, K=1)
    with pytest.raises(bfsync.UsageError, match="no tensor 'D'"):
        k.run({"D": np.zeros((64, 64), np.float32)}, M=1, N=1, K=1)


def test_bad_options(root):
    k = bfsync.compile_file(root / MATMUL)
    with pytest.raises(bfsync.UsageError, match="sync must be one of barrier-free, barrier"):
        k.run(M=1, N=1, K=1, sync="fast")
    with pytest.raises(bfsync.UsageError, match="exec must be threads, sim or timing-only"):
        k.run(M=1, N=1, K=1, exec="gpu")
    with pytest.raises(bfsync.UsageError, match="jitter"):
        k.run(M=1, N=1, K=1, exec="sim", jitter=True)
    with pytest.raises(bfsync.UsageError, match="schedules"):
        k.verify(M=1, N=1, K=1, schedules=0)


@pytest.mark.parametrize("kernel, params, line, words", [
    ("store_oob", {"N": 2}, 12, "out of bounds"),
    ("nan", {"N": 1}, 11, "NaN from finite inputs"),
    ("uninit", {"N": 2}, 13, "before anything wrote it"),
])
def test_runtime_errors_carry_line_and_message(root, kernel, params, line, words):
    k = bfsync.compile_file(root / "tests/bad_run" / (kernel + ".bfk"))
    with pytest.raises(bfsync.KernelRuntimeError) as e:
        k.run(**params)
    assert e.value.line == line and words in e.value.message and e.value.status == 3
    assert isinstance(e.value, RuntimeError)


def test_a_step_limit_is_an_error_not_a_hang(root):
    k = bfsync.compile_file(root / MATMUL)
    with pytest.raises(bfsync.BfsyncError, match="steps"):
        k.run(M=4, N=4, K=4, max_steps=10)


def test_mutated_sources_never_crash(root):
    """Random damage to a good kernel: every result is a Kernel or a KernelError."""
    text = (root / MATMUL).read_bytes()
    rng = random.Random(25)
    outcomes = set()
    for _ in range(300):
        b = bytearray(text)
        for _ in range(rng.randint(1, 6)):
            if not b:
                break
            at = rng.randrange(len(b))
            op = rng.randrange(3)
            if op == 0:
                del b[at:at + rng.randint(1, 30)]
            elif op == 1:
                b[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 5)))
            else:
                b = b[:at]
        try:
            k = bfsync.compile(bytes(b), name="mutant.bfk")
            outcomes.add("kernel")
            k.close()
        except bfsync.KernelError as e:
            assert e.diagnostics, str(e)
            outcomes.add("error")
    assert outcomes == {"kernel", "error"}


def test_hostile_inputs(root):
    for text in [b"", b"\0" * 100, b"kernel", "kernel k() { \u00e9 }".encode(), b"{" * 100000]:
        with pytest.raises(bfsync.KernelError):
            bfsync.compile(text)
    with pytest.raises(TypeError):
        bfsync.compile(42)


def test_a_broken_installation_is_an_exception(root, monkeypatch):
    """No tcc on PATH, or no temporary folder: the run fails with a message,
    the interpreter goes on, and the next run works."""
    k = bfsync.compile_file(root / MATMUL)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(bfsync.InternalError, match="cannot run tcc"):
        k.run(M=1, N=1, K=1)
    monkeypatch.undo()
    monkeypatch.setenv("TMPDIR", "/nonexistent/tmp")
    with pytest.raises(bfsync.InternalError, match="temporary folder"):
        k.run(M=1, N=1, K=1)
    monkeypatch.undo()
    assert k.run(M=1, N=1, K=1).ok
