"""The public Tokenizer: a merge list, a split pattern and special tokens, and what follows.

The merge list is the model: ids 0..255 are the bytes, merge ``r`` makes id ``256 + r``
from two lower ids. The model's fields are checked once, by ``_model.define``; the
vocabulary, the encoder and the decoder are derived from them once, here, and exposed
read-only, so no caller ever needs a private attribute. Batches (``_batches``) and
vocabulary surgery (``_surgery``) live in their own modules; their methods here hand
them the model.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from importlib import import_module
from itertools import chain
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Literal, Self, TypeVar, overload

from bpetite.core import _artifact, _surgery
from bpetite.core._atomic import write_atomically
from bpetite.core._batches import (
    checked_id_lists,
    checked_texts,
    checked_threads,
    map_in_threads,
)
from bpetite.core._budget import Budget
from bpetite.core._constants import BASE_VOCAB_SIZE, END_OF_TEXT_TOKEN, MAX_VOCAB_SIZE
from bpetite.core._decoder import (
    StreamDecoder,
    checked_errors,
    checked_id,
    decode_bytes,
    decode_text,
    decode_with_offsets,
    token_spans,
    tokens_bytes,
    unknown_id,
)
from bpetite.core._encoder import Encoder
from bpetite.core._errors import (
    ArtifactError,
    NotATokenError,
    ParameterError,
    UnknownTokenError,
)
from bpetite.core._gc import gc_paused
from bpetite.core._ids import IdEncoder, skipped_ids
from bpetite.core._model import (
    IDENTITY_BYTE_ORDER,
    TRAINING_LEAST_BECAUSE,
    TRAINING_OPTIONS,
    LearnedIndexedMerges,
    LearnedMerges,
    Merge,
    Merges,
    Model,
    check_special_tokens,
    define,
    mergeable_tokens,
)
from bpetite.core._patterns import SplitPattern, resolve_pattern
from bpetite.core._pretokenizer import count_chunks, require_utf8
from bpetite.core._progress import ProgressCallback
from bpetite.core._specials import SpecialMatch, SpecialPolicy, SpecialTokens
from bpetite.core._token_budget import TokenBudget, check_budget, check_overlap
from bpetite.core._trainer import check_limit, check_vocab_size, train_merges
from bpetite.core._unicode import checked_text, encode_invalid_utf8
from bpetite.core._unstable import (
    TokenOrder,
    all_space,
    completions,
    last_chunk_length,
    token_order,
    widened_end,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from bpetite.visualize import Explanation  # the type only: see explain()

#: What a tokenizer shows of itself in a notebook, then its first special token: words,
#: digits, whitespace, an accented word and an emoji (often split across tokens).
NOTEBOOK_SAMPLE: Final = "Hello world! Tokenizers split text  into 1,234 pieces: café 👋\n"

#: The spec's special tokens: exactly ``<|endoftext|>``, right after the merges.
DEFAULT_SPECIAL_TOKENS: Final = (END_OF_TEXT_TOKEN,)


class Tokenizer:
    """A byte-level BPE tokenizer: train one, or load one, then encode and decode.

    Every attribute is read-only; a tokenizer never changes after it is built, so one
    instance is safe to share (its chunk cache is only a cache).

    >>> tokenizer = Tokenizer.train("ab ab ab", vocab_size=258)
    >>> tokenizer.merges
    ((97, 98), (32, 256))
    >>> tokenizer.encode("ab<|endoftext|>"), tokenizer.n_vocab
    ([256, 258], 259)
    """

    #: The most mergeable tokens training makes (every id must fit in a character): a
    #: larger ``vocab_size`` trains as far as the pairs go, as the specification says,
    #: and a corpus with pairs for more tokens is refused rather than cut short.
    MAX_VOCAB_SIZE: Final = MAX_VOCAB_SIZE

    __slots__ = (
        "_encoder",
        "_hash",
        "_model",
        "_special_ids",
        "_specials",
        "_token_ids",
        "_token_order",
        "_tokens",
        "_vocab",
        "_vocab_view",
    )

    def __init__(
        self,
        merges: Sequence[Merge],
        *,
        pattern: str | SplitPattern = "gpt2",
        special_tokens: Sequence[str] | Mapping[str, int] = DEFAULT_SPECIAL_TOKENS,
        byte_order: Sequence[int] | None = None,
        training: Mapping[str, int] | None = None,
        name: str | None = None,
    ) -> None:
        """Build from a merge list; most callers want :meth:`train` or :meth:`load`.

        Merge ``r`` may only join ids below its own id ``256 + r``, which is what makes
        the vocabulary well defined. `pattern` is a preset name (``gpt2``, ``cl100k``,
        ``o200k``) or a regex. `special_tokens` is a sequence of distinct texts, which
        take the ids after the mergeable vocabulary in order, or a mapping from text to
        id for a vocabulary whose specials sit elsewhere: any id from 256 on. An id among
        the merged tokens' is skipped by them (p50k_base's ``<|endoftext|>`` at 50256:
        merge ``r`` then makes the ``256 + r``-th id no special token holds), and two
        texts given one id are aliases, the id decoding to the first. `byte_order` is for
        imported vocabularies (GPT-2, ``cl100k_base``) whose ids 0..255 are the bytes in
        another order: ``byte_order[i]`` is the byte of id ``i``; by default id ``i`` is
        byte ``i``.
        `training` records the options the merges were learned with
        (``max_token_bytes``, ``min_frequency``); it changes no id, and the artifact
        keeps it. `name` is a label such as ``"cl100k_base"`` (tiktoken's ``name``); it
        changes no id. Anything inconsistent raises ParameterError naming it.
        """
        with gc_paused():  # see _gc: the tables below are large and acyclic
            self._build(
                define(
                    merges,
                    pattern=pattern,
                    special_tokens=special_tokens,
                    byte_order=byte_order,
                    training=training,
                    name=name,
                )
            )

    @classmethod
    def _from_model(cls, model: Model) -> Self:
        """A tokenizer of a model :func:`~bpetite.core._model.define` checked already."""
        tokenizer = cls.__new__(cls)  # no second check: __init__ is define() and _build
        with gc_paused():
            cls._build(tokenizer, model)
        return tokenizer

    @classmethod
    def _from_artifact(cls, model: Model, source: str) -> Self:
        """:meth:`_from_model` for a loaded file: what building refuses is the file's."""
        try:
            return cls._from_model(model)
        except ParameterError as error:  # tokens too large in all (mergeable_tokens)
            raise ArtifactError(f"{source}: {error}") from None

    def _build(self, model: Model) -> None:
        """Derive every table from the checked model."""
        self._model = model
        self._hash: int | None = None
        vocab = mergeable_tokens(model.indexed, model.byte_order)  # by index
        self._special_ids = model.special_tokens
        self._specials = SpecialTokens(model.special_tokens)
        self._vocab: dict[int, bytes] = dict(zip(model.mergeable_ids, vocab, strict=True))
        self._vocab.update(model.special_bytes())
        self._vocab_view: Mapping[int, bytes] = MappingProxyType(self._vocab)
        self._token_ids: dict[bytes, int] | None = None  # made on first use: _mergeable_ids
        self._token_order: TokenOrder | None = None  # made on first use: encode_with_unstable
        # For the encoder, built on first use (see __getattr__). A tuple, which the
        # collector stops scanning after its first pass; a list it would scan at each.
        self._tokens = tuple(vocab)

    def _build_encoder(self) -> Encoder | IdEncoder:
        """The encoder's tables, from the model and its tokens' bytes by index."""
        model = self._model
        byte_ids = None
        if model.byte_order != IDENTITY_BYTE_ORDER:
            byte_ids = bytes(sorted(range(BASE_VOCAB_SIZE), key=model.byte_order.__getitem__))
        trained = isinstance(model.indexed, LearnedMerges)
        with gc_paused():
            encoder = Encoder(
                model.indexed, self._tokens, model.pattern.split, byte_ids, trained=trained
            )
        # The encoder works in indices; where the mergeable ids skip a special token's,
        # its results are mapped to ids (core/_ids.py).
        if isinstance(model.mergeable_ids, range):
            return encoder
        return IdEncoder(encoder, model.mergeable_ids)

    if not TYPE_CHECKING:  # to a type checker, the slot below is a plain attribute

        def __getattr__(self, name: str) -> Any:
            """Build the encoder when it is first used (Python asks here only while the
            ``_encoder`` slot is empty), so that a model trained, saved, extended or
            inspected without encoding anything never pays for the encoder's tables."""
            if name != "_encoder":
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            self._encoder = self._build_encoder()
            return self._encoder

    _encoder: Encoder | IdEncoder

    def __reduce__(self) -> tuple[Callable[..., Tokenizer], tuple[Any, ...]]:
        """Pickle as the definition, not the tables: a worker process rebuilds them."""
        model = self._model
        pattern = model.pattern.name if model.pattern.is_preset else model.pattern.source
        return _rebuild, (
            model.merges,
            pattern,
            dict(model.special_tokens),
            model.byte_order,
            dict(model.training),
            model.name,
        )

    # ------------------------------------------------------------------ building

    @classmethod
    def train(
        cls,
        corpus: str,
        vocab_size: int,
        *,
        pattern: str | SplitPattern = "gpt2",
        special_tokens: Sequence[str] | Mapping[str, int] = DEFAULT_SPECIAL_TOKENS,
        progress: ProgressCallback | None = None,
        max_token_bytes: int | None = None,
        min_frequency: int | None = None,
    ) -> Self:
        """Learn up to ``vocab_size - 256`` merges from `corpus` (fewer if it runs out of pairs).

        Special-token texts inside the corpus are ordinary text: the specials are
        reserved after training, at the ids past the mergeable vocabulary. `progress`
        receives :class:`~bpetite.Progress` events for the merge loop. No token longer
        than `max_token_bytes` bytes is made, and training stops when the best pair
        occurs fewer than `min_frequency` times (both off by default).
        """
        if not isinstance(corpus, str):
            raise TypeError(f"corpus must be a str, got {type(corpus).__name__}")
        _check_training_keywords(vocab_size, max_token_bytes, min_frequency)
        split = resolve_pattern(pattern)
        return cls._learn(
            count_chunks([corpus], pattern=split),  # which checks the corpus is valid text
            vocab_size,
            split,
            special_tokens,
            progress,
            max_token_bytes,
            min_frequency,
        )

    @classmethod
    def train_from_counts(
        cls,
        counts: Mapping[bytes, int],
        vocab_size: int,
        *,
        pattern: str | SplitPattern = "gpt2",
        special_tokens: Sequence[str] | Mapping[str, int] = DEFAULT_SPECIAL_TOKENS,
        progress: ProgressCallback | None = None,
        max_token_bytes: int | None = None,
        min_frequency: int | None = None,
    ) -> Self:
        """Learn merges from chunk counts: how often each pre-tokenized chunk occurs.

        ``Tokenizer.train(text, n)`` is ``train_from_counts(count_chunks([text]), n)``,
        so a caller can count with its own pipeline (several machines, a database) and
        add the counts up. `pattern` is recorded in the tokenizer; it should be the
        pattern the chunks were cut with.

        >>> from bpetite import count_chunks
        >>> Tokenizer.train_from_counts({b"ab": 3, b" ab": 2}, 258).merges
        ((97, 98), (32, 256))
        """
        _check_training_keywords(vocab_size, max_token_bytes, min_frequency)
        split = resolve_pattern(pattern)
        return cls._learn(
            _checked_counts(counts),
            vocab_size,
            split,
            special_tokens,
            progress,
            max_token_bytes,
            min_frequency,
        )

    @classmethod
    def train_from_iterator(
        cls,
        iterator: Iterable[str],
        vocab_size: int,
        *,
        pattern: str | SplitPattern = "gpt2",
        special_tokens: Sequence[str] | Mapping[str, int] = DEFAULT_SPECIAL_TOKENS,
        progress: ProgressCallback | None = None,
        max_token_bytes: int | None = None,
        min_frequency: int | None = None,
        max_chars: int | None = None,
        doc_cap: int | None = None,
    ) -> Self:
        """Learn merges from documents, one per item, read once (Hugging Face's name).

        Any iterable of ``str`` works: a generator, a database cursor, a streamed
        ``datasets`` split. Each item is counted as it arrives and then dropped, so
        memory grows with the number of distinct chunks, not with the corpus; no chunk
        spans two items. The result equals :meth:`train_from_counts` on
        :func:`~bpetite.count_chunks` of the same items, and
        :func:`~bpetite.train_files` on the same items written as files.

        `pattern`, `special_tokens`, `progress`, `max_token_bytes` and `min_frequency`
        are :meth:`train`'s, checked before the first item is read. `doc_cap` and
        `max_chars` are nanochat's (``scripts/tok_train.py``): each document is cut to
        its first `doc_cap` characters, and documents are read until the one that
        takes the running total of characters past `max_chars`, that one included;
        no item after it is read.

        >>> Tokenizer.train_from_iterator(iter(["ab", "ab"]), 257).merges
        ((97, 98),)
        >>> Tokenizer.train_from_iterator(["abab", "cdcd"], 257, doc_cap=2).merges
        ((97, 98),)
        """
        if isinstance(iterator, (str, bytes)):
            raise TypeError(
                "train_from_iterator() takes an iterable of documents, not one string: write [text]"
            )
        _check_training_keywords(vocab_size, max_token_bytes, min_frequency)
        budget = Budget(max_chars=max_chars, doc_cap=doc_cap)
        split = resolve_pattern(pattern)
        check_special_tokens(special_tokens, BASE_VOCAB_SIZE)  # now, not after reading

        def documents() -> Iterator[str]:
            for index, document in enumerate(iterator):
                if not isinstance(document, str):
                    raise TypeError(
                        "train_from_iterator() takes documents (str), got "
                        f"{type(document).__name__} at item {index}"
                    )
                yield document

        def checked(capped: Iterable[str]) -> Iterator[str]:
            for index, document in enumerate(capped):
                require_utf8(document, f"document {index}")  # a message naming the item
                yield document

        return cls._learn(
            count_chunks(checked(budget.apply(documents())), pattern=split),
            vocab_size,
            split,
            special_tokens,
            progress,
            max_token_bytes,
            min_frequency,
        )

    @classmethod
    def _learn(
        cls,
        counts: Mapping[bytes, int],
        vocab_size: int,
        split: SplitPattern,
        special_tokens: Sequence[str] | Mapping[str, int],
        progress: ProgressCallback | None,
        max_token_bytes: int | None,
        min_frequency: int | None,
    ) -> Self:
        """What every training method ends with: the merges learned from `counts`.

        The training keywords were checked at the method's boundary.
        """
        merges = train_merges(
            counts,
            vocab_size,
            progress,
            max_token_bytes=max_token_bytes,
            min_frequency=min_frequency,
        )
        training = {
            name: value
            for name, value in (
                ("max_token_bytes", max_token_bytes),
                ("min_frequency", min_frequency),
            )
            if value is not None
        }
        learned: Merges = LearnedMerges(merges)  # valid by construction, every token whole
        count = BASE_VOCAB_SIZE + len(merges)
        if skipped_ids(count, check_special_tokens(special_tokens, count).values()):
            # A special id among the learned tokens': they take the ids it leaves free.
            learned = LearnedIndexedMerges(merges)
        return cls._from_model(
            define(learned, pattern=split, special_tokens=special_tokens, training=training)
        )

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        max_bytes: int = _artifact.MAX_ARTIFACT_BYTES,
        trust_custom_pattern: bool = False,
    ) -> Self:
        """Read and fully validate an artifact (schema v1 or v2); a bad one raises ArtifactError.

        A file over `max_bytes` (64 MiB by default, six times an o200k-sized artifact)
        is refused before it is read; raise the limit for a trusted larger file. A
        custom split pattern is a regex that runs on every text encoded, so an
        artifact holding one is refused unless `trust_custom_pattern` is true.
        """
        artifact = _artifact.load(
            os.fspath(path), max_bytes=max_bytes, trust_custom_pattern=trust_custom_pattern
        )
        # The loader's last step is the constructor's own check of the model's fields.
        return cls._from_artifact(artifact.model, os.fspath(path))

    @classmethod
    def loads(
        cls,
        data: bytes | str,
        *,
        max_bytes: int = _artifact.MAX_ARTIFACT_BYTES,
        trust_custom_pattern: bool = False,
    ) -> Self:
        """The tokenizer of an artifact held in memory: the inverse of :meth:`dumps`.

        The same checks as :meth:`load`, the errors naming ``<bytes>`` where a file's
        would name the file; a ``str`` is the artifact's JSON text.

        >>> tokenizer = Tokenizer.train("ab ab ab", 258)
        >>> Tokenizer.loads(tokenizer.dumps()) == tokenizer
        True
        """
        if isinstance(data, str):
            data = data.encode("utf-8", errors="surrogatepass")  # a lone surrogate fails the parse
        elif isinstance(data, (bytearray, memoryview)):
            data = bytes(data)
        elif not isinstance(data, bytes):
            raise TypeError(f"loads() takes the bytes dumps() returns, got {type(data).__name__}")
        artifact = _artifact.loads(
            data, max_bytes=max_bytes, trust_custom_pattern=trust_custom_pattern
        )
        return cls._from_artifact(artifact.model, _artifact.MEMORY_SOURCE)

    def save(self, path: str | os.PathLike[str], overwrite: bool = False) -> None:
        """Write the versioned JSON artifact atomically; an existing file needs `overwrite`.

        The spec's configuration (GPT-2's pattern, only ``<|endoftext|>``) is written as
        schema v1, byte for byte; any other pattern or special tokens as schema v2.
        """
        if not isinstance(overwrite, bool):
            raise TypeError(f"overwrite must be True or False, got {overwrite!r}")
        write_atomically(path, self.dumps(), overwrite=overwrite)

    def dumps(self) -> bytes:
        """The artifact :meth:`save` writes, as bytes: equal tokenizers trained with the
        same options (:attr:`training`) give equal bytes.

        >>> Tokenizer.train("ab ab ab", 258).dumps()[:48]
        b'{"mergeable_vocab_size":258,"merges":[[97,98],[3'
        """
        model = self._model
        return _artifact.dumps_artifact(
            self._vocab,
            model.merges,
            dict(model.special_tokens),
            pattern=model.pattern,
            byte_order=model.byte_order,
            training=model.training,
            checked=True,  # the model passed define(); parsing it again would only repeat it
        )

    # ------------------------------------------------------------------ the model

    @property
    def merges(self) -> tuple[Merge, ...]:
        """The merges in rank order: merge ``r`` joins ``(left, right)`` into id ``256 + r``,
        or, where special tokens hold ids among the merged tokens', the ``256 + r``-th id
        no special token holds."""
        return self._model.merges

    @property
    def vocab(self) -> Mapping[int, bytes]:
        """Every id's bytes, special tokens included (a read-only view)."""
        return self._vocab_view

    @property
    def special_tokens(self) -> Mapping[str, int]:
        """Each special token's text and id, in order (a read-only view)."""
        return self._special_ids

    @property
    def mergeable_vocab_size(self) -> int:
        """The byte tokens plus the merges: how many tokens ordinary text can encode to."""
        return self._model.mergeable_size

    @property
    def byte_order(self) -> tuple[int, ...]:
        """The byte each of the ids 0..255 stands for: ``(0, 1, ..., 255)`` unless imported."""
        return self._model.byte_order

    @property
    def training(self) -> Mapping[str, int]:
        """The options the merges were learned with, if any (a read-only view)."""
        return self._model.training

    @property
    def name(self) -> str | None:
        """The label given when the tokenizer was built (``get_encoding``'s name), or None."""
        return self._model.name

    @property
    def pattern(self) -> str:
        """The split pattern's regex source."""
        return self._model.pattern.source

    @property
    def pattern_name(self) -> str:
        """The split pattern's preset name (``gpt2``, ``cl100k``, ``o200k``) or ``custom``."""
        return self._model.pattern.name

    @property
    def split_pattern(self) -> SplitPattern:
        """The split pattern as a value, to pass to :func:`~bpetite.count_chunks`."""
        return self._model.pattern

    # ------------------------------------------------------------------ encoding
    # Each variant that honours special tokens goes through _encoded_segments, which
    # checks the text as the ordinary variants do (_valid_text).

    def encode(
        self,
        text: str,
        *,
        allowed_special: SpecialPolicy = "all",
        disallowed_special: SpecialPolicy = "all",
        errors: str = "strict",
    ) -> list[int]:
        """Return the ids of `text`; by default every special token's text becomes its id.

        That default is the specification's, and it means text from an untrusted user
        can inject special tokens. tiktoken's safe mode is one keyword away:
        ``allowed_special=set(), disallowed_special="all"`` raises
        :class:`~bpetite.DisallowedSpecialError` when the text holds one, and
        :meth:`encode_ordinary` reads every character as text. Where specials overlap,
        the leftmost wins, then the longest.

        The policy follows tiktoken's rules: ``disallowed_special="all"`` means every
        special token not allowed, so ``allowed_special=set()`` alone raises on a
        special token's text, as tiktoken does; a text named in a
        ``disallowed_special`` collection raises even if it is also allowed; a name that
        is no special token is ignored in ``allowed_special``; ``disallowed_special=None``
        checks nothing, as ``()`` does.

        A ``str`` holding a lone surrogate is not valid text and raises
        UnicodeEncodeError (``errors="strict"``); ``errors="replace"`` repairs it as
        tiktoken does: a surrogate pair becomes its character, a lone surrogate U+FFFD.
        """
        parts = self._encoded_segments(
            text,
            "encode",
            allowed_special,
            disallowed_special,
            errors,
            ordinary=self._encoder.encode_text,
            special=_one_id,
        )
        return parts[0] if len(parts) == 1 else list(chain.from_iterable(parts))

    def _encoded_segments(
        self,
        text: object,
        method: str,
        allowed_special: SpecialPolicy,
        disallowed_special: SpecialPolicy,
        errors: str,
        *,
        ordinary: Callable[[str], _Part],
        special: Callable[[SpecialMatch], _Part],
    ) -> list[_Part]:
        """The one path of every encode variant: check `text` and the policy, then give
        each part of the text its result, in order.

        A segment (a run of text between allowed special tokens) gives
        ``ordinary(segment)``, a special token ``special(its match)`` (its id, and its
        text as written there: an alias's own); the caller joins the
        results (a list of ids, a count, packed bytes). A text with no allowed special
        in it, the usual case, is one segment.
        """
        text = _valid_text(text, method, errors)
        specials = self._specials
        allowed, disallowed = specials.resolve(allowed_special, disallowed_special)
        if disallowed:
            specials.check_disallowed(text, disallowed)
        if not specials.occur_in(text, allowed):
            return [ordinary(text)]
        return [
            ordinary(segment) if isinstance(segment, str) else special(segment)
            for segment in specials.segments(text, allowed)
        ]

    def encode_ordinary(self, text: str, *, errors: str = "strict") -> list[int]:
        """Return the ids of `text` with every character ordinary, special texts included.

        `errors` is :meth:`encode`'s: ``"replace"`` repairs lone surrogates as tiktoken.
        """
        return self._encoder.encode_text(_valid_text(text, "encode_ordinary", errors))

    def encode_ordinary_array(self, text: str, typecode: str = "I") -> array[int]:
        """Return ``encode_ordinary(text)`` as an ``array.array`` of `typecode`.

        The form a dataset file or numpy wants (``numpy.frombuffer(result, numpy.uint32)``
        for the default ``"I"``), made without a Python int per id: each chunk's ids are
        cached already packed. `typecode` is an unsigned one (``B``, ``H``, ``I``, ``L``,
        ``Q``); an id it cannot hold raises OverflowError.

        >>> Tokenizer.train("ab ab", vocab_size=257).encode_ordinary_array("ab ab", "H")
        array('H', [256, 32, 256])
        """
        if not isinstance(text, str):
            raise TypeError(f"encode_ordinary_array() takes a str, got {type(text).__name__}")
        if typecode not in _UNSIGNED_TYPECODES:
            raise ParameterError(
                f"typecode must be one of {', '.join(map(repr, _UNSIGNED_TYPECODES))} "
                f"(unsigned integers), got {typecode!r}"
            )
        text = _valid_text(text, "encode_ordinary_array")
        ids = array(typecode)
        ids.frombytes(self._encoder.encode_text_packed(text, typecode))
        return ids

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: SpecialPolicy = "all",
        disallowed_special: SpecialPolicy = "all",
        errors: str = "strict",
    ) -> npt.NDArray[np.uint32]:
        """Return ``encode(text, ...)`` as a read-only ``numpy`` array of ``uint32`` (tiktoken's).

        Made from each chunk's ids cached already packed, with no Python int per id.
        numpy is imported here, only when this method is called.

        >>> Tokenizer.train("ab ab", 257).encode_to_numpy("ab ab").tolist()
        [256, 32, 256]
        """
        import numpy as np  # only here: numpy is not a dependency of bpetite

        packed = self._encoder.encode_text_packed
        parts = self._encoded_segments(
            text,
            "encode_to_numpy",
            allowed_special,
            disallowed_special,
            errors,
            ordinary=lambda run: packed(run, _UINT32),
            special=lambda match: array(_UINT32, [match.token_id]).tobytes(),
        )
        return np.frombuffer(b"".join(parts), dtype=np.uint32)

    def count_tokens(
        self,
        text: str,
        *,
        allowed_special: SpecialPolicy = "all",
        disallowed_special: SpecialPolicy = "all",
        errors: str = "strict",
    ) -> int:
        """Return ``len(self.encode(text, ...))`` without making the list of ids.

        The same keywords as :meth:`encode`; each chunk's count comes from the same
        cache :meth:`encode` reads, so the two never disagree.

        >>> Tokenizer.train("ab ab", 257).count_tokens("ab ab<|endoftext|>")
        4
        """
        return sum(
            self._encoded_segments(
                text,
                "count_tokens",
                allowed_special,
                disallowed_special,
                errors,
                ordinary=self._encoder.count_text,
                special=_one,
            )
        )

    def encode_with_offsets(
        self,
        text: str,
        *,
        allowed_special: SpecialPolicy = "all",
        disallowed_special: SpecialPolicy = "all",
    ) -> tuple[list[int], list[tuple[int, int]]]:
        """Return ``encode(text, ...)`` and each token's ``(start, end)`` span in `text`.

        Spans count characters (``str`` indices). A token's span is the smallest slice
        of `text` holding all its bytes: ``text[start:end]`` is exactly the token's text
        unless the token starts or ends inside a character; then the span includes that
        whole character, so the tokens sharing a character each include it and their
        spans overlap by one. Every start is what :meth:`decode_with_offsets` gives.

        >>> tokenizer = Tokenizer.train("héllo", 256)
        >>> tokenizer.encode_with_offsets("hé!")
        ([104, 195, 169, 33], [(0, 1), (1, 2), (1, 2), (2, 3)])
        """
        vocab, encode_text = self._vocab, self._encoder.encode_text

        def ordinary(segment: str) -> _Spanned:
            ids = encode_text(segment)
            return ids, token_spans(ids, vocab), len(segment)

        def special(match: SpecialMatch) -> _Spanned:
            # Its span is the text it was written as: an alias's, not its id's bytes.
            return [match.token_id], [(0, len(match.text))], len(match.text)

        parts = self._encoded_segments(
            text,
            "encode_with_offsets",
            allowed_special,
            disallowed_special,
            "strict",
            ordinary=ordinary,
            special=special,
        )
        if len(parts) == 1:
            return parts[0][0], parts[0][1]
        ids: list[int] = []
        spans: list[tuple[int, int]] = []
        start = 0  # where the part begins in `text`
        for part_ids, part_spans, length in parts:
            ids += part_ids
            spans += [(begin + start, end + start) for begin, end in part_spans]
            start += length
        return ids, spans

    def encode_bytes(self, data: bytes) -> list[int]:
        """Return ids whose bytes are exactly `data`, UTF-8 or not (tiktoken's ``_encode_bytes``).

        Valid UTF-8 encodes as its text, every character ordinary. Otherwise the valid
        prefix is encoded as text and the rest (with the prefix's last chunk) is merged
        as one chunk: for a text cut inside a character, the ids the whole text would
        most likely start with. tiktoken's results, id for id.

        >>> tokenizer = Tokenizer.train("é é", 257)
        >>> tokenizer.encode_bytes("a é".encode()[:-1])
        [97, 32, 195]
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"encode_bytes() takes bytes, got {type(data).__name__}")
        return encode_invalid_utf8(
            bytes(data),
            split=self._model.pattern.split,
            encode_ordinary=self._encoder.encode_text,
            encode_chunk=self._encoder.encode_chunk,
            mergeable_id=self._mergeable_ids().get,
            token_bytes=self._vocab.__getitem__,
        )

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: SpecialPolicy = (),
        disallowed_special: SpecialPolicy = "all",
    ) -> tuple[list[int], list[list[int]]]:
        """tiktoken's ``encode_with_unstable``: the ids of `text` that more text cannot
        change, and every token sequence its unstable end may start, sorted.

        The unstable end is the last chunk, with any whitespace-only tokens before it;
        ``core/_unstable.py`` says how the sequences are found. tiktoken's results, id
        for id, and its defaults: a special token's text raises
        :class:`~bpetite.DisallowedSpecialError` unless allowed.

        >>> tokenizer = Tokenizer.train("hello help hello", 265)
        >>> stable, endings = tokenizer.encode_with_unstable("hello hel")
        >>> tokenizer.decode(stable), [tokenizer.decode(ids) for ids in endings]
        ('hello', [' hel', ' help', ' hello'])
        """
        vocab, specials = self._vocab, self._specials.id_set
        split, encode_chunk = self._model.pattern.split, self._encoder.encode_chunk

        # Each part's ids, and its text if ordinary: only the last one's is split again.
        def ordinary(segment: str) -> tuple[list[int], str | None]:
            return self._encoder.encode_text(segment), segment

        def special(match: SpecialMatch) -> tuple[list[int], str | None]:
            return [match.token_id], None

        parts = self._encoded_segments(
            text,
            "encode_with_unstable",
            allowed_special,
            disallowed_special,
            "strict",
            ordinary=ordinary,
            special=special,
        )
        ids = list(chain.from_iterable(part for part, _ in parts))
        last = parts[-1][1]
        unstable = widened_end(
            ids,
            0 if last is None else last_chunk_length(last, split, encode_chunk),
            lambda token_id: token_id not in specials and all_space(vocab[token_id]),
        )
        if not unstable:
            return ids, []
        end = b"".join(vocab[token_id] for token_id in ids[-unstable:])
        del ids[-unstable:]
        token_ids = self._mergeable_ids()
        order = self._token_order
        if order is None:  # built whole, then published (see _mergeable_ids)
            order = self._token_order = token_order(token_ids)
        return ids, completions(
            end,
            order=order,
            token_id=token_ids.__getitem__,
            token_bytes=vocab.__getitem__,
            encode_ordinary=self._encoder.encode_text,
            encode_chunk=encode_chunk,
        )

    def encode_chunk(self, chunk: bytes) -> list[int]:
        """Return the ids BPE gives one pre-tokenized chunk's bytes, with no splitting.

        This is the merge step alone, for bytes that need not be valid UTF-8 (a token of
        part of a character): ``encode_chunk(tokenizer.token_bytes(i))`` is ``[i]`` for
        every merged token of a trained vocabulary.
        """
        if not isinstance(chunk, (bytes, bytearray)):
            raise TypeError(f"encode_chunk() takes bytes, got {type(chunk).__name__}")
        return self._encoder.encode_chunk(bytes(chunk))

    def encode_single_token(self, token: str | bytes) -> int:
        """Return the id of the one token whose bytes (or text) are exactly `token`.

        A special token's text, or its bytes, gives its id, so this inverts
        :meth:`token_bytes`. As in tiktoken, a mergeable token with the same bytes as a
        special one comes first. Raises NotATokenError (a KeyError) when `token` is not
        exactly one token.
        """
        if isinstance(token, str):
            require_utf8(token, "token")
            data = token.encode("utf-8")
        elif isinstance(token, (bytes, bytearray)):
            data = bytes(token)
        else:
            raise TypeError(
                f"encode_single_token() takes a str or bytes, got {type(token).__name__}"
            )
        found = self._mergeable_ids().get(data)
        if found is None and _is_utf8(data):
            found = self._special_ids.get(data.decode("utf-8"))
        if found is None:
            raise NotATokenError(f"{token!r} is not a single token of this vocabulary")
        return found

    # ------------------------------------------------------------------ token budgets and chat
    # Budgets are defined in core/_token_budget.py on the tokens of encode(text); chat
    # formats live above the core, in bpetite.chat, reached by name when called.

    def is_within_limit(
        self,
        text: str,
        max_tokens: int,
        *,
        allowed_special: SpecialPolicy = "all",
        disallowed_special: SpecialPolicy = "all",
    ) -> bool:
        """Whether ``count_tokens(text, ...) <= max_tokens``, encoding no more than it must.

        The text is split and encoded a chunk at a time and the answer is given at the
        first chunk that takes the count past `max_tokens`, so a text of megabytes
        against a limit of ten encodes a few chunks of it. gpt-tokenizer's
        ``isWithinTokenLimit`` returns the count or ``false``; in Python a count of 0
        would read as false, so this returns a bool (:meth:`count_tokens` gives the
        count). The keywords are :meth:`encode`'s, with its errors.

        >>> tokenizer = Tokenizer.train("ab ab", 257)
        >>> tokenizer.is_within_limit("ab ab", 3), tokenizer.is_within_limit("ab ab", 2)
        (True, False)
        """
        limit = check_budget(max_tokens, 0)
        return self._budget(
            text, "is_within_limit", allowed_special, disallowed_special
        ).within_limit(limit)

    def truncate(
        self,
        text: str,
        max_tokens: int,
        *,
        allowed_special: SpecialPolicy = "all",
        disallowed_special: SpecialPolicy = "all",
    ) -> str:
        """The longest prefix of `text` that ends where one of its tokens ends, within budget.

        Precisely: ``text[:end]`` for the largest ``end`` that is reached by at most
        `max_tokens` tokens of ``encode(text)``, where a token ends and a character ends
        (a token can end inside a character: none is ever cut), and whose text alone
        encodes to at most `max_tokens` tokens. So ``text.startswith(result)`` and
        ``count_tokens(result) <= max_tokens``, always. The text is encoded only as far
        as the budget reaches. The keywords are :meth:`encode`'s.

        >>> tokenizer = Tokenizer.train("ab ab", 257)
        >>> tokenizer.encode("ab abé"), tokenizer.truncate("ab abé", 4)
        ([256, 32, 256, 195, 169], 'ab ab')
        """
        limit = check_budget(max_tokens, 0)
        return self._budget(text, "truncate", allowed_special, disallowed_special).truncate(limit)

    def chunk(
        self,
        text: str,
        max_tokens: int,
        *,
        overlap: int = 0,
        allowed_special: SpecialPolicy = "all",
        disallowed_special: SpecialPolicy = "all",
    ) -> list[str]:
        """Cut `text` into pieces of at most `max_tokens` tokens each, never inside a character.

        The first of :meth:`chunk_with_offsets`' results: see there. With no `overlap`
        the pieces join back to the text. (The name is the one retrieval code uses; a
        piece is not a chunk of the split pattern, and usually holds many.)

        >>> Tokenizer.train("ab ab", 257).chunk("ab ab ab", 2)
        ['ab ', 'ab ', 'ab']
        """
        return self.chunk_with_offsets(
            text,
            max_tokens,
            overlap=overlap,
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
        )[0]

    def chunk_with_offsets(
        self,
        text: str,
        max_tokens: int,
        *,
        overlap: int = 0,
        allowed_special: SpecialPolicy = "all",
        disallowed_special: SpecialPolicy = "all",
    ) -> tuple[list[str], list[tuple[int, int]]]:
        """Return the pieces of `text` and each one's ``(start, end)`` span in characters.

        Greedily from the start, each piece ends at the furthest place where a token of
        ``encode(text)`` and a character both end, at most `max_tokens` of those tokens
        on, whose piece encodes alone to at most `max_tokens` tokens (as
        :meth:`truncate` chooses its end). The next piece starts where this one ends,
        or, with `overlap` ``k``, at the earliest such place after this one's start, at
        most ``k`` tokens before its end, from which a piece reaches past its end; so
        neighbours share up to ``k`` tokens of text. Each piece is
        ``text[start:end]``, the first starts at 0, the last ends at ``len(text)``, and
        each starts no later than the one before ends: the spans give the text back. A
        stretch whose first characters alone need more than `max_tokens` tokens (a
        character cut into byte tokens) raises ParameterError.

        >>> Tokenizer.train("ab ab", 257).chunk_with_offsets("ab ab ab", 3, overlap=1)
        (['ab ab', 'ab ab'], [(0, 5), (3, 8)])
        """
        limit = check_budget(max_tokens, 1)
        shared = check_overlap(overlap, limit)
        budget = self._budget(text, "chunk", allowed_special, disallowed_special)
        spans = budget.chunk(limit, shared)
        return [budget.text[start:end] for start, end in spans], spans

    def _budget(
        self,
        text: str,
        method: str,
        allowed_special: SpecialPolicy,
        disallowed_special: SpecialPolicy,
    ) -> TokenBudget:
        """`text` checked as :meth:`encode` checks it, with what the budgets walk it by."""
        text = _valid_text(text, method)
        specials = self._specials
        allowed, disallowed = specials.resolve(allowed_special, disallowed_special)
        if disallowed:
            specials.check_disallowed(text, disallowed)

        def count(piece: str) -> int:
            # The whole text was checked for disallowed specials; a piece holds none.
            return self.count_tokens(piece, allowed_special=allowed, disallowed_special=())

        encoder = self._encoder
        return TokenBudget(
            text,
            specials.segments(text, allowed),
            self.split_pattern,
            encoder.chunk_ids
            if isinstance(encoder, IdEncoder)
            else encoder.chunk_cache.__getitem__,
            self._vocab,
            count,
        )

    @overload
    def apply_chat_template(
        self,
        /,
        messages: Sequence[Mapping[str, Any]],
        *,
        chat_template: str | None = None,
        add_generation_prompt: bool = False,
        tokenize: Literal[True] = True,
        **template_vars: Any,
    ) -> list[int]: ...

    @overload
    def apply_chat_template(
        self,
        /,
        messages: Sequence[Mapping[str, Any]],
        *,
        chat_template: str | None = None,
        add_generation_prompt: bool = False,
        tokenize: Literal[False],
        **template_vars: Any,
    ) -> str: ...

    @overload
    def apply_chat_template(
        self,
        /,
        messages: Sequence[Mapping[str, Any]],
        *,
        chat_template: str | None = None,
        add_generation_prompt: bool = False,
        tokenize: bool,
        **template_vars: Any,
    ) -> list[int] | str: ...

    def apply_chat_template(
        self,
        /,
        messages: Sequence[Mapping[str, Any]],
        *,
        chat_template: str | None = None,
        add_generation_prompt: bool = False,
        tokenize: bool = True,
        **template_vars: Any,
    ) -> list[int] | str:
        """Render a conversation in a chat format, and encode it (Hugging Face's method).

        `chat_template` is ``"harmony"`` (OpenAI's gpt-oss format, as ``openai-harmony``
        renders it), ``"chatml"``, or a Jinja template, rendered exactly as
        ``transformers`` renders one (``pip install bpetite[chat]`` for jinja2); None
        means ``"harmony"`` for ``o200k_harmony`` and is refused elsewhere.
        `add_generation_prompt` opens an assistant turn at the end; `template_vars`
        (``bos_token=...``, ``tools=...``) are passed to a Jinja template. The result is
        the ids, or the text with ``tokenize=False``. See :mod:`bpetite.chat`.
        """
        chat = import_module("bpetite.chat")  # above the core: see explain()
        result: list[int] | str = chat.apply_chat_template(
            self,
            messages,
            chat_template=chat_template,
            add_generation_prompt=add_generation_prompt,
            tokenize=tokenize,
            **template_vars,
        )
        return result

    # ------------------------------------------------------------------ decoding

    def decode(self, token_ids: Sequence[int], errors: str = "strict") -> str:
        """Return the text of `token_ids`, decoded as UTF-8.

        An unknown id raises UnknownTokenError (a KeyError) naming it and its position.
        Bytes that are not UTF-8 raise UnicodeDecodeError under ``errors="strict"``
        (the specification's default); ``errors="replace"`` puts U+FFFD in their place
        exactly as ``bytes.decode`` and tiktoken do (tiktoken's default), and
        ``"ignore"`` drops them, so a loop decoding sampled ids never breaks.

        >>> Tokenizer.train("hé", 256).decode([104, 195], errors="replace")
        'h�'
        """
        return decode_text(token_ids, self._vocab, checked_errors(errors))

    def decode_bytes(self, token_ids: Sequence[int]) -> bytes:
        """Return the bytes of `token_ids`, whether or not they are UTF-8 on their own."""
        return decode_bytes(token_ids, self._vocab)

    def token_bytes(self, token_id: int) -> bytes:
        """Return one token's bytes; an unknown id raises UnknownTokenError."""
        token_id = checked_id(token_id)
        found = self._vocab.get(token_id)
        if found is None:
            raise UnknownTokenError(unknown_id(token_id, self._vocab))
        return found

    def decode_with_offsets(self, token_ids: Sequence[int]) -> tuple[str, list[int]]:
        """Return the text and the character index where each token starts (tiktoken's method).

        A token that starts inside a character (its first byte continues one) starts at
        that character. The ids must decode to valid UTF-8, else UnicodeDecodeError.

        >>> tokenizer = Tokenizer.train("héllo", 256)
        >>> tokenizer.decode_with_offsets(tokenizer.encode("hé!"))
        ('hé!', [0, 1, 1, 2])
        """
        return decode_with_offsets(token_ids, self._vocab)

    def stream_decoder(self, *, errors: str = "strict") -> StreamDecoder:
        """A decoder to feed one id at a time, returning text as soon as it is whole.

        See :class:`~bpetite.StreamDecoder`: joined, what its steps and its flush return
        is ``decode(ids, errors=errors)``, and no step returns part of a character.

        >>> tokenizer = Tokenizer.train("hé", 256)
        >>> stream = tokenizer.stream_decoder(errors="replace")
        >>> [stream.step(token) for token in [104, 195, 169, 195]], stream.flush()
        (['h', '', 'é', ''], '�')
        """
        return StreamDecoder(self._vocab_view, errors)

    def _mergeable_ids(self) -> dict[bytes, int]:
        """Bytes to the first mergeable id that has them, made on first use.

        Built whole, then published by one assignment: threads sharing the tokenizer
        (get_encoding's) see no table or a complete one, never one being filled; two
        that arrive together each build the same table.
        """
        found = self._token_ids
        if found is None:
            specials = self._specials.id_set
            found = {}
            for token_id, token_bytes in self._vocab.items():
                if token_id not in specials:
                    found.setdefault(token_bytes, token_id)
            self._token_ids = found
        return found

    # ------------------------------------------------------------------ batches
    # tiktoken's and Hugging Face's names for many texts at once (core/_batches.py):
    # each is the one-text method applied to every item, so the single-text tests cover
    # their semantics. Where tiktoken's defaults differ from the specification's (encode's
    # policy, decode's errors), the spec's stay.

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        num_threads: int = 8,
        allowed_special: SpecialPolicy = "all",
        disallowed_special: SpecialPolicy = "all",
        errors: str = "strict",
    ) -> list[list[int]]:
        """Return ``[self.encode(text, ...) for text in texts]``, on up to `num_threads` threads.

        tiktoken's name and signature, with :meth:`encode`'s defaults so the two agree.
        The result never depends on `num_threads`. Threads are used only where they run
        at once (a free-threaded build with the GIL off); with the GIL they would take
        turns, so the texts are encoded in the calling thread. For parallel encoding of
        files use :func:`~bpetite.write_dataset`, which runs processes.

        >>> Tokenizer.train("ab ab", vocab_size=257).encode_batch(["ab", "b<|endoftext|>"])
        [[256], [98, 257]]
        """
        checked = checked_texts(texts, "encode_batch")
        threads = checked_threads(num_threads)
        # Resolving the policy first makes a bad keyword fail before any text is encoded.
        self._specials.resolve(allowed_special, disallowed_special)

        def encode_one(text: str) -> list[int]:
            return self.encode(
                text,
                allowed_special=allowed_special,
                disallowed_special=disallowed_special,
                errors=errors,
            )

        return map_in_threads(encode_one, checked, threads)

    def decode_batch(
        self, batch: Sequence[Sequence[int]], *, errors: str = "strict", num_threads: int = 8
    ) -> list[str]:
        """Return ``[self.decode(ids, errors=errors) for ids in batch]`` (tiktoken's name).

        >>> Tokenizer.train("ab ab", 257).decode_batch([[256], [32, 256]])
        ['ab', ' ab']
        """
        id_lists = checked_id_lists(batch, "decode_batch")
        errors = checked_errors(errors)  # once, for every item
        vocab = self._vocab
        return map_in_threads(
            lambda ids: decode_text(ids, vocab, errors), id_lists, checked_threads(num_threads)
        )

    # ------------------------------------------------------------------ surgery
    # New tokenizers from this one, every id they keep unchanged (core/_surgery.py).

    def with_special_tokens(
        self, tokens: Mapping[str, int] | Iterable[str] = (), *, drop: Iterable[str] = ()
    ) -> Self:
        """A copy with special tokens added, moved or dropped; every other id is the same.

        `drop` removes specials first. Then `tokens`, a mapping of text to id, adds each
        new text at its id and moves an existing one to its new id; or, a list of texts,
        gives each text not yet special the next free id, one past the largest id in
        use. An id that is a mergeable token's or another special's raises
        ParameterError naming both; to swap or replace, move or drop in the same call.
        A special whose id the mergeable ids skip (p50k_base's ``<|endoftext|>``) may be
        dropped or moved only if another special takes that id in the same call:
        freeing it would renumber every mergeable token after it.

        >>> tokenizer = Tokenizer.train("ab ab", 257)
        >>> dict(tokenizer.with_special_tokens(["<|pad|>"]).special_tokens)
        {'<|endoftext|>': 257, '<|pad|>': 258}
        >>> dict(tokenizer.with_special_tokens({"<|im_start|>": 300}, drop=["<|endoftext|>"])
        ...      .special_tokens)
        {'<|im_start|>': 300}
        """
        return self._from_model(
            _surgery.with_special_tokens(self._model, tokens, drop, self._vocab)
        )

    def truncated(self, vocab_size: int, *, renumber_specials: bool = False) -> Self:
        """A copy with the first ``vocab_size`` mergeable tokens (``vocab_size - 256`` merges).

        The special tokens keep their ids unless `renumber_specials`, which moves them
        to the ids right after the merges, in the order of their ids, as training
        places them. A greedy trainer learns merges in order, so this is the tokenizer
        a training run to ``vocab_size`` gives (on the same corpus and options).

        >>> tokenizer = Tokenizer.train("ab ab ab", 258)
        >>> tokenizer.truncated(257).merges, dict(tokenizer.truncated(257).special_tokens)
        (((97, 98),), {'<|endoftext|>': 258})
        >>> again = Tokenizer.train("ab ab ab", 257)
        >>> tokenizer.truncated(257, renumber_specials=True).dumps() == again.dumps()
        True
        """
        return self._from_model(
            _surgery.truncated(self._model, vocab_size, renumber=renumber_specials)
        )

    def extended(
        self,
        corpus_or_counts: str | Mapping[bytes, int],
        vocab_size: int,
        *,
        renumber_specials: bool = False,
        progress: ProgressCallback | None = None,
        max_token_bytes: int | None = None,
        min_frequency: int | None = None,
    ) -> Self:
        """Continue training: up to ``vocab_size`` mergeable tokens, every existing id kept.

        The corpus (a text, or chunk counts cut with this tokenizer's pattern) is split
        as this tokenizer splits it: each chunk encoded with the existing merges. The
        new merges are then learned exactly as :meth:`train` learns them (most frequent
        pair, ties to the smallest). Works on imported vocabularies too (GPT-2,
        ``cl100k_base``).

        Every special token keeps its id: the new merges take the next ids no special
        token holds, so whatever was built on the old ids (a model trained with GPT-2's
        ``<|endoftext|>`` at 50256) still reads them. `renumber_specials` instead moves
        the specials after the new merges, in the order of their ids, as training
        places them: ``train(c, m).extended(c, n, renumber_specials=True)`` is
        ``train(c, n)``, and ``.truncated(m, renumber_specials=True)`` undoes it.
        `max_token_bytes` and `min_frequency` default to the options the tokenizer was
        trained with; the result records an option only when every merge was learned
        under it.

        >>> small = Tokenizer.train("ab ab ab", 257)  # <|endoftext|> is 257
        >>> small.extended("ab ab ab", 258).encode(" ab<|endoftext|>")
        [258, 257]
        >>> small.extended("ab ab ab", 258, renumber_specials=True).merges
        ((97, 98), (32, 256))
        """
        if isinstance(corpus_or_counts, str):  # count_chunks checks it is valid text
            counts: Mapping[bytes, int] = count_chunks(
                [corpus_or_counts], pattern=self._model.pattern
            )
        else:
            counts = _checked_counts(corpus_or_counts)
        return self._from_model(
            _surgery.extended(
                self._model,
                counts,
                vocab_size,
                vocab=self._vocab,
                encode_chunk=self._index_encoder().encode_chunk,
                renumber=renumber_specials,
                progress=progress,
                max_token_bytes=max_token_bytes,
                min_frequency=min_frequency,
            )
        )

    def _index_encoder(self) -> Encoder:
        """The encoder in indices, which extension trains from (see core/_ids.py)."""
        encoder = self._encoder
        return encoder.indexed if isinstance(encoder, IdEncoder) else encoder

    # ------------------------------------------------------------------ identity

    def __eq__(self, other: object) -> bool:
        """Equal when they are the same definition: merges, pattern, specials, byte order.

        Two such tokenizers give the same ids and text for every input. The name and
        the training record are provenance, not definition, and are not compared (the
        artifact keeps the training record, so equal tokenizers may dump different
        bytes when it differs).
        """
        if not isinstance(other, Tokenizer):
            return NotImplemented
        return self is other or _definition(self) == _definition(other)

    def __hash__(self) -> int:
        if self._hash is None:
            merges, pattern, specials, byte_order, _ = _definition(self)
            self._hash = hash((merges, pattern, frozenset(specials.items()), byte_order))
        return self._hash

    def __len__(self) -> int:
        """``n_vocab``: one past the largest id, special tokens included (tiktoken's count).

        Hugging Face's ``len`` counts the tokens instead, fewer where some ids hold no
        token: ``cl100k_base`` has 100,261 tokens and an ``n_vocab`` of 100,277.
        """
        return self.n_vocab

    # ----------------------------------------------- tiktoken's names for the same things
    # Each is another name, or a small rearrangement, of what the sections above give,
    # kept so that code written for tiktoken's Encoding runs unchanged.

    @property
    def n_vocab(self) -> int:
        """One past the largest id, special tokens included (tiktoken's name)."""
        return self._model.id_end

    @property
    def max_token_value(self) -> int:
        """The largest id, special tokens included: ``n_vocab - 1`` (tiktoken's name)."""
        return self.n_vocab - 1

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>``; NotATokenError (a KeyError) if it is not special here."""
        found = self._special_ids.get(END_OF_TEXT_TOKEN)
        if found is None:
            raise NotATokenError(
                f"this tokenizer has no {END_OF_TEXT_TOKEN!r} special token; its special "
                f"tokens: {', '.join(map(repr, self._special_ids)) or 'none'}"
            )
        return found

    @property
    def special_tokens_set(self) -> frozenset[str]:
        """The special tokens' texts (tiktoken's name)."""
        return frozenset(self._special_ids)

    def decode_single_token_bytes(self, token_id: int) -> bytes:
        """Return one token's bytes, specials included: :meth:`token_bytes` (tiktoken's name)."""
        return self.token_bytes(token_id)

    def decode_bytes_batch(
        self, batch: Sequence[Sequence[int]], *, num_threads: int = 8
    ) -> list[bytes]:
        """Return ``[self.decode_bytes(ids) for ids in batch]`` (tiktoken's name).

        >>> Tokenizer.train("ab ab", 257).decode_bytes_batch([[256], [32, 195]])
        [b'ab', b' \\xc3']
        """
        id_lists = checked_id_lists(batch, "decode_bytes_batch")
        vocab = self._vocab
        return map_in_threads(
            lambda ids: decode_bytes(ids, vocab), id_lists, checked_threads(num_threads)
        )

    def is_special_token(self, token_id: int) -> bool:
        """Whether `token_id` is the id of a special token (tiktoken's method).

        >>> tokenizer = Tokenizer.train("ab ab", 257)
        >>> tokenizer.is_special_token(257), tokenizer.is_special_token(256)
        (True, False)
        """
        return checked_id(token_id) in self._specials.id_set

    def decode_tokens_bytes(self, token_ids: Sequence[int]) -> list[bytes]:
        """Return each token's bytes, in order: how the text is cut (tiktoken's name).

        >>> Tokenizer.train("ab ab", 257).decode_tokens_bytes([256, 32, 256])
        [b'ab', b' ', b'ab']
        """
        return tokens_bytes(token_ids, self._vocab)

    def token_byte_values(self) -> list[bytes]:
        """Return the distinct bytes of every mergeable token, sorted (tiktoken's method).

        >>> values = Tokenizer.train("ab", 257).token_byte_values()
        >>> len(values), values[97:99]
        (257, [b'a', b'ab'])
        """
        return sorted(self._mergeable_ids())

    def encode_ordinary_batch(
        self, texts: Sequence[str], *, num_threads: int = 8
    ) -> list[list[int]]:
        """Return ``[self.encode_ordinary(text) for text in texts]`` (tiktoken's name).

        >>> Tokenizer.train("ab ab", vocab_size=257).encode_ordinary_batch(["ab", "<|"])
        [[256], [60, 124]]
        """
        checked = checked_texts(texts, "encode_ordinary_batch")
        return map_in_threads(self.encode_ordinary, checked, checked_threads(num_threads))

    # ------------------------------------------------------------------ seeing it work

    def explain(
        self,
        text: str,
        *,
        allowed_special: SpecialPolicy = "all",
        disallowed_special: SpecialPolicy = "all",
    ) -> Explanation:
        """Every step of encoding `text`: per chunk, its bytes, then each merge in rank order.

        The steps are :func:`bpetite.reference.trace_encode`'s and the ids are
        :meth:`encode`'s (the tests prove it), with the same special-token policy and
        errors. ``print()`` the result to read it; in a notebook it renders as a page to
        step through, merge by merge.

        >>> tokenizer = Tokenizer.train("ab ab ab", vocab_size=258)
        >>> print(tokenizer.explain(" ab"))
        encode: 2 merges on a text of 3 bytes, 3 tokens before, 1 after
        chunk ' ab': ' ' 'a' 'b'
          merge 0: (97, 98) -> 256 'ab' gives ' ' 'ab'
          merge 1: (32, 256) -> 257 ' ab' gives ' ab'
        ids: [257]
        """
        text = _valid_text(text, "explain")
        allowed, disallowed = self._specials.resolve(allowed_special, disallowed_special)
        if disallowed:
            self._specials.check_disallowed(text, disallowed)
        # The pages sit above the core, which never imports them: the tier is reached
        # by name when called (the import rules test lists this as its one exception).
        visualize = import_module("bpetite.visualize")
        explanation: Explanation = visualize.explain_encode(self, text, allowed_special=allowed)
        return explanation

    def _repr_html_(self) -> str:
        """Jupyter's hook: the tokens of a short sample, as ``bpetite show --html`` draws them."""
        specials = self._special_ids
        first = min(specials, key=specials.__getitem__, default=None)  # lowest id
        sample = NOTEBOOK_SAMPLE if first is None else f"{NOTEBOOK_SAMPLE}{first}"
        ids = self.encode(sample)
        visualize = import_module("bpetite.visualize")  # above the core: see explain()
        pieces = visualize.token_pieces(ids, self._vocab, set(specials.values()))
        size = len(sample.encode("utf-8"))
        caption = f"{self!r}: {len(ids)} tokens for the {size} bytes of a sample"
        snippet: str = visualize.render_snippet(pieces, caption=caption)
        return snippet

    def __repr__(self) -> str:
        return (
            f"<Tokenizer pattern={self._model.pattern.name} "
            f"mergeable_vocab_size={self.mergeable_vocab_size} "
            f"special_tokens={len(self._special_ids)}>"
        )


def _definition(
    tokenizer: Tokenizer,
) -> tuple[tuple[Merge, ...], str, dict[str, int], tuple[int, ...], dict[int, bytes]]:
    """What decides every id and text: merges, pattern, specials (text and id), byte
    order, and the text each special id decodes to (the first of its aliases)."""
    return (
        tokenizer.merges,
        tokenizer.pattern,
        dict(tokenizer.special_tokens),
        tokenizer.byte_order,
        {token_id: tokenizer.vocab[token_id] for token_id in tokenizer.special_tokens.values()},
    )


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _valid_text(text: object, method: str, errors: str = "strict") -> str:
    """`text` if it is a str holding valid Unicode; under ``errors="replace"``, repaired."""
    if not isinstance(text, str):
        raise TypeError(f"{method}() takes a str, got {type(text).__name__}")
    if errors == "strict":  # the usual case, without a call more
        require_utf8(text, "text")
        return text
    return checked_text(text, errors)


_Part = TypeVar("_Part")
#: A part of an encode with offsets: its ids, their spans within it, its length.
_Spanned = tuple[list[int], list[tuple[int, int]], int]


def _one_id(match: SpecialMatch) -> list[int]:
    """A special token's part of an encoding: its id."""
    return [match.token_id]


def _one(match: SpecialMatch) -> int:
    """A special token's part of a count: one token."""
    return 1


#: The array typecodes encode_ordinary_array accepts: the unsigned integers.
_UNSIGNED_TYPECODES: Final = ("B", "H", "I", "L", "Q")
#: The array typecode of a 32-bit unsigned id (``I`` on every usual platform).
_UINT32: Final = "I" if array("I").itemsize == 4 else "L"


def _check_training_keywords(
    vocab_size: object, max_token_bytes: object, min_frequency: object
) -> None:
    """The training methods' keywords, checked at their boundary before any work."""
    check_vocab_size(vocab_size)
    for name, value in (("max_token_bytes", max_token_bytes), ("min_frequency", min_frequency)):
        check_limit(name, value, TRAINING_OPTIONS[name], TRAINING_LEAST_BECAUSE[name])


def _checked_counts(counts: Mapping[bytes, int]) -> Mapping[bytes, int]:
    """Refuse counts that are not bytes -> non-negative int, naming the first bad entry."""
    if not isinstance(counts, Mapping):
        raise TypeError(f"counts must be a mapping of bytes to int, got {type(counts).__name__}")
    for chunk, count in counts.items():
        if not isinstance(chunk, bytes):
            raise TypeError(f"counts keys must be bytes (UTF-8 chunks), got {chunk!r}")
        if type(count) is not int or count < 0:
            raise ParameterError(f"counts[{chunk!r}] must be a non-negative int, got {count!r}")
    return counts


def _rebuild(
    merges: tuple[Merge, ...],
    pattern: str,
    special_tokens: dict[str, int],
    byte_order: tuple[int, ...],
    training: dict[str, int],
    name: str | None = None,
) -> Tokenizer:
    """Unpickle a :class:`Tokenizer` (see ``Tokenizer.__reduce__``)."""
    return Tokenizer(
        merges,
        pattern=pattern,
        special_tokens=special_tokens,
        byte_order=byte_order,
        training=training,
        name=name,
    )
