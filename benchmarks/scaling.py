"""Counting in parallel and the merge loop on a corpus far larger than TinyShakespeare.

    uv run python benchmarks/make_python_corpus.py /tmp/pycorpus
    uv run python benchmarks/scaling.py /tmp/pycorpus

Every measurement runs in a fresh process, so peak memory (``ru_maxrss`` of the
process, and of its worker processes once they have exited) belongs to that run alone:

* counting (``count_files``) with each ``--workers`` value, ``--repeats`` times: the
  median time, and a digest of the counts file it would write, which must be the same
  for every worker count;
* training (counting, then the merge loop at ``--vocab-size``) once per worker count:
  both phases' times, peak memory, and the artifact's digest, which must be the same.

Prints a markdown table and writes everything as JSON (``--json``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DEFAULT_JSON = Path(tempfile.gettempdir()) / "bpetite-scaling.json"


# --------------------------------------------------------------------------- in the child


def _peak_mib() -> dict[str, float]:
    """Peak resident memory of this process and of its largest finished child, in MiB."""
    scale = 1024 if sys.platform != "darwin" else 1024 * 1024  # KiB on Linux, bytes on macOS
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"parent_mib": own * scale / 2**20, "workers_mib": children * scale / 2**20}


def _child(spec: dict[str, Any]) -> dict[str, Any]:
    from bpetite import Tokenizer
    from bpetite.corpus._counting import count_files
    from bpetite.corpus._counts_file import dumps_counts

    started = time.perf_counter()
    counts = count_files([spec["corpus"]], workers=spec["workers"])
    counted = time.perf_counter()
    result: dict[str, Any] = {
        "count_s": counted - started,
        "distinct_chunks": len(counts),
        "total_chunks": sum(counts.values()),
        "counts_sha256": hashlib.sha256(dumps_counts(counts)).hexdigest(),
    }
    if spec["job"] == "train":
        tokenizer = Tokenizer.train_from_counts(counts, spec["vocab_size"])
        result["merge_s"] = time.perf_counter() - counted
        result["merges"] = len(tokenizer.merges)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder, "t.json")
            tokenizer.save(str(path))
            result["artifact_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    result.update(_peak_mib())
    return result


# --------------------------------------------------------------------------- in the parent


def _run_child(spec: dict[str, Any]) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(spec)],
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"benchmark child failed: {completed.stderr}")
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


def _machine() -> dict[str, Any]:
    model = platform.processor() or "unknown"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "cpu": model,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def _corpus(path: Path) -> dict[str, Any]:
    files = [p for p in path.rglob("*") if p.is_file() and not p.is_symlink()]
    return {"path": str(path), "files": len(files), "bytes": sum(p.stat().st_size for p in files)}


def measure(corpus: Path, workers: Sequence[int], repeats: int, vocab_size: int) -> dict[str, Any]:
    report: dict[str, Any] = {
        "machine": _machine(),
        "corpus": _corpus(corpus),
        "vocab_size": vocab_size,
        "counting": {},
        "training": {},
    }
    for count in workers:
        runs = []
        for _ in range(repeats):
            runs.append(_run_child({"job": "count", "corpus": str(corpus), "workers": count}))
            print(f"count, {count} worker(s): {runs[-1]['count_s']:.2f} s", file=sys.stderr)
        report["counting"][str(count)] = {
            "runs_s": [run["count_s"] for run in runs],
            "median_s": statistics.median(run["count_s"] for run in runs),
            "distinct_chunks": runs[0]["distinct_chunks"],
            "total_chunks": runs[0]["total_chunks"],
            "counts_sha256": sorted({run["counts_sha256"] for run in runs}),
            "peak_parent_mib": max(run["parent_mib"] for run in runs),
            "peak_worker_mib": max(run["workers_mib"] for run in runs),
        }
    for count in workers:
        spec = {"job": "train", "corpus": str(corpus), "workers": count, "vocab_size": vocab_size}
        report["training"][str(count)] = run = _run_child(spec)
        print(
            f"train, {count} worker(s): count {run['count_s']:.2f} s, merge {run['merge_s']:.2f} s",
            file=sys.stderr,
        )
    counting = report["counting"]
    training = report["training"]
    report["identical_counts"] = (
        len({h for c in counting.values() for h in c["counts_sha256"]}) == 1
    )
    report["identical_artifacts"] = len({t["artifact_sha256"] for t in training.values()}) == 1
    first, last = str(workers[0]), str(workers[-1])
    report["count_speedup"] = counting[first]["median_s"] / counting[last]["median_s"]
    report["peak_rss_mib"] = max(
        max(c["peak_parent_mib"], c["peak_worker_mib"]) for c in counting.values()
    )
    report["peak_rss_mib"] = max(
        report["peak_rss_mib"], *(max(t["parent_mib"], t["workers_mib"]) for t in training.values())
    )
    return report


def markdown(report: dict[str, Any]) -> str:
    machine, corpus = report["machine"], report["corpus"]
    lines = [
        f"Machine: {machine['cpu']}, {machine['cpus']} CPUs, Python {machine['python']} "
        f"({machine['platform']}).",
        f"Corpus: {corpus['files']:,} files, {corpus['bytes']:,} bytes; "
        f"{next(iter(report['counting'].values()))['distinct_chunks']:,} distinct chunks.",
        "",
        "| workers | counting, median (s) | runs (s) | peak RSS parent / worker (MiB) |",
        "| ---: | ---: | --- | ---: |",
    ]
    for workers, c in report["counting"].items():
        runs = ", ".join(f"{s:.2f}" for s in c["runs_s"])
        lines.append(
            f"| {workers} | {c['median_s']:.2f} | {runs} | "
            f"{c['peak_parent_mib']:.0f} / {c['peak_worker_mib']:.0f} |"
        )
    names: list[str] = list(report["counting"])
    first, last = names[0], names[-1]
    lines += [
        "",
        f"Counting speedup, {last} workers vs {first}: {report['count_speedup']:.2f}x; "
        "identical counts: "
        f"{report['identical_counts']}.",
        "",
        f"| workers | training at vocab {report['vocab_size']}: counting (s) | merge loop (s) "
        "| merges | peak RSS parent / worker (MiB) |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    for workers, t in report["training"].items():
        lines.append(
            f"| {workers} | {t['count_s']:.2f} | {t['merge_s']:.2f} | {t['merges']} | "
            f"{t['parent_mib']:.0f} / {t['workers_mib']:.0f} |"
        )
    lines += [
        "",
        f"Identical artifacts: {report['identical_artifacts']}; peak RSS of any process: "
        f"{report['peak_rss_mib']:.0f} MiB.",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="?", type=Path, help="a directory of UTF-8 files")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--vocab-size", type=int, default=2048)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write JSON")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_child(json.loads(args.child))))
        return 0
    if args.corpus is None or not args.corpus.is_dir():
        parser.error("give the corpus directory (benchmarks/make_python_corpus.py makes one)")
    report = measure(args.corpus.resolve(), args.workers, args.repeats, args.vocab_size)
    args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(markdown(report))
    print(f"\n(JSON: {args.json})")
    ok = report["identical_counts"] and report["identical_artifacts"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
