"""First contact: what a new user meets in a fresh process, bpetite against tiktoken.

Every figure here is cold. A row is a fresh interpreter, timed by wall clock from spawn
to exit: ``import bpetite`` against ``import tiktoken``; import, ``get_encoding(name)``
and the encode of one sentence, printed, for each built-in vocabulary; and
``bpetite encode --model o200k_base --text ...`` against the tiktoken one-liner. tiktoken
reads its offline cache (``TIKTOKEN_CACHE_DIR``, filled once from the committed rank
files, keyed by the sha1 of each URL as tiktoken keys it), so neither side downloads.
Each round runs every pair back to back, the order alternating; a ratio is bpetite's
time over tiktoken's, of the medians and paired round by round; the CPU ratio (user +
system of the child) is less moved by a shared machine. Both sides must print the same
ids.

The cold encodes: a fresh process loads the vocabulary (untimed), then times one
``encode_ordinary`` of a text it has never seen: English prose (TinyShakespeare), source
code (the running Python's standard library, its ``.py`` files in name order), and a
multilingual text (the encoding section's, of many scripts). The vocabularies are
``cl100k_base``, ``o200k_base`` and a model trained on TinyShakespeare at vocab 32,768
(GPT-2's pattern; tiktoken gets its tokens as ranks). Speed is tiktoken's time
over bpetite's, same text, same round (CPU speed: of the process's CPU time for the
encode, less moved by a shared machine); the ids must be tiktoken's. The warm steady
state is in the encoding sections.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
import sysconfig
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks import harness
from benchmarks.harness import Section, Stat, spread
from benchmarks.shakespeare_encode import multilingual_text
from bpetite import Tokenizer

#: A sentence of the kind a first try encodes.
SENTENCE = "Hello world! Tokenizers split text into pieces: café, naïve, 1,234 and 👋."
VOCABULARIES = ("gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base")
#: Where tiktoken downloads each file it needs -> the committed copy (harness.data name).
TIKTOKEN_URLS = {
    "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe": "vocab.bpe",
    "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json": (
        "encoder.json"
    ),
    "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken": "gpt2.tiktoken",
    "https://openaipublic.blob.core.windows.net/encodings/p50k_base.tiktoken": (
        "p50k_base.tiktoken"
    ),
    "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken": (
        "cl100k_base.tiktoken"
    ),
    "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken": (
        "o200k_base.tiktoken"
    ),
}
#: The cold encodes' vocabularies: two built-ins and a model trained on TinyShakespeare
#: at `TRAINED_VOCAB` (saved untimed; tiktoken gets its tokens as ranks and its pattern);
#: and each text's size in characters (quick, full).
TRAINED = "TinyShakespeare 32k"
TRAINED_VOCAB = 32_768
COLD_VOCABULARIES = ("cl100k_base", "o200k_base", TRAINED)
COLD_SIZES = {
    "prose": (100_000, None),
    "code": (100_000, 2_000_000),
    "multilingual": (100_000, 800_000),
}
#: Speed targets of the cold encodes: at least this fraction of tiktoken's speed.
COLD_TARGETS = {"prose": ">= 0.8", "code": ">= 0.8", "multilingual": ">= 0.6"}
PROCESS_TABLE = "what a user runs | >bpetite | >tiktoken | >ratio | >paired | >CPU ratio"
COLD_TABLE = (
    "text | >characters | vocabulary | >bpetite | >tiktoken | >speed | >paired | >CPU speed"
)


def run(run: harness.Run) -> Section:
    rounds = 1 if run.quick else 7
    title = f"First contact: fresh processes against tiktoken ({rounds} round(s))"
    section = Section(title, __doc__)
    env = {"TIKTOKEN_CACHE_DIR": str(_tiktoken_cache(run))}
    stats = _processes(section, rounds, env)
    stats |= _cold_encodes(section, run, 1 if run.quick else 5, env)
    section.record(stats)
    return section


# --------------------------------------------------------------------------- fresh processes


def _processes(section: Section, rounds: int, env: dict[str, str]) -> dict[str, Stat]:
    """Each row's two commands, interleaved: wall and CPU of the whole process."""
    python = sys.executable
    script = Path(python).with_name("bpetite")
    cli = [str(script)] if script.is_file() else [python, "-m", "bpetite"]

    def encode(library: str, name: str) -> list[str]:
        code = f"import {library}; print({library}.get_encoding({name!r}).encode({SENTENCE!r}))"
        return [python, "-c", code]

    rows: dict[str, tuple[str, list[str], list[str]]] = {
        "import": ("`import bpetite` / `import tiktoken`", [python, "-c", "import bpetite"],
                   [python, "-c", "import tiktoken"]),
    }  # fmt: skip
    for name in VOCABULARIES:
        rows[name] = (
            f"import + `get_encoding({name!r})` + encode a sentence",
            encode("bpetite", name),
            encode("tiktoken", name),
        )
    rows["cli"] = (
        "`bpetite encode --model o200k_base --text ...` / the tiktoken one-liner",
        [*cli, "encode", "--model", "o200k_base", "--text", SENTENCE],
        encode("tiktoken", "o200k_base"),
    )
    cases = {}
    for key, (_, ours, theirs) in rows.items():
        cases[f"{key} bpetite"] = partial(_spawn, ours, env)
        cases[f"{key} tiktoken"] = partial(_spawn, theirs, env)
    harness.log(f"first contact: {len(rows)} pairs of fresh processes, {rounds} round(s)")
    timings = harness.measure(cases, rounds, keep="all", alternate=True)
    stats: dict[str, Stat] = {}
    table = []
    for key, (label, _, _) in rows.items():
        wall = {who: timings[f"{key} {who}"].stat for who in ("bpetite", "tiktoken")}
        cpu = {who: Stat(tuple(cpu for _, cpu in timings[f"{key} {who}"].results))
               for who in ("bpetite", "tiktoken")}  # fmt: skip
        outputs = [[out for out, _ in timings[f"{key} {who}"].results] for who in wall]
        if key != "import":
            section.check(f"{key}: bpetite prints tiktoken's ids", _same_ids(*outputs))
        stats |= {f"{key} {who} wall": stat for who, stat in wall.items()}
        stats |= {f"{key} {who} cpu": stat for who, stat in cpu.items()}
        ratios = [
            f"{wall['bpetite'].median / wall['tiktoken'].median:.2f}",
            _paired(wall["bpetite"], wall["tiktoken"]),
            f"{cpu['bpetite'].median / cpu['tiktoken'].median:.2f}",
        ]
        table.append([label, spread(wall["bpetite"]), spread(wall["tiktoken"]), *ratios])
        target, source = _process_target(key)
        section.ratio(
            f"first contact, {label}: bpetite wall / tiktoken's",
            wall["bpetite"],
            wall["tiktoken"],
            target,
            how="fresh processes, interleaved",
            source=source,
        )
    section.add(
        "### Fresh processes\n\nWall time of the whole process, median (min–max).\n\n"
        + harness.table(PROCESS_TABLE, table)
    )
    return stats


