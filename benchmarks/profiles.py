"""``--profile``: the hot paths under cProfile (exact call counts) and pyinstrument (sampling).

cProfile adds a cost to every Python call, so it inflates call-heavy code; pyinstrument
samples the stack and distorts far less, but cannot count calls: read both. Each report
goes to ``profile-<target>-{cprofile,pyinstrument}.txt`` under ``--output``, and the top
of each cProfile report to stdout.
"""

from __future__ import annotations

import cProfile
import io
import pstats
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bpetite import Tokenizer, count_chunks

#: The vocabulary profiled: the large one, where the merge loop dominates.
VOCAB = 32000


def profile(text: str, output: Path) -> None:
    from pyinstrument import Profiler

    counts = count_chunks([text])
    merges = Tokenizer.train_from_counts(counts, VOCAB).merges
    warm = Tokenizer(merges)
    warm.encode(text)
    letters = "".join(char for char in text if char.isalpha())[:200_000]
    # Each target builds its state unprofiled and returns the call to profile.
    targets: dict[str, Callable[[], Callable[[], object]]] = {
        "count": lambda: partial(count_chunks, [text]),
        "merge-loop": lambda: partial(Tokenizer.train_from_counts, counts, VOCAB),
        "tokenizer-build": lambda: partial(Tokenizer, merges),
        "encode-cold": lambda: partial(Tokenizer(merges).encode, text),
        "encode-warm": lambda: partial(warm.encode, text),
        "encode-long-chunk": lambda: partial(Tokenizer(merges).encode, letters),
    }
    for name, setup in targets.items():
        profiler = cProfile.Profile()
        profiler.runcall(setup())
        report = io.StringIO()
        pstats.Stats(profiler, stream=report).sort_stats("tottime").print_stats(25)
        (output / f"profile-{name}-cprofile.txt").write_text(report.getvalue(), encoding="utf-8")
        lines = report.getvalue().splitlines()
        start = next((i for i, line in enumerate(lines) if "function calls" in line), 0)
        print(f"## {name} (vocab {VOCAB}): cProfile, top functions by own time\n")
        print("\n".join(line for line in lines[start : start + 20] if line.strip()) + "\n")
        sampler = Profiler(interval=0.0005)
        call = setup()
        sampler.start()
        call()
        sampler.stop()
        text_report = sampler.output_text(unicode=True, color=False)
        (output / f"profile-{name}-pyinstrument.txt").write_text(text_report, encoding="utf-8")
    print(f"full reports in {output}/profile-*.txt")
