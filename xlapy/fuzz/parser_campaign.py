"""The parser fuzzing campaign: mutated corpus texts thrown at `xlapy.hlo.parse`.

The contract under test (issue 14): whatever the text, parsing and then
verifying it ends in a module, a ParseError or a VerifierError that names a
line and a column; never another exception, a crash, or more than a second.
Each mutation (see `mutations`) is one of four outcomes:

- `ok`: it parsed and verified;
- `parse_error` / `verifier_error`: refused, with a line and column >= 1;
- `failure`: any other exception, an error without a position, more than
  `TIME_LIMIT` seconds (confirmed by a second run alone), a hang or a crash.

Time is the worker's CPU time (user and system, so page faults count): on a
shared machine wall time measures the neighbours too. Both are reported.

Mutations run in batches in sandboxed child processes (`Sandbox`), whose
address space is capped, so a hang, a crash or a runaway allocation is
counted, not fatal: a batch that hangs or crashes is rerun one mutation at a
time to name the culprit. Errors that merely wrap an internal exception
(shape inference's "malformed operands" catch-all, say) count as refusals but
are listed as `masked`, as leads. A failure names its seed and index, and
`python -m xlapy.fuzz.parser_campaign --seed S --show INDEX` rebuilds it.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import traceback
from collections import Counter

from xlapy.errors import ParseError, VerifierError, XlapyError
from xlapy.fuzz import parser_campaign
from xlapy.fuzz.mutations import KINDS, mutate
from xlapy.fuzz.sandbox import Sandbox
from xlapy.hlo import parse, verify

TIME_LIMIT = 1.0
"""Seconds one mutation may take to parse and verify."""
MEMORY_LIMIT = 3 << 30
"""Address space of a worker: an allocation the parser should never make fails fast."""
OUTCOMES = ("ok", "parse_error", "verifier_error", "failure")
_BATCH = 100
_BATCH_TIMEOUT = 120.0
_SINGLE_TIMEOUT = 20.0
_KEEP = 200
"""Failures and masked errors listed in a summary (all are counted)."""
_RECURSION = "nested too deeply to parse"
"""parse_module's message for a RecursionError it caught: refused, but a lead."""


def check_text(data: str | bytes) -> tuple[str, str, str]:
    """(outcome, problem, error) for one input: parse it, then verify the module."""
    try:
        verify(parse(data))
    except (ParseError, VerifierError) as e:
        outcome = "parse_error" if isinstance(e, ParseError) else "verifier_error"
        if not (getattr(e, "line", 0) >= 1 and getattr(e, "column", 0) >= 1):
            return "failure", "no position", _describe(e)
        masked = _internal_cause(e) or ("RecursionError" if _RECURSION in str(e) else "")
        return outcome, f"masked {masked}" if masked else "", _describe(e)
    except BaseException as e:  # noqa: BLE001 - every other exception is the finding
        return "failure", "exception", _describe(e) + "\n" + _traceback_tail(e)
    return "ok", "", ""


def run_batch(seed: int, start: int, stop: int, memory_limit: int = MEMORY_LIMIT) -> list:
    """In a worker: (index, kind, outcome, problem, error, cpu seconds, wall seconds)
    per mutation."""
    _limit_memory(memory_limit)
    results = []
    for index in range(start, stop):
        try:
            mutation = mutate(seed, index)
        except Exception as e:  # noqa: BLE001 - a bug of the fuzzer, reported as one
            results.append((index, "?", "failure", "mutation", _describe(e) + "\n" +
                            _traceback_tail(e), 0.0, 0.0))
            continue
        wall, cpu = time.perf_counter(), time.process_time()
        outcome, problem, error = check_text(mutation.data)
        results.append((index, mutation.kind, outcome, problem, error,
                        time.process_time() - cpu, time.perf_counter() - wall))
    return results


