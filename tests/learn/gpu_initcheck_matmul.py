"""Does compute-sanitizer's initcheck see the writes of the GPU's matrix multiplies? Not
collected by pytest; run it on the GPU machine under the tool (docs/faults.md row 18):

    compute-sanitizer --tool initcheck --print-limit 20 python tests/learn/gpu_initcheck_matmul.py [WORD...]

(WORD...: only the cases whose names hold one of the words, e.g. `backward`.)

Each case writes a fresh (torch.empty) output with one kernel and reads it with another,
then checks every value against the same product on the CPU: a value that matches was
written. A case that matches and is reported by the tool is a write the tool did not see
(its report is then about the tool, not about unwritten memory). The cases run in order
and each prints its name first, so the tool's reports fall between the names.
"""

from __future__ import annotations

import sys

import torch


def product(dtype: torch.dtype, rows: int, inner: int, cols: int, seed: int):
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(rows, inner, generator=gen).to(dtype)
    w = torch.randn(cols, inner, generator=gen).to(dtype)
    return a, w, a.double() @ w.double().T


def check(name: str, dtype: torch.dtype, write, shape: tuple[int, int, int] = (512, 512, 256)) -> bool:
    """write(a, w, out) fills out on the device; read it with a cast, compare on the CPU.
    shape: rows, inner and columns of the product a @ w.T."""
    print(f"case {name}: start", flush=True)
    a, w, expected = product(dtype, *shape, seed=len(name))
    out = torch.empty(a.shape[0], w.shape[0], dtype=dtype, device="cuda")
    write(a.cuda(), w.cuda(), out)
    got = out.float().cpu().double()  # the cast is the read the tool reports
    torch.cuda.synchronize()
    tolerance = 0.05 * expected.abs().max().item() if dtype != torch.float32 else 1e-3
    ok = bool(torch.isfinite(got).all()) and (got - expected).abs().max().item() <= tolerance
    print(f"case {name}: every value written and right: {ok}", flush=True)
    return ok


CASES = {
    # the product made on the CPU and copied in: the control, which the tool must not report
    "host copy": (torch.bfloat16, lambda a, w, out: out.copy_((a.cpu().double() @ w.cpu().double().T).to(out.dtype))),
    # the learner's Linear layers under bf16 autocast: a cuBLAS(Lt) GEMM writes out
    "bf16 matmul": (torch.bfloat16, lambda a, w, out: torch.matmul(a, w.T, out=out)),
    "bf16 linear": (torch.bfloat16, lambda a, w, out: out.copy_(torch.nn.functional.linear(a, w))),
    "fp32 matmul": (torch.float32, lambda a, w, out: torch.matmul(a, w.T, out=out)),
}
# The backward of the actor's Linear layers (batch 512): the gradient of a layer's input is
# grad_out @ W with W stored (out, in), both contiguous: here that W is w.T made contiguous.
BACKWARD_SHAPES = {"bf16 mm backward 128->256": (512, 128, 256), "bf16 mm backward 256->512": (512, 256, 512)}


def backward_write(a, w, out):
    torch.mm(a, w.T.contiguous(), out=out)


def main() -> int:
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}", flush=True)
    cases = {name: (dtype, write, (512, 512, 256)) for name, (dtype, write) in CASES.items()}
    for name, shape in BACKWARD_SHAPES.items():
        cases[name] = (torch.bfloat16, backward_write, shape)
        cases[name + " (fresh out, mm)"] = (torch.bfloat16, lambda a, w, out: out.copy_(torch.mm(a, w.T.contiguous())),
                                            shape)
    # the tool's print limit counts every case's reports: name the cases to run, if not all
    wanted = [name for name in cases if not sys.argv[1:] or any(word in name for word in sys.argv[1:])]
    results = {name: check(name, cases[name][0], cases[name][1], cases[name][2]) for name in wanted}
    print("SUMMARY", results, flush=True)
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
