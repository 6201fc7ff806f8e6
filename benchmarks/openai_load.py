"""Load GPT-2's, ``cl100k_base``'s and ``o200k_base``'s vocabularies: bpetite against tiktoken.

    uv run --group bench python benchmarks/openai_load.py            # 7 rounds
    uv run --group bench python benchmarks/openai_load.py --quick    # 1 round

bpetite: ``Tokenizer.load`` of the artifact ``bpetite import`` writes for the committed
rank file (fully validated: every check of docs/schema.md runs). tiktoken: what it does
before its first encode, ``load_tiktoken_bpe`` on the same ``.tiktoken`` file plus
building the ``Encoding`` (Rust). Interleaved, round by round, in one process, as a user
loads (no ``gc.collect()`` between calls).

bpetite proves lazily which tokens encode to themselves, the first time a chunk needs
it, so "load, then encode TinyShakespeare" is timed too, for both: that is where any
cost moved out of loading shows up. The ids of that encode must be tiktoken's.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

if __name__ == "__main__":
    # Run as a script: put the repository root on the path for `benchmarks` and `tests`.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._timing import Stat

#: The committed rank files (tests/data/<name>.tiktoken.gz) and the names they go by.
VOCABULARIES = (
    ("gpt2", "GPT-2 (r50k_base)"),
    ("cl100k_base", "cl100k_base"),
    ("o200k_base", "o200k_base"),
)


def log(message: str) -> None:
    print(f"[openai-load] {message}", file=sys.stderr, flush=True)


def run(text: str, *, rounds: int = 7) -> dict[str, Any]:
    """Time each loader `rounds` times, interleaved; return sizes, timings and failures."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    from benchmarks import _peers
    from bpetite import Tokenizer
    from bpetite.interop import import_vocabulary

    failures: list[str] = []
    sections: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bpetite-load-") as scratch:
        for name, label in VOCABULARIES:
            ranks_path = Path(scratch, f"{name}.tiktoken")
            ranks_path.write_bytes(_peers.committed_ranks_file(name))
            artifact_path = Path(scratch, f"{name}.json")
            imported = import_vocabulary([ranks_path]).tokenizer
            imported.save(artifact_path)
            pattern, specials = imported.pattern, dict(imported.special_tokens)

            def load_bpetite(path: Path = artifact_path) -> Any:
                return Tokenizer.load(path)

            def load_tiktoken(
                path: Path = ranks_path,
                pattern: str = pattern,
                specials: Any = specials,
                label: str = f"{name}-committed",
            ) -> Any:
                return tiktoken.Encoding(
                    label,
                    pat_str=pattern,
                    mergeable_ranks=load_tiktoken_bpe(str(path)),
                    special_tokens=specials,
                )

            samples: dict[str, list[float]] = {
                "bpetite_load": [],
                "tiktoken_load": [],
                "bpetite_load_encode": [],
                "tiktoken_load_encode": [],
            }
            ids: dict[str, list[int]] = {}
            for round_index in range(rounds):
                log(f"{name}: round {round_index + 1}/{rounds}")
                for who, load in (("bpetite", load_bpetite), ("tiktoken", load_tiktoken)):
                    samples[f"{who}_load"].append(_seconds(load))
                    started = time.perf_counter()
                    ids[who] = load().encode_ordinary(text)
                    samples[f"{who}_load_encode"].append(time.perf_counter() - started)
            if ids["bpetite"] != ids["tiktoken"]:
                failures.append(f"openai-load: {name}: bpetite's ids of the text differ")
            sections[name] = {
                "label": label,
                "artifact_bytes": artifact_path.stat().st_size,
                "tiktoken_file_bytes": ranks_path.stat().st_size,
                "tokens": imported.n_vocab,
                "seconds": {key: Stat(tuple(values)).to_json() for key, values in samples.items()},
            }
    return {
        "rounds": rounds,
        "text_bytes": len(text.encode("utf-8")),
        "vocabularies": sections,
        "failures": failures,
    }


def _seconds(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def render(results: dict[str, Any]) -> str:
    lines = [
        "## Loading OpenAI's vocabularies",
        "",
        f"Median of {results['rounds']} round(s), interleaved, min–max in brackets. bpetite: "
        "`Tokenizer.load` of the artifact `bpetite import` writes, every check of "
        "docs/schema.md included; tiktoken: `load_tiktoken_bpe` on the `.tiktoken` file and "
        "building its `Encoding`. Then the same plus `encode_ordinary` of TinyShakespeare "
        f"({results['text_bytes']:,} bytes; bpetite proves lazily which tokens encode to "
        "themselves, so this is where that cost shows). The ids must be tiktoken's.",
        "",
        "| vocabulary | artifact | `.tiktoken` | bpetite load | tiktoken load | ratio "
        "| bpetite load + encode | tiktoken load + encode | ratio |",
        "| --- | ---: | ---: | --- | --- | ---: | --- | --- | ---: |",
    ]
    for section in results["vocabularies"].values():
        seconds = section["seconds"]
        lines.append(
            f"| {section['label']} | {section['artifact_bytes'] / 1e6:.1f} MB "
            f"| {section['tiktoken_file_bytes'] / 1e6:.1f} MB "
            f"| {_cell(seconds['bpetite_load'])} | {_cell(seconds['tiktoken_load'])} "
            f"| {_ratio(seconds['bpetite_load'], seconds['tiktoken_load'])} "
            f"| {_cell(seconds['bpetite_load_encode'])} "
            f"| {_cell(seconds['tiktoken_load_encode'])} "
            f"| {_ratio(seconds['bpetite_load_encode'], seconds['tiktoken_load_encode'])} |"
        )
    lines += ["", "A ratio is bpetite's median time over tiktoken's: below 1 is faster."]
    return "\n".join(lines) + "\n"


def _cell(stat: dict[str, Any]) -> str:
    return f"{stat['median']:.3f} s ({stat['min']:.3f}–{stat['max']:.3f})"


def _ratio(ours: dict[str, Any], theirs: dict[str, Any]) -> str:
    return f"{ours['median'] / theirs['median']:.2f}"


def main(argv: Sequence[str]) -> int:
    from tests.datafiles import read_bytes

    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="one round")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    text = read_bytes("tinyshakespeare.txt").decode("utf-8")
    results = run(text, rounds=1 if args.quick else args.rounds)
    print(render(results))
    print(json.dumps(results["failures"]), file=sys.stderr)
    return 1 if results["failures"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
