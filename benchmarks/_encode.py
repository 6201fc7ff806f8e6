"""Encode measurements: the 50-word sentence, the whole corpus, and one very long chunk.

"Cold" means a freshly built ``Tokenizer(merges)``, whose chunk cache is empty: that is
exactly the state ``Tokenizer.load`` returns (it parses the file, then calls the same
constructor), without billing the JSON parse to the encode. "Warm" means the same text
encoded again on the same object. Building the tokenizer is never inside the timing;
``Tokenizer.load`` is timed on its own.

The 50-word sentence is timed in steady state: many back-to-back calls, no
``gc.collect()`` between them (see :func:`benchmarks._timing.steady_calls`).

The implementations of one figure are interleaved within each repeat, so a burst of
load from a neighbour on the machine hits all of them rather than one.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from benchmarks import _rust
from benchmarks._timing import Stat, repeat, steady_calls, time_call
from bpetite import Tokenizer
from bpetite.core._pretokenizer import PRETOKENIZER

#: The reference implementation's benchmark sentence, so its published p50 compares.
SENTENCE = (
    "The quick brown fox jumps over the lazy dog beside twelve ancient "
    "scrolls while the wizard carefully studies glowing library shelves "
    "filled with crumbling leather-bound volumes and parchment lore that "
    "crackles gently with age as the silver moon rises slowly above "
    "distant mountain peaks casting long shadows across silent fields"
)
SENTENCE_WORDS = 50

Merges = Sequence[tuple[int, int]]


@dataclass(frozen=True, slots=True)
class Model:
    """A trained vocabulary under test, with what the Rust adapters need to mirror it."""

    vocab_size: int
    merges: tuple[tuple[int, int], ...]
    vocab: dict[int, bytes]

    @property
    def special_id(self) -> int:
        return 256 + len(self.merges)

    @classmethod
    def from_tokenizer(cls, vocab_size: int, tokenizer: Tokenizer) -> Model:
        return cls(vocab_size, tokenizer.merges, dict(tokenizer.vocab))


def sentence_latency(model: Model, runs: int) -> dict[str, Stat]:
    """p50/p99 material for the 50-word sentence: bpetite and tiktoken, cold and warm.

    Cold: each sample is the first encode on an encoder built just before it (a fresh
    ``Tokenizer(merges)``; for tiktoken a fresh ``Encoding``), `runs` of each, the two
    interleaved. Warm: steady state, ``20 * runs`` back-to-back calls of each on one
    warmed-up encoder, without ``gc.collect()`` between calls, in alternating blocks so
    a noisy stretch of the shared machine slows both.
    """
    if len(SENTENCE.split()) != SENTENCE_WORDS:
        raise RuntimeError("the benchmark sentence must stay 50 words long")
    with_tiktoken = _rust.available("tiktoken")
    samples: dict[str, list[float]] = {"bpetite_cold": [], "bpetite_warm": []}
    if with_tiktoken:
        samples |= {"tiktoken_cold": [], "tiktoken": []}
    expected = Tokenizer(model.merges).encode(SENTENCE)
    for _ in range(runs):
        tokenizer = Tokenizer(model.merges)
        samples["bpetite_cold"] += steady_calls(partial(tokenizer.encode, SENTENCE), 1)
        if with_tiktoken:
            encoding = _rust.tiktoken_encoding(model.vocab, model.special_id)
            encode = partial(encoding.encode, SENTENCE, allowed_special="all")
            samples["tiktoken_cold"] += steady_calls(encode, 1)
            if encode() != expected:
                raise RuntimeError("tiktoken's ids for the sentence differ from bpetite's")
    warm_tokenizer = Tokenizer(model.merges)
    warm: dict[str, Callable[[], object]] = {
        "bpetite_warm": partial(warm_tokenizer.encode, SENTENCE)
    }
    if with_tiktoken:
        encoding = _rust.tiktoken_encoding(model.vocab, model.special_id)
        warm["tiktoken"] = partial(encoding.encode, SENTENCE, allowed_special="all")
    blocks = 10
    for function in warm.values():
        steady_calls(function, runs)  # warm up: fill the cache, settle the allocator
    for _ in range(blocks):
        for name, function in warm.items():
            samples[name] += steady_calls(function, 20 * runs // blocks)
    return {name: Stat(tuple(values)) for name, values in samples.items()}


def naive_sentence_latency(merges: Merges, runs: int) -> Stat:
    """The specification's rank-pass encoder (one pass per merge) on the sentence."""
    from tests.reference import naive_encode

    return repeat(lambda: naive_encode(SENTENCE, merges), runs)


