"""An example to copy: testing a bfsync kernel against a numpy reference
with pytest, the way an NKI kernel is tested with nki.simulate.

Copy this file next to your kernel, change KERNEL, reference() and
make_inputs(), and run `pytest`. Each test compiles the kernel once
(the fixture), runs it with your inputs under each sync mode and executor,
and checks three things: bfsync's own verdict (r.ok: the parallel run
matched the sequential reference bit for bit and the f64 reference within
its error bounds), your numpy reference, and the oracle (k.verify: no
race, no deadlock). A kernel error, a run-time error (out of bounds, NaN
from finite inputs) or a wrong input fails the test with the kernel's
file:line:col message.
"""
import pathlib

import numpy as np
import pytest

import bfsync

KERNEL = pathlib.Path(__file__).resolve().parents[2] / "examples" / "softmax.bfk"


def reference(x):
    """What the kernel should compute, in float64."""
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def make_inputs(rows, seed):
    rng = np.random.default_rng(seed)
    return {"X": (rng.standard_normal((rows, 96)) * 4).astype(np.float32)}


@pytest.fixture(scope="module")
def kernel():
    return bfsync.compile_file(KERNEL)


@pytest.mark.parametrize("R", [0, 1, 2, 5])  # zero trips, one, two (both slots), more
@pytest.mark.parametrize("sync", ["barrier-free", "barrier"])
@pytest.mark.parametrize("exec_", ["threads", "sim"])
def test_softmax_matches_numpy(kernel, R, sync, exec_):
    inputs = make_inputs(R * 32, seed=R)
    r = kernel.run(inputs, R=R, sync=sync, exec=exec_)
    assert r.ok, r.report
    assert r.outputs["Y"].shape == (R * 32, 96)
    np.testing.assert_allclose(r.outputs["Y"], reference(inputs["X"]), rtol=2e-6, atol=1e-7)
    if exec_ == "sim":
        assert r.cycles >= r.ideal_sync >= r.ideal  # no schedule beats the oracle's ideal


@pytest.mark.parametrize("R", [1, 3])
@pytest.mark.parametrize("sync", ["barrier-free", "barrier"])
def test_softmax_synchronization_is_exact(kernel, R, sync):
    v = kernel.verify(R=R, sync=sync, schedules=4)
    assert v.ok and v.races == 0 and v.deadlocks == 0


def test_softmax_rows_sum_to_one(kernel):
    r = kernel.run(make_inputs(64, seed=9), R=2)
    np.testing.assert_allclose(r.outputs["Y"].sum(axis=1), 1.0, rtol=1e-5)
