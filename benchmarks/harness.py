"""The benchmark suite's harness: peers timed side by side, medians, ratios, floors.

A workload builds one callable per peer (NumPy op by op, xlapy eager, xlapy
`jit`, JAX's `jit`, PyTorch eager and `torch.compile`) on the same inputs. The harness warms
each up, then times them in turns — round after round, every peer once per
round — so a busy spell of the machine hits all peers alike, and reports
each one's median. A workload's floor is the time this machine's measured
limits allow it (bytes moved at the memory bandwidth, flops at BLAS's rate,
whichever is longer); the table shows the fraction of it each peer reaches.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

PEERS = ("numpy", "xlapy eager", "xlapy jit", "jax jit", "torch eager", "torch.compile")
"""The peers, in table order. Ratios are against NumPy op by op."""


@dataclass
class Timing:
    peer: str
    seconds: float | None = None
    """Median seconds per call; None when the peer did not run (see `note`)."""
    note: str = ""


@dataclass
class Result:
    name: str
    title: str
    unit: str
    timings: list[Timing] = field(default_factory=list)
    floor_seconds: float | None = None
    floor_note: str = ""
    compile_cold: float | None = None
    compile_cached: float | None = None
    peer_compile: dict[str, float] = field(default_factory=dict)
    """Seconds JAX's jit and torch.compile spent compiling: each one's first call
    less a timed call, with cold caches as xlapy's "compile cold"."""
    notes: list[str] = field(default_factory=list)
    rounds: dict[str, list[float]] = field(default_factory=dict)
    """Each peer's seconds per call in every round, in round order."""

    def seconds(self, peer: str) -> float | None:
        return next((t.seconds for t in self.timings if t.peer == peer), None)

    @property
    def baseline(self) -> str:
        """The peer ratios are taken against: NumPy op by op, else xlapy eager."""
        return "numpy" if self.seconds("numpy") else "xlapy eager"

    def best_peer(self) -> tuple[str, float] | None:
        """(name, seconds) of the fastest peer that is not xlapy."""
        timed = [(t.seconds, t.peer) for t in self.timings
                 if t.seconds and not t.peer.startswith("xlapy")]
        return (min(timed)[1], min(timed)[0]) if timed else None

    def round_ratios(self, peer: str, other: str) -> list[float]:
        """`peer`'s time over `other`'s, round by round: the two ran seconds apart,
        so a slow drift of the machine (a workload's medians moved by 10% over
        minutes here) cancels, and the spread shows whether a ratio near 1 is
        one peer ahead in every round or noise."""
        mine, theirs = self.rounds.get(peer, ()), self.rounds.get(other, ())
        return [a / b for a, b in zip(mine, theirs) if a and b]

    def speedup(self, peer: str) -> float | None:
        mine, base = self.seconds(peer), self.seconds(self.baseline)
        return base / mine if mine and base else None

    def to_json(self) -> dict:
        data = asdict(self)
        data["ratios_over"] = self.baseline
        data["speedups"] = {t.peer: self.speedup(t.peer) for t in self.timings
                                      if self.speedup(t.peer) is not None}
        if self.floor_seconds:
            data["fraction_of_floor"] = {t.peer: self.floor_seconds / t.seconds
                                         for t in self.timings if t.seconds}
        return data


SETTLE_SECONDS = 0.2
"""Pause before each peer's turn: OpenBLAS's and JAX's worker threads spin
for ~0.1 s after their calls, and a peer timed meanwhile loses the cores they
hold (a 1024^3 GEMM right after NumPy's took twice as long on 2 cores)."""