@dataclass(frozen=True, slots=True)
class TextResults:
    """Whole-corpus encode timings plus the id-equality checks against the Rust encoders."""

    stats: dict[str, Stat]
    tokens: int
    checks: dict[str, bool]


def whole_text(
    model: Model, text: str, repeats: int, artifact: str | None, *, with_hf: bool = True
) -> TextResults:
    """Encode all of `text` cold and warm with each implementation, and the split alone.

    "regex" is the bare ``regex`` pass with the Unicode pattern; "split" is bpetite's
    pre-tokenizer, which runs the pattern's ASCII twin when the text is ASCII.

    tiktoken keeps no chunk cache, so its "cold" (first encode on a fresh ``Encoding``)
    mostly measures its regex engine warming up; its warm figure is its steady speed.
    HF's BPE model does cache words, like bpetite.
    """
    builders: dict[str, Callable[[], Callable[[str], list[int]]]] = {
        "bpetite": lambda: Tokenizer(model.merges).encode,
    }
    if _rust.available("tiktoken"):
        builders["tiktoken"] = lambda: _tiktoken_encode(model)
    if with_hf and _rust.available("tokenizers"):
        builders["hf"] = lambda: _hf_encode(model)

    samples: dict[str, list[float]] = {"regex": [], "split": []}
    split = Tokenizer(model.merges).split_pattern.split
    for name in builders:
        samples[f"{name}_cold"] = []
        samples[f"{name}_warm"] = []
    if artifact:
        samples["load"] = []
    expected: list[int] = []
    checks: dict[str, bool] = {}
    hf_split: Any = None
    if "hf" in builders:
        # HF's own pre-tokenizer alone, to show how much of its encode time it is.
        hf_split = _rust.hf_pre_tokenizer()
        samples["hf_pretokenize"] = []
    for _ in range(repeats):
        samples["regex"].append(time_call(lambda: PRETOKENIZER.findall(text)))
        samples["split"].append(time_call(lambda: split(text)))
        if hf_split is not None:
            samples["hf_pretokenize"].append(time_call(lambda: hf_split.pre_tokenize_str(text)))
        for name, build in builders.items():
            encode = build()
            box: list[list[int]] = []
            samples[f"{name}_cold"].append(time_call(partial(_keep, box, encode, text)))
            samples[f"{name}_warm"].append(time_call(partial(_keep, box, encode, text)))
            if name == "bpetite":
                expected = box[0]
                checks.setdefault("bpetite_warm_equals_cold", box[0] == box[1])
            else:
                checks.setdefault(f"{name}_ids_equal_bpetite", box[0] == expected)
        if artifact:
            samples["load"].append(time_call(lambda: Tokenizer.load(artifact)))
    stats = {name: Stat(tuple(values)) for name, values in samples.items()}
    return TextResults(stats, len(expected), checks)


def long_chunk(model: Model, letters: str, sizes: Sequence[int], repeats: int) -> dict[str, Stat]:
    """Encode one chunk of `size` letters (a single pre-token) with bpetite and tiktoken.

    Letters only, taken in order from the corpus, so real merges fire throughout; the
    pre-tokenizer keeps the whole run as one chunk, which no cache can help with.
    Before timing, bpetite's ids for each chunk are checked against tiktoken's.
    """
    encoding = (
        _rust.tiktoken_encoding(model.vocab, model.special_id)
        if _rust.available("tiktoken")
        else None
    )
    chunks = {size: letters[:size] for size in sizes}
    for size, chunk in chunks.items():
        if len(chunk) != size or len(PRETOKENIZER.findall(chunk)) != 1:
            raise RuntimeError(f"could not build a single {size}-letter chunk from the corpus")
    if encoding is not None:
        for size, chunk in chunks.items():
            if Tokenizer(model.merges).encode(chunk) != encoding.encode(chunk):
                raise RuntimeError(
                    f"tiktoken's ids for the {size}-letter chunk differ from bpetite's"
                )
    samples: dict[str, list[float]] = {}
    # Sizes interleaved within each repeat, so the growth ratios can be paired.
    for _ in range(repeats):
        for size, chunk in chunks.items():
            encode = Tokenizer(model.merges).encode
            samples.setdefault(f"bpetite_{size}", []).append(time_call(partial(encode, chunk)))
            if encoding is not None:
                samples.setdefault(f"tiktoken_{size}", []).append(
                    time_call(partial(encoding.encode, chunk))
                )
    return {name: Stat(tuple(values)) for name, values in samples.items()}