def _process_target(key: str) -> tuple[str, str]:
    if key == "import":
        return "<= 1.5", "first-contact target: import"
    if key == "cli":
        return "<= 1.5", "first-contact target: the CLI"
    return "<= 1", "first-contact target: built-ins"


def _spawn(command: list[str], env: dict[str, str]) -> tuple[str, float]:
    """Run `command` to its end: its stdout, and the CPU seconds it used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, **env}, check=False
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        tail = "\n".join(result.stderr.strip().splitlines()[-5:])
        raise RuntimeError(f"{command[:3]} exited {result.returncode}:\n{tail}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result.stdout, cpu


def _same_ids(ours: list[str], theirs: list[str]) -> bool:
    """Every round's ids alike: bpetite prints ``[1,2]``, tiktoken ``[1, 2]``."""
    return all(json.loads(a) == json.loads(b) for a, b in zip(ours, theirs, strict=True))


def _paired(top: Stat, bottom: Stat) -> str:
    if len(top.samples) < 2:
        return "–"
    ratios = sorted(a / b for a, b in zip(top.samples, bottom.samples, strict=True))
    return f"{Stat(tuple(ratios)).median:.2f}"


def _tiktoken_cache(run: harness.Run) -> Path:
    """A ``TIKTOKEN_CACHE_DIR`` holding the committed files under tiktoken's keys."""
    cache = run.scratch / "tiktoken-cache"
    cache.mkdir(exist_ok=True)
    for url, name in TIKTOKEN_URLS.items():
        key = hashlib.sha1(url.encode()).hexdigest()  # tiktoken's own cache key
        (cache / key).write_bytes(harness.data(name, run.cache).read_bytes())
    return cache


# --------------------------------------------------------------------------- cold encodes


