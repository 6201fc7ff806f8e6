"""Train TinyShakespeare with bpetite, rustbpe, bpeasy and HF, with the GPT-2 and cl100k patterns.

    uv run --group bench python benchmarks/peer_training.py            # vocab 32000, 5 rounds
    uv run --group bench python benchmarks/peer_training.py --quick    # vocab 2000, 1 round

All four trainers run in this process on the corpus already in memory as one document,
interleaved round by round, each after a full collection. bpetite's figure is
``count_chunks`` (one process) plus ``Tokenizer.train_from_counts``; rustbpe counts
with rayon on every core. rustbpe breaks ties like bpetite, so its merges must be
identical (exit status 1 otherwise); bpeasy's and HF's are compared and reported.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __name__ == "__main__":
    # Run as a script: put the repository root on the path for `benchmarks` and `tests`.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import _peers
from benchmarks._timing import Stat
from bpetite import PRESETS

PATTERNS = ("gpt2", "cl100k")
DEFAULT_VOCAB = 32000


def log(message: str) -> None:
    print(f"[peer-training] {message}", file=sys.stderr, flush=True)


def run(text: str, *, vocab_size: int = DEFAULT_VOCAB, rounds: int = 5) -> dict[str, Any]:
    """Train `text` with every installed trainer and pattern `rounds` times, interleaved.

    Returns a JSON-ready dict: per pattern, each trainer's times (and bpetite's
    phases), the merge comparison with bpetite's first run, and ``failures``.
    """
    trainers = [name for name in _peers.TRAINERS if _peers.installed(_peers.TRAINER_PACKAGES[name])]
    samples: dict[tuple[str, str], list[_peers.Trained]] = {
        (pattern, name): [] for pattern in PATTERNS for name in trainers
    }
    for round_index in range(rounds):
        for pattern in PATTERNS:
            for name in trainers:
                log(f"{pattern}: {name} (round {round_index + 1}/{rounds})")
                gc.collect()
                trained = _peers.TRAINERS[name]([text], vocab_size, PRESETS[pattern])
                if round_index:
                    # Only the first run's merges are compared; drop the others early.
                    trained = _peers.Trained(trained.seconds, [], trained.phases)
                samples[pattern, name].append(trained)
    failures: list[str] = []
    sections: dict[str, Any] = {}
    for pattern in PATTERNS:
        reference = samples[pattern, "bpetite"][0].pairs
        rows: dict[str, Any] = {}
        for name in trainers:
            runs = samples[pattern, name]
            row: dict[str, Any] = {
                "merges": len(runs[0].pairs),
                "seconds": Stat(tuple(run.seconds for run in runs)).to_json(),
            }
            if runs[0].phases:
                row["phases"] = {
                    phase: Stat(tuple(run.phases[phase] for run in runs)).to_json()
                    for phase in runs[0].phases
                }
            if name != "bpetite":
                comparison = _peers.compare_merges(reference, runs[0].pairs)
                required = name in _peers.SAME_TIE_BREAK
                row["merges_vs_bpetite"] = {**comparison.to_json(), "required": required}
                if required and not comparison.identical:
                    failures.append(
                        f"{pattern} pattern: {name}'s merges differ from bpetite's: "
                        f"{comparison.describe()}"
                    )
            rows[name] = row
        sections[pattern] = rows
    return {
        "corpus_bytes": len(text.encode("utf-8")),
        "vocab_size": vocab_size,
        "rounds": rounds,
        "patterns": sections,
        "failures": failures,
    }


_LABELS = {"bpetite": "bpetite", "rustbpe": "rustbpe", "bpeasy": "bpeasy", "hf": "HF tokenizers"}


def render(result: dict[str, Any]) -> str:
    """The result as a markdown section."""
    from benchmarks._report import spread

    lines = [
        f"## Training TinyShakespeare against the Rust trainers (vocab {result['vocab_size']})",
        "",
        f"In one process, the corpus in memory as one document, {result['rounds']} round(s) "
        "interleaved; median (min–max). bpetite: `count_chunks` then "
        "`Tokenizer.train_from_counts`, one process; rustbpe and HF count on every core.",
        "",
        "| pattern | trainer | merges | time | x bpetite | bpetite count | bpetite merge "
        "| merges vs bpetite |",
        "| --- | --- | ---: | --- | ---: | --- | --- | --- |",
    ]
    for pattern, rows in result["patterns"].items():
        ours = rows["bpetite"]["seconds"]["median"]
        for name, row in rows.items():
            phases = row.get("phases", {})
            check = row.get("merges_vs_bpetite")
            if check is None:
                verdict = ""
            elif check["identical"]:
                verdict = "identical"
            else:
                verdict = f"first difference at {check['first_difference']:,}"
                verdict += "" if not check["required"] else " (**must be identical**)"
            lines.append(
                f"| `{pattern}` | {_LABELS[name]} | {row['merges']:,} | {spread(row['seconds'])} "
                f"| {row['seconds']['median'] / ours:.2f} "
                f"| {spread(phases['count']) if 'count' in phases else ''} "
                f"| {spread(phases['merge']) if 'merge' in phases else ''} | {verdict} |"
            )
    for failure in result["failures"]:
        lines.append(f"\nCHECK FAILED: {failure}")
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/peer_training.py",
        description=__doc__.split("\n")[0] if __doc__ else None,
    )
    parser.add_argument("--quick", action="store_true", help="vocab 2000, one round")
    parser.add_argument("--vocab-size", type=int, help=f"default {DEFAULT_VOCAB} (2000 quick)")
    parser.add_argument("--rounds", type=int, help="default 5 (1 quick)")
    parser.add_argument("--corpus", type=Path, help="default: the committed TinyShakespeare")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the result here")
    args = parser.parse_args(argv)
    if args.corpus is not None:
        text = args.corpus.read_bytes().decode("utf-8")
    else:
        from tests.datafiles import shakespeare_text

        text = shakespeare_text()
    result = run(
        text,
        vocab_size=args.vocab_size or (2000 if args.quick else DEFAULT_VOCAB),
        rounds=args.rounds or (1 if args.quick else 5),
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(render(result))
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
