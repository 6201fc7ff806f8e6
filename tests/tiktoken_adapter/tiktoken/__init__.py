"""tiktoken's public API on bpetite's: the adapter tiktoken's own test suite runs against.

Every call goes to bpetite's public API (``bpetite``, ``bpetite.interop``); what this
file adds is only where the two differ. tiktoken's ``encode`` refuses a special token's
text unless it is allowed, and repairs a lone surrogate; its ``decode`` replaces bytes
that are not UTF-8; an ``Encoding`` built from ranks is imported as the ``.tiktoken``
file those ranks are; pickling keeps the tokenizer.
"""

from __future__ import annotations

import base64
import functools
import tempfile
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any, Literal

import bpetite
from bpetite import Tokenizer
from bpetite.interop import import_vocabulary

__all__ = [
    "Encoding",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encoding_names",
]

Policy = Literal["all"] | Collection[str]


class Encoding:
    """A bpetite tokenizer with tiktoken's ``Encoding`` methods and defaults."""

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: dict[bytes, int],
        special_tokens: dict[str, int],
        explicit_n_vocab: int | None = None,
    ) -> None:
        """tiktoken's constructor: the ranks are imported as a ``.tiktoken`` file."""
        lines = (
            f"{base64.b64encode(token).decode('ascii')} {rank}\n"
            for token, rank in sorted(mergeable_ranks.items(), key=lambda item: item[1])
        )
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"{name}.tiktoken"
            path.write_text("".join(lines), encoding="ascii")
            result = import_vocabulary([path], pattern=pat_str, special_tokens=special_tokens)
        if result.source_ids is not None:
            raise ValueError(f"bpetite renumbers the ranks of {name}; tiktoken would not")
        self._tokenizer = result.tokenizer
        self.name = name
        if explicit_n_vocab is not None and self.n_vocab != explicit_n_vocab:
            raise ValueError(f"explicit_n_vocab is {explicit_n_vocab}, the ids give {self.n_vocab}")

    def __reduce__(self) -> tuple[Any, ...]:
        return _Wrapped, (self._tokenizer, self.name)

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    # ----------------------------------------------------------- what tiktoken keeps

    @property
    def _pat_str(self) -> str:
        return self._tokenizer.pattern

    @property
    def _special_tokens(self) -> dict[str, int]:
        return dict(self._tokenizer.special_tokens)

    @functools.cached_property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        """Made once, as tiktoken keeps its own: tiktoken's tests ask for it per example."""
        special_ids = set(self._tokenizer.special_tokens.values())
        vocab = self._tokenizer.vocab
        return {token: i for i, token in vocab.items() if i not in special_ids}

    @property
    def n_vocab(self) -> int:
        return self._tokenizer.n_vocab

    @property
    def max_token_value(self) -> int:
        return self._tokenizer.max_token_value

    @property
    def eot_token(self) -> int:
        return self._tokenizer.eot_token

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self._tokenizer.special_tokens_set)

    # ----------------------------------------------------------- encoding

    def encode(
        self,
        text: str,
        *,
        allowed_special: Policy = frozenset(),
        disallowed_special: Policy = "all",
    ) -> list[int]:
        return self._tokenizer.encode(
            text,
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
            errors="replace",
        )

    def encode_ordinary(self, text: str) -> list[int]:
        return self._tokenizer.encode_ordinary(text, errors="replace")

    def encode_batch(
        self,
        text: Sequence[str],
        *,
        num_threads: int = 8,
        allowed_special: Policy = frozenset(),
        disallowed_special: Policy = "all",
    ) -> list[list[int]]:
        return self._tokenizer.encode_batch(
            text,
            num_threads=num_threads,
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
            errors="replace",
        )

    def encode_ordinary_batch(
        self, text: Sequence[str], *, num_threads: int = 8
    ) -> list[list[int]]:
        return self._tokenizer.encode_ordinary_batch(text, num_threads=num_threads)

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        return self._tokenizer.encode_single_token(text_or_bytes)

    def _encode_bytes(self, text: bytes) -> list[int]:
        return self._tokenizer.encode_bytes(text)

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: Policy = frozenset(),
        disallowed_special: Policy = "all",
    ) -> tuple[list[int], list[list[int]]]:
        return self._tokenizer.encode_with_unstable(
            text, allowed_special=allowed_special, disallowed_special=disallowed_special
        )

    # ----------------------------------------------------------- decoding

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        return self._tokenizer.decode(tokens, errors=errors)

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        return self._tokenizer.decode_bytes(tokens)

    def decode_single_token_bytes(self, token: int) -> bytes:
        return self._tokenizer.decode_single_token_bytes(token)

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        return self._tokenizer.decode_tokens_bytes(tokens)

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        return self._tokenizer.decode_with_offsets(tokens)

    def decode_batch(
        self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8
    ) -> list[str]:
        return self._tokenizer.decode_batch(batch, errors=errors, num_threads=num_threads)

    def token_byte_values(self) -> list[bytes]:
        return self._tokenizer.token_byte_values()


class _Wrapped(Encoding):
    """An ``Encoding`` of a bpetite tokenizer as it is (a built-in, or unpickled)."""

    def __init__(self, tokenizer: Tokenizer, name: str) -> None:
        self._tokenizer = tokenizer
        self.name = name


@functools.cache
def get_encoding(encoding_name: str) -> Encoding:
    return _Wrapped(bpetite.get_encoding(encoding_name), encoding_name)


def list_encoding_names() -> list[str]:
    return bpetite.list_encoding_names()


def encoding_name_for_model(model_name: str) -> str:
    return bpetite.encoding_name_for_model(model_name)


def encoding_for_model(model_name: str) -> Encoding:
    return get_encoding(bpetite.encoding_name_for_model(model_name))
