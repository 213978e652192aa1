"""The bfsync Python module: compiling, running, verifying, explaining, and
the results agreeing with the command line's."""
import json
import subprocess

import numpy as np
import pytest

import bfsync

MATMUL = "examples/matmul.bfk"

SMALL = """\
kernel scale(N: int) {
  hbm in X: f32[N * 4, 8];
  hbm out Y: f32[N * 4, 8];
  sbuf x: f32[4, 8];
  for i in 0 .. N {
    dma: load x, X[i, 0];
    act: mul x, x, 2.0;
    dma: store Y[i, 0], x;
  }
}
"""


def test_version_matches_the_command_line(bfsync_cli):
    out = subprocess.run([bfsync_cli, "--version"], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "bfsync " + bfsync.version() == "bfsync " + bfsync.__version__


def test_introspection(root):
    k = bfsync.compile_file(root / MATMUL)
    assert k.name == "matmul" and k.params == ("M", "N", "K")
    assert [(t.name, t.io, t.type) for t in k.tensors.values()] == [("A", "in", "f32"), ("B", "in", "f32"),
                                                                      ("C", "out", "f32")]
    assert k.shapes(M=2, N=1, K=3) == {"A": (128, 192), "B": (192, 64), "C": (128, 64)}


def test_run_from_a_string_against_numpy():
    k = bfsync.compile(SMALL, name="scale.bfk")
    x = np.arange(3 * 4 * 8, dtype=np.float32).reshape(12, 8) - 40.5
    r = k.run({"X": x}, N=3)
    assert r.ok and r.match and r.within_f64
    np.testing.assert_array_equal(r.outputs["Y"], 2 * x)
    assert set(r.outputs) == {"Y"} and r.outputs["Y"].dtype == np.float32
    assert r.waits > 0 and r.cycles is None and r.races is None


@pytest.mark.parametrize("sync", ["barrier-free", "barrier"])
@pytest.mark.parametrize("exec_", ["threads", "sim"])
def test_run_reports_what_run_json_does(root, bfsync_cli, sync, exec_):
    r = bfsync.compile_file(root / MATMUL).run(M=2, N=1, K=2, sync=sync, exec=exec_)
    cli = json.loads(subprocess.run([bfsync_cli, "run", str(root / MATMUL), "-p", "M=2", "-p", "N=1", "-p", "K=2",
                                     "--json", "--sync=" + sync, "--exec=" + exec_], capture_output=True,
                                    text=True, check=True).stdout)
    assert r.match == cli["outputs_match"] is True
    for key in ("waits_executed", "instructions", "bookkeeping", "barriers", "backpressure_held", "spills"):
        assert getattr(r, key) == cli[key], key
    for key in ("max_abs_err_f64", "max_rel_err_f64", "error_bound_ratio_f64"):
        assert getattr(r, key) == pytest.approx(cli[key], rel=1e-6), key
    if exec_ == "sim":
        assert (r.cycles, r.ideal, r.ideal_sync) == (cli["cycles"], cli["ideal_cycles"], cli["ideal_sync_cycles"])
        assert r.ideal_sync >= r.ideal > 0
    d = r.as_dict()
    assert d["sync"] == sync and d["params"] == {"M": 2, "N": 1, "K": 2}


def test_matmul_against_numpy(root):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((128, 192), dtype=np.float32)
    b = rng.standard_normal((192, 64), dtype=np.float32)
    r = bfsync.compile_file(root / MATMUL).run({"A": a, "B": b}, M=2, N=1, K=3)
    assert r.ok
    np.testing.assert_allclose(r.outputs["C"], a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-4)


def test_zero_trips_and_empty_tensors(root):
    k = bfsync.compile_file(root / MATMUL)
    r = k.run(M=1, N=1, K=0)  # an empty contraction: zeros
    assert r.ok and not r.outputs["C"].any()
    r = k.run({"A": np.zeros((0, 128), np.float32)}, M=0, N=2, K=2)
    assert r.ok and r.outputs["C"].shape == (0, 128)


def test_inout_tensor_updated_in_place():
    k = bfsync.compile("""kernel twice(N: int) {
  hbm inout Z: f32[N * 4, 4];
  sbuf z: f32[4, 4];
  for i in 0 .. N { dma: load z, Z[i, 0]; dve: add z, z, z; dma: store Z[i, 0], z; }
}""")
    z = np.full((8, 4), 1.5, np.float32)
    r = k.run({"Z": z}, N=2)
    assert r.ok and (r.outputs["Z"] == 3.0).all() and (z == 1.5).all()  # the caller's array is not written


def test_seeded_defaults_as_the_command_line(root):
    k = bfsync.compile_file(root / MATMUL)
    assert np.array_equal(k.run(M=1, N=1, K=1, seed=5).outputs["C"], k.run(M=1, N=1, K=1, seed=5).outputs["C"])
    assert not np.array_equal(k.run(M=1, N=1, K=1, seed=5).outputs["C"], k.run(M=1, N=1, K=1, seed=6).outputs["C"])


def test_check_and_jitter(root):
    k = bfsync.compile_file(root / MATMUL)
    r = k.run(M=1, N=2, K=2, check=True, jitter=True, seed=3)
    assert r.ok and r.races == 0


def test_verify_and_explain(root, bfsync_cli):
    k = bfsync.compile_file(root / MATMUL)
    v = k.verify(M=2, N=1, K=2, schedules=3)
    assert v.ok and v.races == 0 and v.deadlocks == 0 and v.schedules == 3
    cli = json.loads(subprocess.run([bfsync_cli, "verify", str(root / MATMUL), "-p", "M=2", "-p", "N=1", "-p", "K=2",
                                     "--json", "--schedules", "3"], capture_output=True, text=True,
                                    check=True).stdout.splitlines()[-1])
    assert (v.waits, v.instructions, v.redundant) == (cli["waits"], cli["instructions"], cli["redundant"])
    for sync in ("barrier-free", "barrier"):
        text = subprocess.run([bfsync_cli, "compile", str(root / MATMUL), "--explain", "--sync=" + sync],
                              capture_output=True, text=True, check=True).stdout
        assert k.explain(sync) == text


def test_narrow_types_in_and_out(root):
    k = bfsync.compile_file(root / "examples/rmsnorm_bf16.bfk")
    assert k.tensors["X"].type == "bf16"
    rng = np.random.default_rng(1)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    g = rng.standard_normal((1, 64)).astype(np.float32)
    r = k.run({"X": x, "G": g}, R=1)  # float32 in: rounded to nearest even
    assert r.ok and r.outputs["Y"].dtype == np.float32
    # the same values as bf16 bit patterns (the upper halves, after rounding) give the same run
    bits = lambda a: ((a.view(np.uint32) + 0x7FFF + ((a.view(np.uint32) >> 16) & 1)) >> 16).astype(np.uint16)
    rb = k.run({"X": bits(x), "G": bits(g)}, R=1, narrow="bits")
    assert rb.ok and rb.outputs["Y"].dtype == np.uint16
    widened = (rb.outputs["Y"].astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(widened, r.outputs["Y"])
    # the f32 outputs are bf16 values: their low halves are zero
    assert not (r.outputs["Y"].view(np.uint32) & 0xFFFF).any()


def test_fp16_takes_numpy_float16():
    k = bfsync.compile("""kernel h(N: int) {
  hbm in X: fp16[4, 4];
  hbm out Y: fp16[4, 4];
  sbuf x: fp16[4, 4];
  dma: load x, X[0, 0];
  act: mul x, x, 3.0;
  dma: store Y[0, 0], x;
}""")
    x = (np.arange(16, dtype=np.float16).reshape(4, 4) / np.float16(7))
    r = k.run({"X": x}, N=1, narrow="bits")
    assert r.outputs["Y"].dtype == np.float16
    np.testing.assert_array_equal(r.outputs["Y"], (x.astype(np.float32) * 3).astype(np.float16))
    r32 = k.run({"X": x.astype(np.float32)}, N=1)  # float32 in, rounded to fp16
    np.testing.assert_array_equal(r32.outputs["Y"], r.outputs["Y"].astype(np.float32))


def test_warnings_are_kept(root):
    k = bfsync.compile_file(root / "tests/bad_run/uninit.bfk")
    assert "warning: 'add' reads tile s before anything writes it" in k.warnings
    assert bfsync.compile_file(root / MATMUL).warnings == ""


def test_kernel_can_be_closed_and_used_as_context(root):
    with bfsync.compile_file(root / MATMUL) as k:
        assert k.run(M=1, N=1, K=1).ok
    with pytest.raises(ValueError, match="closed"):
        k.run(M=1, N=1, K=1)


def test_timing_only_simulator(root, bfsync_cli):
    k = bfsync.compile_file(root / MATMUL)
    t = k.run(M=4, N=2, K=3, exec="timing-only", sync="barrier")
    full = k.run(M=4, N=2, K=3, exec="sim", sync="barrier")
    cli = json.loads(subprocess.run([bfsync_cli, "run", str(root / MATMUL), "-p", "M=4", "-p", "N=2", "-p", "K=3",
                                     "--json", "--exec=sim", "--timing-only", "--sync=barrier"], capture_output=True,
                                    text=True, check=True).stdout)
    assert (t.cycles, t.waits, t.ideal, t.ideal_sync) == (full.cycles, full.waits, full.ideal, full.ideal_sync)
    assert (t.cycles, t.waits, t.ideal) == (cli["cycles"], cli["waits_executed"], cli["ideal_cycles"])
    assert t.timing_only and t.outputs == {} and t.match is None and not t.ok
    with pytest.raises(bfsync.UsageError) as e:
        k.run({"A": np.zeros((256, 192), np.float32)}, M=4, N=2, K=3, exec="timing-only")
    assert "no float tensor" in str(e.value) and e.value.diagnostics[0].line == 22
    with pytest.raises(bfsync.UsageError, match="race checker"):
        k.run(M=1, N=1, K=1, exec="timing-only", check=True)


@pytest.mark.parametrize("sync", ["barrier-free", "barrier", "unrolled", "paper"])
def test_every_sync_mode(root, bfsync_cli, sync):
    """Every mode of run --sync, with the figures the command line reports."""
    k = bfsync.compile_file(root / MATMUL)
    r = k.run(M=1, N=2, K=2, sync=sync, exec="sim")
    cli = json.loads(subprocess.run([bfsync_cli, "run", str(root / MATMUL), "-p", "M=1", "-p", "N=2", "-p", "K=2",
                                     "--json", "--exec=sim", "--sync=" + sync], capture_output=True, text=True,
                                    check=True).stdout)
    assert r.ok and (r.waits, r.cycles) == (cli["waits_executed"], cli["cycles"])
    assert k.verify(M=1, N=2, K=2, sync=sync).ok