def _keep(box: list[list[int]], encode: Callable[[str], list[int]], text: str) -> None:
    """Encode inside the timing and keep the ids, so the runs can be checked afterwards."""
    box.append(encode(text))


#: Per script of the multilingual text: its letters, and whether words are spaced.
_SCRIPTS: dict[str, tuple[str, bool]] = {
    "latin": ("abcdefghijklmnopqrstuvwxyzàâçéèêëîïôûùüÿœæäößñáíóú", True),
    "cyrillic": ("".join(map(chr, range(ord("а"), ord("я") + 1))), True),
    "greek": ("".join(map(chr, range(ord("α"), ord("ω") + 1))) + "άέήίόύώ", True),
    "arabic": ("".join(map(chr, range(ord("ء"), ord("ي") + 1))), True),
    "devanagari": ("".join(map(chr, range(ord("क"), ord("ह") + 1))) + "ािीुूेैोौं्", True),
    "han": ("".join(map(chr, range(0x4E00, 0x5000))), False),
    "kana": ("".join(map(chr, range(ord("ぁ"), ord("ゖ") + 1))) + "ァィゥェォカキクケコ", False),
    "hangul": ("".join(map(chr, range(0xAC00, 0xAC00 + 2000))), True),
    "thai": ("".join(map(chr, range(ord("ก"), ord("ฮ") + 1))) + "ะาำิีึืุู่้๊๋", False),
}
_EMOJI = ("😀", "👍🏽", "👨\u200d👩\u200d👧\u200d👦", "🇫🇷", "❤️", "🎉", "🚀", "e\u0301", "n\u0303")
_PUNCTUATION = (".", ",", "!", "?", ";", ":", "—", "«", "»", "「", "」", "。", "、", "(", ")", "'s")


def multilingual_text(english: str, size: int = 1_000_000, seed: int = 17) -> str:
    """About `size` characters of many scripts, reproducible from `english` and `seed`.

    Three lines in ten are lines of `english` (TinyShakespeare); the others are words
    of one script (Latin with accents, Cyrillic, Greek, Arabic, Devanagari with its
    combining signs, Han, kana, Hangul, Thai), some unspaced as those scripts are,
    with punctuation, emoji (skin tones, ZWJ families, flags), combining accents and
    numbers mixed in; lines end in CRLF. Letters and words are drawn with Zipf's law
    from a lexicon per script, so, as in real text, words repeat and most are rare.
    """
    rng = random.Random(seed)
    lexicons: dict[str, tuple[list[str], list[float]]] = {}
    for name, (letters, _) in _SCRIPTS.items():
        order = rng.sample(letters, len(letters))
        letter_weights = [1 / (rank + 1) for rank in range(len(order))]
        words = sorted(
            {"".join(rng.choices(order, letter_weights, k=rng.randint(1, 7))) for _ in range(3000)}
        )
        lexicons[name] = (words, [1 / (rank + 1) for rank in range(len(words))])
    english_lines = [line for line in english.splitlines() if line.strip()]
    lines: list[str] = []
    total = 0
    while total < size:
        if rng.random() < 0.3:
            line = rng.choice(english_lines)
        else:
            name = rng.choice(list(_SCRIPTS))
            words, weights = lexicons[name]
            spaced = _SCRIPTS[name][1]
            parts: list[str] = []
            for word in rng.choices(words, weights, k=rng.randint(3, 14)):
                parts.append(word)
                roll = rng.random()
                if roll < 0.08:
                    parts.append(rng.choice(_PUNCTUATION))
                elif roll < 0.12:
                    parts.append(rng.choice(_EMOJI))
                elif roll < 0.15:
                    parts.append(str(rng.randint(0, 10 ** rng.randint(1, 6))))
                if spaced:
                    parts.append(" ")
            line = "".join(parts).rstrip()
        if rng.random() < 0.05:
            line = "    " + line
        lines.append(line)
        total += len(line) + 2
    return "\r\n".join(lines) + "\r\n"


def corpus_letters(text: str) -> str:
    return "".join(char for char in text if char.isalpha())


def _tiktoken_encode(model: Model) -> Callable[[str], list[int]]:
    encoding: Any = _rust.tiktoken_encoding(model.vocab, model.special_id)

    def encode(text: str) -> list[int]:
        ids: list[int] = encoding.encode(text, allowed_special="all")
        return ids

    return encode


def _hf_encode(model: Model) -> Callable[[str], list[int]]:
    tokenizer: Any = _rust.hf_encoder(model.vocab, model.merges)

    def encode(text: str) -> list[int]:
        ids: list[int] = tokenizer.encode(text, add_special_tokens=False).ids
        return ids

    return encode
