"""Encode TinyShakespeare with `cl100k_base` and `o200k_base` in bpetite and three peers.

    uv run --group bench python benchmarks/openai_encode.py            # 5 rounds, both encodings
    uv run --group bench python benchmarks/openai_encode.py --quick    # 1 round, one piece

The peers are tiktoken, puretiktoken and bpe-openai. Every encoder is built offline
from the committed rank files (see ``benchmarks/_peers``) and gets the same pieces of
the text, cut at line ends (bpe-openai refuses a call of 1M characters or 200k tokens),
through ``encode_ordinary``. In each round every encoder is built afresh (untimed), then
encodes all the pieces twice: *cold* (empty caches) and *warm* (bpetite and
puretiktoken cache chunk ids; tiktoken and bpe-openai keep no cache). Every encoder's
ids must equal tiktoken's, piece by piece: exit status 1 otherwise.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __name__ == "__main__":
    # Run as a script: put the repository root on the path for `benchmarks` and `tests`.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import _peers
from benchmarks._timing import Stat

ENCODINGS = ("cl100k_base", "o200k_base")
_LABELS = {
    "bpetite": "bpetite",
    "tiktoken": "tiktoken",
    "puretiktoken": "puretiktoken (pure Python)",
    "bpe-openai": "bpe-openai (Rust, linear-time `bpe` crate)",
}


def log(message: str) -> None:
    print(f"[openai-encode] {message}", file=sys.stderr, flush=True)


def run(text: str, *, rounds: int = 5, encodings: Sequence[str] = ENCODINGS) -> dict[str, Any]:
    """Encode `text` with every installed encoder of each encoding, `rounds` times.

    Returns a JSON-ready dict: per encoding, each encoder's cold and warm time
    (median, min, max, samples) and MB/s, the id checks, and ``failures``.
    """
    pieces = _peers.pieces(text)
    size = len(text.encode("utf-8"))
    # tiktoken first: its ids of the first round are the reference for the others.
    encoders = {
        name: build
        for name, (package, build) in sorted(
            _peers.ENCODERS.items(), key=lambda item: item[0] != "tiktoken"
        )
        if _peers.installed(package)
    }
    failures: list[str] = []
    sections: dict[str, Any] = {}
    if "tiktoken" not in encoders:
        return {"skipped": "tiktoken is not installed", "failures": failures}
    for encoding in encodings:
        log(f"{encoding}: building bpetite's merges from the ranks (untimed)")
        _peers.bpetite_openai(encoding)
        samples: dict[str, dict[str, list[float]]] = {
            name: {"cold": [], "warm": []} for name in encoders
        }
        expected: list[list[int]] = []
        checks: dict[str, bool] = {}
        for round_index in range(rounds):
            for name, build in encoders.items():
                log(f"{encoding}: {name} (round {round_index + 1}/{rounds})")
                encode = build(encoding)
                for state in ("cold", "warm"):
                    gc.collect()
                    started = time.perf_counter()
                    ids = [encode(piece) for piece in pieces]
                    samples[name][state].append(time.perf_counter() - started)
                    if name == "tiktoken" and not expected:
                        expected = ids
                    if name != "tiktoken" and round_index == 0:
                        checks[f"{name}_{state}"] = ids == expected
        for check, ok in checks.items():
            if not ok:
                failures.append(f"{encoding}: {check} ids differ from tiktoken's")
        sections[encoding] = {
            "tokens": sum(len(ids) for ids in expected),
            "checks": checks,
            "stats": {
                name: {
                    state: {
                        **Stat(tuple(values)).to_json(),
                        "mb_per_s": size / Stat(tuple(values)).median / 1e6,
                    }
                    for state, values in states.items()
                }
                for name, states in samples.items()
            },
        }
    return {
        "bytes": size,
        "pieces": len(pieces),
        "rounds": rounds,
        "encodings": sections,
        "failures": failures,
    }


def render(result: dict[str, Any]) -> str:
    """The result as a markdown section."""
    from benchmarks._report import spread

    if "skipped" in result:
        return f"## Encoding with OpenAI's vocabularies\n\nSkipped: {result['skipped']}."
    lines = [
        "## Encoding with OpenAI's vocabularies",
        "",
        f"TinyShakespeare ({result['bytes']:,} bytes) in {result['pieces']} pieces cut at line "
        f"ends, `encode_ordinary`, {result['rounds']} round(s); each round builds every "
        "encoder afresh (untimed) and encodes the pieces twice, cold then warm. Median "
        "(min–max); *speed* is relative to tiktoken's, same state, same round.",
    ]
    for encoding, section in result["encodings"].items():
        stats = section["stats"]
        lines += [
            "",
            f"### `{encoding}` ({section['tokens']:,} tokens)",
            "",
            "| encoder | cold | warm | cold MB/s | warm MB/s | speed cold | speed warm |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: |",
        ]
        reference = stats["tiktoken"]
        for name, states in stats.items():
            cold, warm = states["cold"], states["warm"]
            lines.append(
                f"| {_LABELS.get(name, name)} | {spread(cold)} | {spread(warm)} "
                f"| {cold['mb_per_s']:.1f} | {warm['mb_per_s']:.1f} "
                f"| {reference['cold']['median'] / cold['median']:.2f} "
                f"| {reference['warm']['median'] / warm['median']:.2f} |"
            )
        verdicts = ", ".join(
            f"{name}: {'yes' if ok else 'NO'}" for name, ok in section["checks"].items()
        )
        lines += ["", f"Ids equal to tiktoken's: {verdicts}."]
    for failure in result["failures"]:
        lines.append(f"\nCHECK FAILED: {failure}")
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/openai_encode.py",
        description=__doc__.split("\n")[0] if __doc__ else None,
    )
    parser.add_argument("--quick", action="store_true", help="one round on the first piece")
    parser.add_argument("--rounds", type=int, help="default 5 (1 quick)")
    parser.add_argument("--encoding", choices=ENCODINGS, action="append", help="default: both")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the result here")
    args = parser.parse_args(argv)
    from tests.datafiles import shakespeare_text

    text = shakespeare_text()
    if args.quick:
        text = _peers.pieces(text)[0]
    result = run(
        text, rounds=args.rounds or (1 if args.quick else 5), encodings=args.encoding or ENCODINGS
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(render(result))
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
