"""`xlapy bench --torch`: `torch.compile(backend="xlapy")` beside Inductor and eager.

`nn.TransformerEncoderLayer` (BERT-sized layer: d_model 256, 4 heads, feed-forward
1024, batch 8 x 64 tokens; dropout 0 so every run computes the same thing),
its forward (under no_grad) and its forward+backward, each run three ways in one
process: compiled by xlapy's Dynamo backend, compiled by `torch.compile`'s
default backend (Inductor), and PyTorch eager. Medians of `time.perf_counter`
after a warm-up that compiles; the compile time of each is printed too.
The target is to be no slower than Inductor.
"""

from __future__ import annotations

import copy
import statistics
import time


def _torch():
    try:
        import torch  # optional: PyTorch, the framework whose compilers are compared
    except ImportError:
        return None
    return torch


def _median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _workloads(torch, model, x):
    def forward(m):
        def run():
            with torch.no_grad():
                m(x)
        return run

    def forward_backward(m):
        def run():
            m(x).sum().backward()
        return run

    return [("encoder forward", forward), ("encoder forward+backward", forward_backward)]


def run(tiny: bool = False) -> int:
    torch = _torch()
    if torch is None:
        print("PyTorch is not installed: pip install torch (e.g. torch==2.13.0, CPU)")
        return 1
    import torch._dynamo  # optional: part of PyTorch, for resetting compiled code

    batch, seq, d_model, heads, ff = (2, 8, 32, 2, 64) if tiny else (8, 64, 256, 4, 1024)
    repeats = 5 if tiny else 30
    torch.manual_seed(0)
    base = torch.nn.TransformerEncoderLayer(d_model, heads, ff, dropout=0.0, batch_first=True)
    x = torch.randn(batch, seq, d_model)
    print(f"nn.TransformerEncoderLayer d_model={d_model} heads={heads} ff={ff}, x "
          f"[{batch}, {seq}, {d_model}] f32, {torch.get_num_threads()} threads, "
          f"torch {torch.__version__}")
    print(f"{'workload':<26} {'peer':<22} {'median ms':>10} {'compile s':>10} "
          f"{'vs inductor':>12}")
    for name, make in _workloads(torch, base, x):
        rows = {}
        for peer, backend in (("torch.compile xlapy", "xlapy"),
                              ("torch.compile inductor", "inductor"), ("eager", None)):
            torch._dynamo.reset()
            model = copy.deepcopy(base)
            compiled = torch.compile(model, backend=backend) if backend else model
            fn = make(compiled)
            start = time.perf_counter()
            try:
                fn()
                fn()
            except Exception as e:  # noqa: BLE001 - e.g. Inductor without a C++ compiler
                print(f"{name:<26} {peer:<22} unavailable: {type(e).__name__}: {e}"[:160])
                continue
            compile_s = time.perf_counter() - start
            rows[peer] = (_median_seconds(fn, repeats), compile_s)
        inductor = rows.get("torch.compile inductor", (None,))[0]
        for peer, (seconds, compile_s) in rows.items():
            ratio = f"{seconds / inductor:>11.2f}x" if inductor else f"{'-':>12}"
            shown = f"{compile_s:>10.2f}" if peer != "eager" else f"{'-':>10}"
            print(f"{name:<26} {peer:<22} {seconds * 1e3:>10.3f} {shown} {ratio}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(run())
