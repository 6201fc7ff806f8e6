"""Build the gigabyte benchmark corpus: the machine's text files, then generated web text.

    uv run --group bench python -m benchmarks.web_corpus --output DIR [--size-gb 1.0]

The corpus is a list of documents, written twice under DIR: as UTF-8 files
(``text/``, one document per file, in the corpus's order by path) and as Parquet shards
(``parquet/shard_00000.parquet``, ...: one row per document in the column ``text``,
row groups of ``ROW_GROUP`` documents, as nanochat's FineWeb-Edu shards hold them).
``manifest.json``, written last, gives the sizes, the sources and a sha256 of the
whole; a directory whose manifest matches the request is reused as it is.

The documents, in order:

1. **The machine's text files**, up to 40% of the corpus (``MACHINE_SHARE``): every
   regular file under the roots (by default
   ``/usr``, ``/opt`` and the Python installations), walked in sorted order without
   following links, that is at most ``MAX_FILE_BYTES``, valid UTF-8 without a NUL,
   and whose every character is assigned in Python's ``unicodedata`` (Unicode 14 on
   Python 3.11). Characters assigned later (Unicode 16-17 letters, as in idna's
   mapping table) split differently under Python's ``regex`` and rustbpe's regex
   engine, and a side-by-side run needs the same chunks on both. Duplicate contents
   are kept once. C headers, documentation, Python and other source, data tables.
2. **Generated web text**, to fill the corpus to its size: documents of 2 KB to
   200 KB (log-normal), each in one of several languages with its own Zipf-distributed
   lexicon of pronounceable words (English-like, accented Latin, Cyrillic, Greek, and
   CJK with no spaces), written as titled paragraphs of sentences with capitals,
   punctuation, numbers, dates, prices, URLs, lists, the odd code line and emoji, some
   documents with CRLF line ends. Everything comes from ``random.Random(seed)``: the
   same seed gives the same bytes on every machine. The lexicons hold about three
   million distinct words, so a gigabyte has several million distinct chunks, as web
   text does; every code point is from Unicode 6 or earlier.

Only the first part depends on the machine; the manifest lists its files and bytes.
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import itertools
import json
import math
import os
import random
import stat
import sys
import sysconfig
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
#: The machine's files fill at most this share of the corpus; generated text the rest.
MACHINE_SHARE = 0.4
#: Files larger than this are data dumps more than text: left out.
MAX_FILE_BYTES = 4 << 20
#: Documents per Parquet row group, and the text each shard holds before the next starts.
ROW_GROUP = 1024
SHARD_BYTES = 100_000_000
#: The generator's version: a change to what it writes must change this.
GENERATOR = 1


# The machine's files ------------------------------------------------------------------


def default_roots() -> list[Path]:
    """``/usr``, ``/opt`` and the Python installations, each once, none inside another."""
    paths = sysconfig.get_paths()
    candidates = ["/usr", "/opt", sys.base_prefix, sys.prefix, paths["stdlib"], paths["purelib"]]
    roots: list[Path] = []
    for candidate in candidates:
        root = Path(candidate).resolve()
        if root.is_dir() and not any(root.is_relative_to(other) for other in roots):
            roots = [*(other for other in roots if not other.is_relative_to(root)), root]
    return sorted(roots)


_assigned: dict[str, bool] = {}


def plain_text(data: bytes) -> str | None:
    """`data` as text if it is UTF-8 with no NUL and no character unassigned in Python's
    Unicode (or private, or a surrogate); else None."""
    if b"\0" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text.isascii():
        for char in set(text):
            ok = _assigned.get(char)
            if ok is None:
                ok = _assigned[char] = unicodedata.category(char) not in {"Cn", "Co", "Cs"}
            if not ok:
                return None
    return text


def machine_files(roots: Sequence[Path], exclude: Sequence[Path]) -> Iterator[tuple[str, str]]:
    """(name, text) of each usable file under `roots`, sorted, each content once."""
    seen: set[bytes] = set()
    for index, root in enumerate(roots):
        for directory, dirnames, filenames in os.walk(root):
            here = Path(directory)
            dirnames[:] = sorted(d for d in dirnames if not any((here / d) == e for e in exclude))
            for name in sorted(filenames):
                path = here / name
                try:
                    info = path.lstat()
                    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
                        continue
                    data = path.read_bytes()
                except OSError:
                    continue
                digest = hashlib.sha256(data).digest()
                if not data or digest in seen:
                    continue
                text = plain_text(data)
                if text is None:
                    continue
                seen.add(digest)
                yield f"machine/{index}-{root.name or 'root'}/{path.relative_to(root)}", text


# Generated web text -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Language:
    """How one language's words are made: syllables, lexicon size, spacing, capitals."""

    name: str
    onsets: str
    vowels: str
    codas: str
    words: int
    share: float
    spaced: bool = True


