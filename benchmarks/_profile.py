"""Profile the hot paths with cProfile (exact call counts) and pyinstrument (sampling).

cProfile adds a cost to every Python call, so it inflates call-heavy code; pyinstrument
samples the stack and distorts far less, but cannot count calls. Reading both keeps
either from misleading alone. Reports go to ``profile-<target>-{cprofile,pyinstrument}.txt``
and a short summary to stdout.
"""

from __future__ import annotations

import cProfile
import io
import pstats
from collections.abc import Callable
from functools import partial
from pathlib import Path

from benchmarks._encode import SENTENCE, corpus_letters
from bpetite import Tokenizer
from bpetite.core._pretokenizer import count_chunks
from bpetite.core._trainer import train_merges

#: The vocabulary the profiles use: the large one, where the merge loop dominates.
PROFILE_VOCAB = 32000
_TOP = 25
#: One chunk this long shows the long-chunk path (the harness times 100k to 400k).
LONG_CHUNK_LETTERS = 200_000
#: Fresh tokenizers the cold 50-word sentence is profiled on.
SENTENCE_RUNS = 50


def profile(corpus_path: Path, output: Path) -> None:
    corpus = corpus_path.read_bytes().decode("utf-8")
    counts = count_chunks([corpus])
    merges = train_merges(counts, PROFILE_VOCAB)
    warm = Tokenizer(merges)
    warm.encode(corpus)
    long_chunk = corpus_letters(corpus)[:LONG_CHUNK_LETTERS]
    # Each entry builds its state first (unprofiled) and returns the call to profile.
    targets: dict[str, Callable[[], Callable[[], object]]] = {
        "pretokenize-count": lambda: partial(count_chunks, [corpus]),
        "merge-loop": lambda: partial(train_merges, counts, PROFILE_VOCAB),
        "tokenizer-build": lambda: partial(Tokenizer, merges),
        "encode-cold": lambda: partial(Tokenizer(merges).encode, corpus),
        "encode-warm": lambda: partial(warm.encode, corpus),
        "encode-long-chunk": lambda: partial(Tokenizer(merges).encode, long_chunk),
    }
    for name, setup in targets.items():
        profiler = cProfile.Profile()
        profiler.runcall(setup())
        _pyinstrument(setup(), output / f"profile-{name}-pyinstrument.txt")
        _report(name, profiler, output)
    # One cold sentence takes well under a millisecond, too short to sample: profile
    # many, each on a fresh tokenizer, with the profiler off while one is built.
    profiler = cProfile.Profile()
    for _ in range(SENTENCE_RUNS):
        tokenizer = Tokenizer(merges)
        profiler.enable()
        tokenizer.encode(SENTENCE)
        profiler.disable()
    _report(f"encode-sentence-cold-x{SENTENCE_RUNS}", profiler, output)
    print(f"full reports in {output}/profile-*.txt")


def _report(name: str, profiler: cProfile.Profile, output: Path) -> None:
    summary = _cprofile(profiler, output / f"profile-{name}-cprofile.txt")
    print(f"## {name} (vocab {PROFILE_VOCAB}): cProfile, top functions by own time\n")
    print(summary)


def _cprofile(profiler: cProfile.Profile, path: Path) -> str:
    full = io.StringIO()
    pstats.Stats(profiler, stream=full).sort_stats("tottime").print_stats(_TOP)
    path.write_text(full.getvalue(), encoding="utf-8")
    short = io.StringIO()
    pstats.Stats(profiler, stream=short).sort_stats("tottime").print_stats(10)
    # Keep the table, drop pstats' preamble about the file and the sort order.
    lines = short.getvalue().splitlines()
    start = next((i for i, line in enumerate(lines) if "function calls" in line), 0)
    return "\n".join(line for line in lines[start:] if line.strip()) + "\n"


def _pyinstrument(target: Callable[[], object], path: Path) -> None:
    try:
        from pyinstrument import Profiler
    except ImportError:
        path.write_text("pyinstrument is not installed: `uv sync --group bench`\n", "utf-8")
        return
    profiler = Profiler(interval=0.0005)
    profiler.start()
    target()
    profiler.stop()
    path.write_text(profiler.output_text(unicode=True, color=False), encoding="utf-8")