def _cold_encodes(
    section: Section, run: harness.Run, rounds: int, env: dict[str, str]
) -> dict[str, Stat]:
    """One encode of unseen text in a fresh process, its vocabulary loaded untimed."""
    texts = _texts(run)
    harness.log(f"first contact: training the {TRAINED} model (untimed)")
    artifact = run.scratch / "first-contact-trained.json"
    Tokenizer.train(run.text, TRAINED_VOCAB).save(artifact)
    stats: dict[str, Stat] = {}
    table = []
    for kind, path in texts.items():
        characters = len(path.read_text(encoding="utf-8"))
        for name in COLD_VOCABULARIES:
            harness.log(f"first contact: cold encode of {kind} with {name}, {rounds} round(s)")
            cases = {
                who: partial(_cold_encode, who, str(artifact) if name == TRAINED else name,
                             path, env)
                for who in ("bpetite", "tiktoken")
            }  # fmt: skip
            timings = harness.measure(cases, rounds, keep="all", alternate=True)
            reports = {who: timing.results for who, timing in timings.items()}
            section.check(
                f"cold {kind}, {name}: bpetite's ids equal tiktoken's",
                [r["ids"] for r in reports["bpetite"]] == [r["ids"] for r in reports["tiktoken"]],
            )
            own = {who: Stat(tuple(r["seconds"] for r in reports[who])) for who in reports}
            cpu = {who: Stat(tuple(r["cpu"] for r in reports[who])) for who in reports}
            stats |= {f"cold {kind} {name} {who}": stat for who, stat in own.items()}
            speed = own["tiktoken"].median / own["bpetite"].median
            table.append([kind, f"{characters:,}", f"`{name}`", spread(own["bpetite"]),
                          spread(own["tiktoken"]), f"{speed:.2f}",
                          _paired(own["tiktoken"], own["bpetite"]),
                          f"{cpu['tiktoken'].median / cpu['bpetite'].median:.2f}"])  # fmt: skip
            section.ratio(
                f"first contact, cold encode of {kind}, `{name}`: bpetite speed / tiktoken's",
                own["tiktoken"],
                own["bpetite"],
                COLD_TARGETS[kind],
                how="fresh process, vocabulary loaded untimed",
                source="first-contact target: cold encodes",
            )
    section.add(
        "### Cold encodes\n\nOne `encode_ordinary` in a fresh process, median (min–max).\n\n"
        + harness.table(COLD_TABLE, table)
    )
    return stats


def _texts(run: harness.Run) -> dict[str, Path]:
    """The three texts, written once into the scratch folder."""
    quick = 0 if run.quick else 1
    texts = {
        "prose": run.text,
        "code": _standard_library_code(COLD_SIZES["code"][quick] or 0),
        "multilingual": multilingual_text(run.text, COLD_SIZES["multilingual"][quick] or 0),
    }
    paths = {}
    for kind, text in texts.items():
        size = COLD_SIZES[kind][quick]
        path = run.scratch / f"first-contact-{kind}.txt"
        path.write_text(text[:size] if size else text, encoding="utf-8")
        paths[kind] = path
    return paths


def _standard_library_code(size: int) -> str:
    """The running Python's standard library sources in name order, about `size` characters."""
    parts: list[str] = []
    total = 0
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        try:
            source = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        parts.append(source)
        total += len(source)
        if total >= size:
            break
    return "".join(parts)


#: A cold encode, run as ``python -c`` so that the process imports what a user's script
#: would: `library`, and bpetite to read a saved model (a child of ``python -m
#: benchmarks`` would import the suite's modules first, `regex` among them). It loads
#: `name` with `library` (untimed; a name ending in ``.json`` is a saved model, whose
#: tokens tiktoken gets as ranks), times one encode of the file at `path`, and prints
#: the times and a hash of the ids.
COLD_ENCODE = """
import hashlib, json, sys, time
from array import array
library, name, path = sys.argv[1:]
text = open(path, encoding="utf-8").read()
if name.endswith(".json"):
    from bpetite import Tokenizer
    encoding = Tokenizer.load(name)
    if library == "tiktoken":
        import tiktoken
        ranks = {encoding.vocab[i]: i for i in range(encoding.mergeable_vocab_size)}
        encoding = tiktoken.Encoding("trained", pat_str=encoding.pattern, mergeable_ranks=ranks,
                                     special_tokens=dict(encoding.special_tokens))
else:
    encoding = __import__(library).get_encoding(name)
started, cpu_started = time.perf_counter(), time.process_time()
ids = encoding.encode_ordinary(text)
seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
digest = hashlib.sha256(array("I", ids).tobytes()).hexdigest()
print(json.dumps({"seconds": seconds, "cpu": cpu, "ids": digest}))
"""


def _cold_encode(library: str, name: str, path: Path, env: dict[str, str]) -> dict[str, Any]:
    """One cold encode (:data:`COLD_ENCODE`) in a fresh interpreter: its report."""
    output, _ = _spawn([sys.executable, "-c", COLD_ENCODE, library, name, str(path)], env)
    report: dict[str, Any] = json.loads(output)
    return report
