"""Time bpetite with `regex` and without it (on `re`, with the Unicode classes spelled out).

    uv run python scripts/measure_regex_fallback.py [--repeat 5] [--rounds 3]

Runs the same public calls in fresh interpreters that take turns, `--rounds` of each:
one imports `regex`, the other cannot (as in Pyodide offline). It checks that both give
the same results and prints a Markdown table of the best time of each call (over
`--repeat` calls in each round) and their ratio. The figures belong in
docs/design-notes.md with the date and the machine; nothing here asserts a time.

The texts: TinyShakespeare as the package ships it (ASCII, so every split goes to the
presets' ASCII twins, which use `re` either way), the same with a line of other scripts
after every 40 lines (mostly ASCII), and about a megabyte of text in a dozen scripts
(no ASCII stretch long enough for a twin: every split is the preset's own pattern).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from importlib import resources
from typing import Any

SCRIPTS = (
    "Français : « Ça va ? » — l'été à Noël, où naïve cœur, dit-il à l'ÉCOLE.\n"
    "Deutsch: Größenwahn, Straße, ÜBERMÄSSIG; die Brücke über den Fluß.\n"
    "Русский: Съешь же ещё этих мягких французских булок, да выпей чаю.\n"
    "Ελληνικά: Ξεσκεπάζω την ψυχοφθόρα βδελυγμία, είπε ο Σωκράτης.\n"
    "العربية: نص حكيم له سر قاطع وذو شأن عظيم مكتوب على ثوب أخضر.\n"
    "עברית: דג סקרן שט בים מאוכזב ולפתע מצא חברה.\n"
    "हिन्दी: ऋषियों को सताने वाले दुष्ट राक्षसों के राजा रावण का सर्वनाश।\n"
    "中文：我能吞下玻璃而不伤身体。日本語：いろはにほへと ちりぬるを わかよたれそ。\n"
    "한국어: 다람쥐 헌 쳇바퀴에 타고파. ไทย: เป็นมนุษย์สุดประเสริฐเลิศคุณค่า\n"
    "Emoji: 😀👍🏽👨‍👩‍👧‍👦 🇫🇷🇯🇵 ✔︎ ❤️ Digits: ١٢٣٤٥ ०१२३ 2024-11-23 3.14159\n"
    "Combining: e\u0301 a\u0308 n\u0303 \u1100\u1161\u11a8 Z\u0351\u0315a\u0352l\u0357g\u0358o\n"
    "Tiếng Việt: Tôi có thể ăn thủy tinh mà không hại gì. Türkçe: Pijamalı hasta yağız şoföre.\n"
)
PRESETS = ("gpt2", "cl100k", "o200k")


def texts() -> dict[str, str]:
    """The three texts the table is measured on, by label."""
    packaged = resources.files("bpetite") / "_data" / "tinyshakespeare.txt.gz"
    shakespeare = gzip.decompress(packaged.read_bytes()).decode("utf-8")
    lines = shakespeare.splitlines(keepends=True)
    others = SCRIPTS.splitlines(keepends=True)
    for k in range(len(lines) // 40, 0, -1):
        lines.insert(40 * k, others[k % len(others)])
    multilingual = SCRIPTS * (1_000_000 // len(SCRIPTS.encode("utf-8")))
    return {"shakespeare": shakespeare, "mixed": "".join(lines), "multilingual": multilingual}


def best_of(repeat: int, call: Callable[[], object]) -> tuple[float, object]:
    """The least wall time of `repeat` calls, and the last call's result."""
    times = []
    result: object = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return min(times), result


def child(engine: str, repeat: int) -> dict[str, Any]:
    """Seconds and a digest of the result of each measured call, in this interpreter."""
    if engine == "re":
        sys.modules["regex"] = None  # type: ignore[assignment]  # import regex now fails
    start = time.perf_counter()
    import bpetite

    for name in PRESETS:
        bpetite.SplitPattern.resolve(name).compiled  # noqa: B018 - compiled on first use
    found: dict[str, Any] = {"import and compile the presets": [time.perf_counter() - start, ""]}
    corpus = texts()
    calls: dict[str, Callable[[], object]] = {}
    for label, text in corpus.items():
        for name in PRESETS:
            calls[f"split {name}, {label}"] = partial(
                bpetite.SplitPattern.resolve(name).split, text
            )
    encoding = bpetite.get_encoding("cl100k_base")
    for label in ("mixed", "multilingual"):
        calls[f"cl100k_base encode, {label}"] = partial(encoding.encode_ordinary, corpus[label])

    def train() -> object:
        return bpetite.Tokenizer.train(corpus["multilingual"], 2_000, pattern="o200k").merges

    calls["train o200k 2,000, multilingual"] = train
    for label, call in calls.items():
        seconds, result = best_of(repeat, call)
        digest = hashlib.sha256(json.dumps(result).encode()).hexdigest()
        found[label] = [seconds, digest]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="calls per figure (best kept)")
    parser.add_argument("--rounds", type=int, default=3, help="fresh interpreters per engine")
    parser.add_argument("--child", choices=["regex", "re"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        json.dump(child(args.child, args.repeat), sys.stdout)
        return 0
    runs: dict[str, dict[str, list[Any]]] = {"regex": {}, "re": {}}
    for _ in range(args.rounds):  # the two interpreters take turns, so load hits both
        for engine, kept in runs.items():
            command = [sys.executable, __file__, "--child", engine, "--repeat", str(args.repeat)]
            out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
            for label, (seconds, digest) in json.loads(out).items():
                best = kept.setdefault(label, [seconds, digest])
                best[0] = min(best[0], seconds)
    print("| call | regex | re, classes spelled out | ratio |")
    print("| --- | ---: | ---: | ---: |")
    mismatched = []
    for label, (fast, digest) in runs["regex"].items():
        slow, other = runs["re"][label]
        if digest != other:
            mismatched.append(label)
        print(f"| {label} | {fast * 1e3:,.0f} ms | {slow * 1e3:,.0f} ms | {slow / fast:.2f}x |")
    if mismatched:
        print(f"different results without regex: {', '.join(mismatched)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