LATIN = Language("english", "bcdfghjklmnprstvwyz", "aeiouy", "nrstlmdkgp", 1_500_000, 0.55)
LANGUAGES = (
    LATIN,
    Language("accented", "bcdfgjklmnprstvzßñçł", "aeiouéèêàâôûüöäåøœ", "nrstlmzś", 500_000, 0.15),
    Language("cyrillic", "бвгджзклмнпрстфхцчшщ", "аеёиоуыэюя", "нрстлмйкв", 500_000, 0.12),
    Language("greek", "βγδζθκλμνξπρστφχψ", "αεηιουωάέήίόύώ", "νςρσ", 250_000, 0.06),
    Language(
        "cjk",
        "".join(map(chr, range(0x4E00, 0x4E00 + 3000, 3))),  # CJK Unified, Unicode 1.1
        "",
        "",
        250_000,
        0.12,
        spaced=False,
    ),
)
EMOJI = [chr(code) for code in range(0x1F600, 0x1F640)]  # Unicode 6.0/6.1
TLDS = ("com", "org", "net", "de", "ru", "io", "edu")


def _lexicon(language: Language, rng: random.Random) -> tuple[list[str], list[float]]:
    """`language.words` distinct words by rank, and Zipf cumulative weights (s = 1.07).

    A word is one to five syllables (onset, vowel, sometimes a coda) drawn from the
    language's inventory; CJK words are one to four characters.
    """
    if language.vowels:
        units = [o + v for o in language.onsets for v in language.vowels]
        units += [unit + c for unit in units[::3] for c in language.codas]
    else:
        units = list(language.onsets)
    lengths = (1, 1, 2, 2, 2, 3, 3, 4, 5) if language.vowels else (1, 2, 2, 2, 3, 4)
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < language.words:
        word = "".join(rng.choices(units, k=rng.choice(lengths)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    weights = itertools.accumulate(1 / rank**1.07 for rank in range(1, len(words) + 1))
    return words, list(weights)


class Generator:
    """Web-like documents from a seed: every call sequence gives the same text."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.lexicons = [_lexicon(language, self.rng) for language in LANGUAGES]
        self.shares = list(itertools.accumulate(language.share for language in LANGUAGES))

    def document(self) -> str:
        rng = self.rng
        size = min(200_000, max(2_000, int(rng.lognormvariate(math.log(12_000), 1.0))))
        which = min(bisect.bisect(self.shares, rng.random() * self.shares[-1]), len(LANGUAGES) - 1)
        language, (words, weights) = LANGUAGES[which], self.lexicons[which]
        newline = "\r\n" if rng.random() < 0.1 else "\n"
        lines = [self._sentence(language, words, weights, rng.randint(3, 9)).rstrip(".!?")]
        total = len(lines[0])
        while total < size:
            kind = rng.random()
            if kind < 0.08:
                line = "- " + self._sentence(language, words, weights, rng.randint(2, 10))
            elif kind < 0.11:
                line = self._code(words, weights)
            else:
                sentences = rng.randint(1, 8)
                line = " ".join(
                    self._sentence(language, words, weights, rng.randint(4, 28))
                    for _ in range(sentences)
                )
                line = line if language.spaced else line.replace(" ", "")
            lines.append(line)
            total += len(line) + 1
            if rng.random() < 0.7:
                lines.append("")
        return newline.join(lines) + newline

    def _sentence(
        self, language: Language, words: list[str], weights: list[float], length: int
    ) -> str:
        rng = self.rng
        chosen = rng.choices(words, cum_weights=weights, k=length)
        for _ in range(int(length * 0.1 + rng.random())):  # about one word in ten
            i, roll = rng.randrange(length), rng.random()
            if roll < 0.3:
                chosen[i] = str(rng.choice((rng.randint(0, 99), rng.randint(1800, 2030))))
            elif roll < 0.4:
                chosen[i] = f"{rng.randint(1, 999)}.{rng.randint(0, 99):02d}"
            elif roll < 0.45:
                chosen[i] = f"https://{chosen[i]}.{rng.choice(TLDS)}/{rng.choice(words)}"
            elif roll < 0.5:
                chosen[i] = rng.choice(EMOJI)
            else:
                chosen[i] += ","
        first = chosen[0]
        chosen[0] = first[:1].upper() + first[1:]
        return " ".join(chosen) + rng.choice(".....!?:")

    def _code(self, words: list[str], weights: list[float]) -> str:
        rng = self.rng
        name, other, value = rng.choices(words, cum_weights=weights, k=3)
        return rng.choice(
            (
                f"    {name} = {other}({value!r}, {rng.randint(0, 4096)})",
                f"if ({name} >= {rng.randint(0, 99)}) {{ return {other}[{value!r}]; }}",
                f'<a href="/{name}/{other}">{value}</a>',
            )
        )


# The corpus ---------------------------------------------------------------------------


def documents(
    size: int, seed: int, roots: Sequence[Path], exclude: Sequence[Path]
) -> Iterator[tuple[str, str]]:
    """(name, text) of every document: machine files first, up to ``MACHINE_SHARE`` of
    `size`, then generated ones, up to `size` UTF-8 bytes in all (each part stops at
    the first document that would pass its limit)."""
    total = 0
    for name, text in machine_files(roots, exclude):
        length = len(text.encode("utf-8"))
        if total + length > size * MACHINE_SHARE:
            break
        total += length
        yield name, text
    generator = Generator(seed)
    for number in itertools.count():
        text = generator.document()
        length = len(text.encode("utf-8"))
        if total + length > size:
            return
        total += length
        yield f"generated/{number // 1000:04d}/{number % 1000:03d}.txt", text


def _write_shard(path: Path, texts: list[str]) -> None:
    """One Parquet shard: a ``text`` column, row groups of ``ROW_GROUP`` documents."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    pq.write_table(pa.table({"text": texts}), path, row_group_size=ROW_GROUP)


def build(
    output: Path, size: int, seed: int, roots: Sequence[Path] | None = None
) -> dict[str, object]:
    """Write the corpus under `output` (outside the repository); return its manifest.

    Reuses a directory whose manifest was written for the same size, seed and roots.
    ValueError if `output` is inside the repository: corpora are never committed.
    """
    output = output.resolve()
    if output.is_relative_to(REPO_ROOT):
        raise ValueError(f"{output} is inside the repository; corpora are never committed")
    roots = list(roots) if roots is not None else default_roots()
    request = {"size": size, "seed": seed, "generator": GENERATOR, "roots": [str(r) for r in roots]}
    manifest_path = output / "manifest.json"
    if manifest_path.is_file():
        manifest: dict[str, object] = json.loads(manifest_path.read_text(encoding="utf-8"))
        if manifest.get("request") == request:
            return manifest
        raise ValueError(
            f"{output} holds another corpus ({manifest.get('request')}); pick a new directory"
        )
    (output / "parquet").mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    counts = {"machine": [0, 0], "generated": [0, 0]}
    shard: list[str] = []
    shards = shard_bytes = 0
    for name, text in documents(size, seed, roots, exclude=[output]):
        data = text.encode("utf-8")
        path = output / "text" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        digest.update(name.encode("utf-8") + b"\0" + hashlib.sha256(data).digest())
        part = counts[name.split("/", 1)[0]]
        part[0] += 1
        part[1] += len(data)
        shard.append(text)
        shard_bytes += len(data)
        if shard_bytes >= SHARD_BYTES:
            _write_shard(output / "parquet" / f"shard_{shards:05d}.parquet", shard)
            shard, shards, shard_bytes = [], shards + 1, 0
    if shard:
        _write_shard(output / "parquet" / f"shard_{shards:05d}.parquet", shard)
    manifest = {
        "request": request,
        "documents": {part: {"files": n, "bytes": b} for part, (n, b) in counts.items()},
        "bytes": sum(b for _, b in counts.values()),
        "shards": shards + bool(shard),
        "sha256": digest.hexdigest(),
        "unicode": unicodedata.unidata_version,
    }
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.web_corpus",
        description="Build the gigabyte benchmark corpus (text files and Parquet shards).",
    )
    parser.add_argument("--output", type=Path, required=True, metavar="DIR")
    parser.add_argument("--size-gb", type=float, default=1.0, metavar="GB")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--root",
        type=Path,
        action="append",
        metavar="DIR",
        help="default: /usr, /opt and the Python installations",
    )
    args = parser.parse_args(argv)
    try:
        manifest = build(args.output, int(args.size_gb * 1e9), args.seed, args.root)
    except (ValueError, OSError) as error:
        print(f"web_corpus: error: {error}", file=sys.stderr)
        return 1
    print(json.dumps(manifest, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