def run_parser_campaign(count: int, seed: int = 0, jobs: int = 2, log=print) -> dict:
    """Run mutations 0..count-1 of `seed` on `jobs` workers; the summary (see `main`)."""
    campaign = _Campaign(count, seed, log)
    started = time.perf_counter()
    threads = [threading.Thread(target=campaign.work, daemon=True) for _ in range(max(1, jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return campaign.summary(time.perf_counter() - started, jobs)


class _Campaign:
    """Batches shared by the worker threads, and the tallies of their results."""

    def __init__(self, count: int, seed: int, log):
        self.seed, self.count, self.log = seed, count, log
        self.batches = [(s, min(s + _BATCH, count)) for s in range(0, count, _BATCH)][::-1]
        self.lock = threading.Lock()
        self.outcomes: Counter = Counter()
        self.kinds: dict[str, Counter] = {kind: Counter() for kind in KINDS}
        self.failures: list[dict] = []
        self.masked: list[dict] = []
        self.masked_count = 0
        self.slowest = {"seconds": 0.0}
        self.slowest_wall = {"seconds": 0.0}
        self.done = 0
        self.restarts = 0
        self.next_report = 0.1
        self.started = time.perf_counter()

    def work(self) -> None:
        with Sandbox() as sandbox:
            while True:
                with self.lock:
                    if not self.batches:
                        break
                    start, stop = self.batches.pop()
                for row in self._run(sandbox, start, stop):
                    self._record(sandbox, *row)
                self._progress(stop - start)
            with self.lock:
                self.restarts += sandbox.restarts

    def _run(self, sandbox: Sandbox, start: int, stop: int) -> list:
        timeout = _BATCH_TIMEOUT if stop - start > 1 else _SINGLE_TIMEOUT
        result = sandbox.run(_job(), self.seed, start, stop, timeout=timeout)
        if result.status == "ok":
            return result.value
        if stop - start == 1:  # this mutation alone hung or crashed the worker
            problem = result.status if result.status in ("hang", "crash") else "exception"
            return [(start, self._where(start)["kind"], "failure", problem,
                     result.error + "\n" + result.detail[-2000:], result.seconds,
                     result.seconds)]
        return [row for index in range(start, stop) for row in self._run(sandbox, index,
                                                                          index + 1)]

    def _record(self, sandbox, index, kind, outcome, problem, error, seconds, wall) -> None:
        if outcome != "failure" and seconds > TIME_LIMIT:
            again = sandbox.run(_job(), self.seed, index, index + 1, timeout=_SINGLE_TIMEOUT)
            retimed = again.value[0][5] if again.ok else float("inf")
            if retimed > TIME_LIMIT:
                outcome, problem = "failure", "slow"
                error = f"{seconds:.2f} s, then {retimed:.2f} s alone; {error}"
            seconds = min(seconds, retimed)
        with self.lock:
            self.outcomes[outcome] += 1
            self.kinds.setdefault(kind, Counter())[outcome] += 1
            if seconds > self.slowest["seconds"]:
                self.slowest = {"seconds": seconds, "index": index, "kind": kind}
            if wall > self.slowest_wall["seconds"]:
                self.slowest_wall = {"seconds": wall, "index": index, "kind": kind}
            row = {"index": index, "kind": kind, "problem": problem, "error": error[:3000],
                   "seconds": round(seconds, 4), "wall_seconds": round(wall, 4)}
            if outcome == "failure":
                self._keep(self.failures, row)
            elif problem.startswith("masked"):
                self.masked_count += 1
                self._keep(self.masked, row)

    def _keep(self, rows: list, row: dict) -> None:
        if len(rows) < _KEEP:
            where = self._where(row["index"])
            rows.append({**row, "source": where["source"], "note": where["note"]})

    def _where(self, index: int) -> dict:
        """Kind, source and note of a mutation, for a report (made again here)."""
        try:
            mutation = mutate(self.seed, index)
        except Exception:  # noqa: BLE001 - the failure is the mutation itself
            return {"kind": "?", "source": "?", "note": "the mutation itself failed"}
        return {"kind": mutation.kind, "source": mutation.source, "note": mutation.note[:300]}

    def _progress(self, finished: int) -> None:
        with self.lock:
            self.done += finished
            if self.done < self.next_report * self.count:
                return
            while self.next_report * self.count <= self.done:
                self.next_report += 0.1
            elapsed = time.perf_counter() - self.started
            message = (f"parser fuzz: {self.done}/{self.count} mutations, "
                       f"{self.outcomes['failure']} failures, {elapsed:.0f} s")
        self.log(message)

    def summary(self, seconds: float, jobs: int) -> dict:
        return {
            "seed": self.seed, "count": self.count, "jobs": jobs, "seconds": round(seconds, 1),
            "outcomes": {name: self.outcomes[name] for name in OUTCOMES},
            "kinds": {kind: {name: tally[name] for name in OUTCOMES if tally[name]}
                      for kind, tally in self.kinds.items()},
            "slowest": self.slowest,
            "slowest_wall": self.slowest_wall,
            "failures": sorted(self.failures, key=lambda row: row["index"]),
            "masked_count": self.masked_count,
            "masked": sorted(self.masked, key=lambda row: row["index"]),
            "restarts": self.restarts,
            "reproduce": f"python -m xlapy.fuzz.parser_campaign --seed {self.seed} --show INDEX",
        }


# -- helpers ------------------------------------------------------------------------------
def _job():
    """`run_batch` by its importable name, also when this file runs as `__main__`
    (a worker cannot unpickle `__main__.run_batch`)."""
    return parser_campaign.run_batch


def _limit_memory(limit: int) -> None:
    import resource  # POSIX only: CPU time of this process

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft == resource.RLIM_INFINITY or soft > limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _internal_cause(error: BaseException) -> str:
    """The first exception in `error`'s chain of causes that xlapy did not raise on purpose."""
    seen = set()
    cause = error.__cause__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if not isinstance(cause, XlapyError):
            return type(cause).__name__
        cause = cause.__cause__
    return ""


def _describe(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}"
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates
    return text if len(text) <= 1000 else text[:1000] + "..."


def _traceback_tail(error: BaseException) -> str:
    lines = traceback.format_exception(type(error), error, error.__traceback__)
    return "".join(lines)[-2000:]


def format_summary(summary: dict) -> str:
    """The summary as a few lines of text."""
    outcomes = ", ".join(f"{name} {summary['outcomes'][name]}" for name in OUTCOMES)
    slowest, wall = summary["slowest"], summary["slowest_wall"]
    lines = [f"parser fuzz, seed {summary['seed']}: {summary['count']} mutations in "
             f"{summary['seconds']} s on {summary['jobs']} workers",
             f"  outcomes: {outcomes}",
             f"  slowest: {slowest['seconds']:.3f} s of CPU (index {slowest.get('index')}, "
             f"{slowest.get('kind')}); {wall['seconds']:.3f} s of wall time (index "
             f"{wall.get('index')}, {wall.get('kind')})",
             f"  masked internal errors: {summary['masked_count']}; worker restarts: "
             f"{summary['restarts']}"]
    for row in summary["failures"][:20]:
        first = row["error"].splitlines()[0] if row["error"] else ""
        lines.append(f"  FAIL index {row['index']} ({row['kind']}, {row['source']}: "
                     f"{row['note'][:80]}): {row['problem']}: {first[:200]}")
    if summary["failures"]:
        lines.append(f"  reproduce: {summary['reproduce']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """`--count N --seed S [--jobs J] [--json PATH]`, or `--show INDEX` to print one
    mutation (its bytes on stdout, its outcome on stderr). Exit status 1 on failures."""
    parser = argparse.ArgumentParser(prog="python -m xlapy.fuzz.parser_campaign",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", default=None, help="write the summary here")
    parser.add_argument("--show", type=int, default=None, metavar="INDEX",
                        help="print mutation INDEX of the seed and check it here")
    args = parser.parse_args(argv)
    if args.show is not None:
        mutation = mutate(args.seed, args.show)
        data = mutation.data if isinstance(mutation.data, bytes) else \
            mutation.data.encode("utf-8", "surrogatepass")
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        outcome, problem, error = check_text(mutation.data)
        print(f"\n[{mutation.kind} of {mutation.source}: {mutation.note}]\n"
              f"[{outcome}{': ' + problem if problem else ''}] {error}", file=sys.stderr)
        return int(outcome == "failure")
    summary = run_parser_campaign(args.count, args.seed, args.jobs,
                                  log=lambda line: print(line, file=sys.stderr))
    print(format_summary(summary))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)
    return int(summary["outcomes"]["failure"] > 0)


if __name__ == "__main__":
    sys.exit(main())
