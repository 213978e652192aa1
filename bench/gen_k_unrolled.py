#!/usr/bin/env python3
"""gen_k_unrolled.py: writes bench/paper/matmul_k_unrolled.bfk, the paper's
tiled_matmul with its K = 2048 contraction (16 tiles of 128) written out.
Run from the repository root: python3 bench/gen_k_unrolled.py"""
import os

K = 16  # contraction tiles of 128: the paper's K = 2048

HEADER = """// matmul_k_unrolled.bfk: the paper's tiled_matmul with the K loop unrolled
// (two loops): the tiling of bench/paper/tiled_matmul.bfk (the NKI
// matrix-multiplication tutorial's nki_matmul_tiled_: [128, 512] output
// tiles, contraction tiles of 128) at the paper's K = 2048 written out, 16
// contraction steps per output tile: its 32 loads go to the DMA queues in
// turn, its 16 matmuls accumulate into a two-slot PSUM tile, act copies
// the result out and dma stores it; the tiles of output tile n + 1 (slots
// 16 (n % 2) ..) load while tile n's matmuls run. Today's `matmul` form
// is used (issue 22's nc_matmul has not landed). This file is generated
// (bench/gen_k_unrolled.py); edit that.
// The paper's size is 2048^3: M = 16, N = 4.
// params: M=2 N=2
// params: M=1 N=1
// params: M=0 N=2
// params: M=2 N=3
// bench: M=8 N=4
// paper: M=16 N=4
kernel matmul_k_unrolled(M: int, N: int) {"""


def kernel():
    out = [HEADER,
           f"  hbm in  A: f32[M * 128, {K * 128}];",
           f"  hbm in  B: f32[{K * 128}, N * 512];",
           "  hbm out C: f32[M * 128, N * 512];",
           f"  sbuf a[{2 * K}]: f32[128, 128];",
           f"  sbuf b[{2 * K}]: f32[128, 512];",
           "  psum acc[2]: f32[128, 512];",
           "  sbuf c[2]: f32[128, 512];",
           "",
           "  for m in 0 .. M {",
           "    for n in 0 .. N {"]
    for k in range(K):
        out.append(f"      dma: load a[{K} * (n % 2) + {k}], A[m, {k}];")
        out.append(f"      dma: load b[{K} * (n % 2) + {k}], B[{k}, n];")
    for k in range(K):
        op = "matmul" if k == 0 else "matmul_acc"
        out.append(f"      pe: {op} acc[n % 2], a[{K} * (n % 2) + {k}], b[{K} * (n % 2) + {k}];")
    out += ["      act: copy c[n % 2], acc[n % 2];",
            "      dma: store C[m, n], c[n % 2];",
            "    }",
            "  }",
            "}"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "paper", "matmul_k_unrolled.bfk")
    with open(path, "w") as f:
        f.write(kernel())