def time_in_turns(fns: dict[str, Callable[[], object]], *, min_time: float = 0.05,
                  rounds: int = 7, budget: float = 20.0, settle: float = SETTLE_SECONDS,
                  first_calls: dict[str, float] | None = None,
                  rounds_out: dict[str, list[float]] | None = None) -> dict[str, float]:
    """Median seconds per call of each function, all timed in turns.

    Each is called once to warm up, then in `rounds` rounds of enough calls
    to last `min_time`; slow functions get fewer rounds (at least 3) so the
    whole measurement stays near `budget` seconds. Each turn starts after a
    `settle` pause, so one peer's spinning threads do not slow the next, and
    one untimed call: the first call after an idle spell pays the thread
    pools' wake-up (1 ms here for PyTorch, a tiny workload's whole time).
    The warm-up calls' seconds go into `first_calls` when given, each round's
    seconds per call into `rounds_out`.
    """
    once, number = {}, {}
    for name, fn in fns.items():
        quiet(settle)
        start = time.perf_counter()
        fn()                                    # warm-up: compilation, caches, page faults
        if first_calls is not None:
            first_calls[name] = time.perf_counter() - start
        time.sleep(settle)
        once[name] = max(min(_seconds(fn) for _ in range(2)), 1e-7)   # torch.compile's
        number[name] = max(1, int(min_time / once[name]))            # second call is slow
    per_round = sum(once[n] * (number[n] + 1) for n in fns)
    rounds = max(3, min(rounds, int(budget / max(per_round, 1e-9))))
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            time.sleep(settle)
            fn()
            start = time.perf_counter()
            for _ in range(number[name]):
                fn()
            samples[name].append((time.perf_counter() - start) / number[name])
    if rounds_out is not None:
        rounds_out.update(samples)
    return {name: sorted(s)[len(s) // 2] for name, s in samples.items()}


def quiet(settle: float = SETTLE_SECONDS) -> None:
    """Before a first call that is timed (a compile): the garbage of earlier
    workloads collected and other peers' spinning threads settled. Python's
    full collections of the heap torch.compile and JAX leave took 270-530 ms
    each in a suite run (gc.callbacks), and landed in whichever compile ran
    when one fell due: xlapy's MNIST step once measured 453 ms instead of ~95,
    350 of them inside code emission."""
    gc.collect()
    time.sleep(settle)


def _seconds(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def table(results: list[Result]) -> str:
    """The terminal table: per workload, each peer's median and its ratio to
    NumPy, the floor and the fraction of it xlapy's jit reaches, xlapy's time
    against the fastest other peer's, and the compilers' compile times."""
    lines = []
    header = f"{'workload':<34}" + "".join(f"{p:>17}" for p in PEERS)
    lines += [header, "-" * len(header)]
    for r in results:
        cells = []
        for peer in PEERS:
            seconds = r.seconds(peer)
            cells.append(f"{format_seconds(seconds):>17}")
        lines.append(f"{r.title[:34]:<34}" + "".join(cells))
        ratios = []
        for peer in PEERS:
            s = r.speedup(peer)
            ratios.append(f"{(f'{s:.2f}x' if s else ''):>17}")
        base = "NumPy" if r.baseline == "numpy" else "eager"
        lines.append(f"{f'  per {r.unit}, speed-up vs {base}':<34}" + "".join(ratios))
        extra = []
        if r.floor_seconds and r.floor_seconds >= 1e-6:   # else the call itself is the floor
            jit = r.seconds("xlapy jit")
            reached = f", xlapy jit at {r.floor_seconds / jit:.0%} of it" if jit else ""
            extra.append(f"floor {format_seconds(r.floor_seconds)} ({r.floor_note}){reached}")
        best, jit = r.best_peer(), r.seconds("xlapy jit")
        if best and jit:
            extra.append(f"xlapy jit at {jit / best[1]:.2f}x the time of the best peer "
                         f"({best[0]})" + _by_round(r.round_ratios("xlapy jit", best[0])))
        if r.compile_cold is not None:
            peers = ", ".join(f"{p} {format_seconds(s)}" for p, s in r.peer_compile.items())
            jax = r.peer_compile.get("jax jit")
            versus = (f"; xlapy at {r.compile_cold / jax:.1f}x JAX's"
                      if jax and jax >= 1e-4 else "")
            extra.append(f"compile cold {format_seconds(r.compile_cold)}, from disk cache "
                         f"{format_seconds(r.compile_cached)}"
                         + (f"; peers cold: {peers}" if peers else "") + versus)
        for text in extra + r.notes:
            lines.append(f"  {text}")
    skipped = sorted({f"{t.peer}: {t.note}" for r in results for t in r.timings
                      if t.seconds is None and t.note})
    if skipped:
        lines += ["", "not run:"] + [f"  {s}" for s in skipped]
    return "\n".join(lines)


def _by_round(ratios: list[float]) -> str:
    """'; round by round 1.03x (0.97-1.08x over 7)': the median and range of the
    paired ratios ('' with fewer than three rounds)."""
    if len(ratios) < 3:
        return ""
    ordered = sorted(ratios)
    return (f"; round by round {ordered[len(ordered) // 2]:.2f}x "
            f"({ordered[0]:.2f}-{ordered[-1]:.2f}x over {len(ordered)})")


def require_matplotlib() -> None:
    """Fail before a long run, not after it, when --plot cannot be drawn."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        raise ValueError("--plot needs matplotlib: pip install 'xlapy[bench]'") from e


def plot(results: list[Result], path: str) -> None:
    """A bar chart of each peer's speed-up over NumPy op by op, per workload."""
    require_matplotlib()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    shown = [p for p in PEERS if p != "numpy" and any(r.speedup(p) for r in results)]
    rows = [r for r in results if any(r.speedup(p) for p in shown)]
    fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(rows)), 5))
    width = 0.8 / max(len(shown), 1)
    for i, peer in enumerate(shown):
        xs = [j + i * width for j in range(len(rows))]
        ax.bar(xs, [r.speedup(peer) or 0 for r in rows], width, label=peer)
    ax.set_xticks([j + width * (len(shown) - 1) / 2 for j in range(len(rows))])
    ax.set_xticklabels([r.name for r in rows], rotation=30, ha="right")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_ylabel("speed-up over NumPy op by op (or xlapy eager)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
