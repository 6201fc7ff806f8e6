"""tiktoken's ``.tiktoken`` format: ``base64(token bytes) rank`` per line, nothing else.

The file has no pattern and no special tokens, so an export also hands over the few
lines of Python that build the ``tiktoken.Encoding``. tiktoken merges by the rank of
the concatenated bytes, bpetite by the rank of the (left, right) pair; the two agree on
every text exactly when no two tokens share their bytes and every token's own bytes
merge back to that token under bpetite's rules (docs/interop.md has the proof). Trained
vocabularies always qualify; export checks it and refuses otherwise, and import
recovers each token's pair from tiktoken's own merge order and checks the same. An
official file needs no recovery: the package ships its merges, recovered so once.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bpetite import SplitPattern, Tokenizer, get_encoding
from bpetite._internal import (
    BASE_VOCAB_SIZE,
    END_OF_TEXT_TOKEN,
    BuiltinVocabulary,
    parse_ranks,
    recover_merges,
    show_token,
    write_atomically,
)
from bpetite.errors import InteropError
from bpetite.interop._known import recognise
from bpetite.interop._model import (
    ImportResult,
    build_import,
    check_distinct_bytes,
    first_token_not_encoding_to_itself,
    mergeable_ids,
    refuse_another_pattern,
    refuse_unportable_pattern,
)


@dataclass(frozen=True, slots=True)
class TiktokenExport:
    """A ``.tiktoken`` file's text plus what ``tiktoken.Encoding`` needs beside it."""

    #: The ``.tiktoken`` file: one ``base64(bytes) id`` line per mergeable token, by id.
    ranks: str
    #: The split pattern (``pat_str``): the tokenizer's regex, verbatim.
    pattern: str
    #: ``special_tokens``: every special token's text and bpetite's id for it.
    special_tokens: Mapping[str, int]
    #: ``explicit_n_vocab``: mergeable tokens plus special tokens, or None when the
    #: ids leave gaps or a special id has two texts (tiktoken checks that the mergeable
    #: tokens and the special texts number n_vocab, one per id 0..n_vocab-1).
    n_vocab: int | None

    @property
    def sha256(self) -> str:
        """The hex SHA-256 of the file, for ``load_tiktoken_bpe(..., expected_hash=...)``."""
        return hashlib.sha256(self.ranks.encode("ascii")).hexdigest()

    def python_code(self, path: str | os.PathLike[str]) -> str:
        """Python that builds the ``tiktoken.Encoding`` from the file at `path`.

        The expected hash matters: tiktoken caches files by path, and without it a
        re-exported file at the same path would be read from the stale cache.
        """
        special = ", ".join(f"{name!r}: {id_}" for name, id_ in self.special_tokens.items())
        n_vocab = "" if self.n_vocab is None else f"    explicit_n_vocab={self.n_vocab},\n"
        return (
            "import tiktoken\n"
            "from tiktoken.load import load_tiktoken_bpe\n"
            "\n"
            "encoding = tiktoken.Encoding(\n"
            '    name="bpetite",\n'
            f"    pat_str={_python_string(self.pattern)},\n"
            f"    mergeable_ranks=load_tiktoken_bpe(\n"
            f"        {os.fspath(path)!r},\n"
            f"        expected_hash={self.sha256!r},\n"
            "    ),\n"
            f"    special_tokens={{{special}}},\n"
            f"{n_vocab}"
            ")\n"
            "# bpetite's encode() reads special-token texts as their ids by default; tiktoken\n"
            '# does so when asked: encoding.encode(text, allowed_special="all")\n'
        )


def _python_string(text: str) -> str:
    """A raw triple-quoted literal when that spells `text` exactly, else repr()."""
    if '"""' not in text and not text.endswith(('"', "\\")):
        return f'r"""{text}"""'
    return repr(text)


def export_tiktoken(tokenizer: Tokenizer) -> TiktokenExport:
    """Return the ``.tiktoken`` export of `tokenizer`, or raise InteropError if it would differ.

    Ranks are bpetite's ids (single bytes keep id == byte value; tiktoken never compares
    single-byte ranks, only uses them as ids), so where a special token holds an id
    among the mergeable ones (p50k_base's ``<|endoftext|>``) the file skips it, as
    OpenAI's does. A special token that begins another is refused (see
    :func:`_check_no_special_prefix`), and so is a custom pattern holding a construct
    tiktoken's engine reads otherwise (:func:`refuse_unportable_pattern`).
    """
    check_distinct_bytes(tokenizer, "the .tiktoken format")
    _check_no_special_prefix(tokenizer.special_tokens)
    refuse_unportable_pattern(tokenizer, ".tiktoken")
    ids = mergeable_ids(tokenizer)
    found = first_token_not_encoding_to_itself(tokenizer)
    if found is not None:
        token_id, pieces = found
        left, right = tokenizer.merges[ids.index(token_id) - BASE_VOCAB_SIZE]
        raise InteropError(
            f"token {token_id} {show_token(tokenizer.vocab[token_id])} is merge "
            f"{left} + {right}, but bpetite encodes its own bytes as {pieces}; tiktoken returns "
            "a token for text with exactly its bytes and merges by the rank of concatenated "
            "bytes, so it would encode such text differently. This vocabulary cannot be a "
            ".tiktoken file (the hf format represents it exactly)"
        )
    vocab = tokenizer.vocab
    lines = (
        f"{base64.b64encode(vocab[token_id]).decode('ascii')} {token_id}\n" for token_id in ids
    )
    specials = dict(tokenizer.special_tokens)
    filled = tokenizer.n_vocab == len(vocab) == len(ids) + len(specials)
    return TiktokenExport(
        ranks="".join(lines),
        pattern=tokenizer.pattern,
        special_tokens=specials,
        n_vocab=tokenizer.n_vocab if filled else None,
    )


def _check_no_special_prefix(special_tokens: Mapping[str, int]) -> None:
    """Refuse a special token that is the start of another (``<s`` and ``<s>``).

    Where two special tokens match at the same place, bpetite (like Hugging Face) reads
    the longer. tiktoken joins its special texts into one alternation in the order of
    its internal hash table and takes the first alternative that matches, so which of
    the two it reads depends on that order (tiktoken 0.14 reads ``<s`` in ``<s>`` given
    ``<s>``, ``</s>`` and ``<s``, but ``<s>`` given only ``<s`` and ``<s>``). Only
    vocabularies with no such pair encode alike for every text.
    """
    texts = sorted(special_tokens)
    # A text that begins another begins the text right after it in sorted order.
    for short, long in itertools.pairwise(texts):
        if long.startswith(short):
            raise InteropError(
                f"the special token {json.dumps(short, ensure_ascii=False)} is the start of "
                f"the special token {json.dumps(long, ensure_ascii=False)}: bpetite reads the "
                "longer where both match, tiktoken whichever comes first in its hash table, "
                "which may be the shorter, so the ids would differ; drop or rename one "
                f"(tokenizer.with_special_tokens(drop=[{short!r}])), or export to the hf "
                "format, which reads the longer as bpetite does"
            )


def write_tiktoken(
    tokenizer: Tokenizer, path: str | os.PathLike[str], *, overwrite: bool = False
) -> TiktokenExport:
    """Write the ``.tiktoken`` file to `path` atomically and return the export (for its code)."""
    export = export_tiktoken(tokenizer)
    write_atomically(path, export.ranks.encode("ascii"), overwrite=overwrite)
    return export


def import_tiktoken(
    data: bytes,
    source: str,
    *,
    pattern: str | SplitPattern | None = None,
    special_tokens: Mapping[str, int] | None = None,
) -> ImportResult:
    """Import a ``.tiktoken`` file; the result speaks the file's ranks as ids.

    The file records neither its split pattern nor its special tokens. OpenAI's
    official files (``r50k_base``, ``p50k_base``, ``cl100k_base``, ``o200k_base``) are
    recognised by their sha256 and need no recovery: the package ships their merges,
    what :func:`recover_tiktoken` would recover from them, without the seconds it
    takes. Given neither `pattern` nor `special_tokens`, such a file gets tiktoken's,
    as :func:`bpetite.get_encoding`'s tokenizer (so its ``name`` is the vocabulary's).
    Any other file, or an official one given either, takes `pattern` (default
    GPT-2's; an official file made for another is refused with the pattern to give)
    and `special_tokens` (text -> id, two texts may share an id as tiktoken allows;
    default ``<|endoftext|>`` after the last rank).
    """
    known = recognise(data)
    if known is None:
        return recover_tiktoken(data, source, pattern=pattern, special_tokens=special_tokens)
    if pattern is None and special_tokens is None:
        return ImportResult(get_encoding(known.name), "tiktoken", name=known.name)
    # The merges depend on the ranks alone; only what the file does not record differs.
    byte_ids, merges = _shipped_merges(known)
    if pattern is None:  # GPT-2's assumed: refuse a file made for another, as recovery does
        refuse_another_pattern(
            (left + right for left, right, _ in merges),
            show_token,
            source,
            known=(known.name, known.pattern),
        )
    return _import_merges(byte_ids, merges, source, pattern, special_tokens)


def recover_tiktoken(
    data: bytes,
    source: str,
    *,
    pattern: str | SplitPattern | None = None,
    special_tokens: Mapping[str, int] | None = None,
    known: BuiltinVocabulary | None = None,
) -> ImportResult:
    """Import a ``.tiktoken`` file by recovering each token's merge from the ranks.

    Each token's pair is recovered as the package's built-in merges were (see
    ``core/_ranks.py``). `known`, the official vocabulary the file is, gives tiktoken's
    pattern and special tokens in place of `pattern` (default GPT-2's) and
    `special_tokens` (default ``<|endoftext|>`` after the last rank): for such a file
    this is :func:`import_tiktoken`'s result, recovered (the tests' oracle for it).
    """
    ranks = parse_ranks(data, source)
    if known is None and pattern is None:
        # GPT-2's pattern is assumed: refuse a file made for another before recovering
        # its merges, which takes seconds for a large one.
        refuse_another_pattern(sorted(ranks, key=ranks.__getitem__), show_token, source)
    recovered = recover_merges(ranks, source)
    token_of_rank = {rank: token for token, rank in ranks.items()}
    merges = [
        (token_of_rank[left], token_of_rank[right], rank) for left, right, rank in recovered.merges
    ]
    if known is not None:
        return build_import(
            "tiktoken",
            recovered.byte_ids,
            merges,
            known.special_tokens,
            show_token,
            source=source,
            merge_at=_rank_of(merges, source),
            pattern=known.pattern,
            pattern_known=True,
            name=known.name,
        )
    return _import_merges(recovered.byte_ids, merges, source, pattern, special_tokens)


def _rank_of(merges: Sequence[tuple[bytes, bytes, int]], source: str) -> Callable[[int], str]:
    """Where a .tiktoken file holds the token a merge makes: its rank."""
    return lambda index: f"{source} rank {merges[index][2]}"


def _shipped_merges(
    known: BuiltinVocabulary,
) -> tuple[list[int], list[tuple[bytes, bytes, int]]]:
    """The byte ids and merges :func:`recover_merges` gives for the official file `known`
    names (as :func:`recover_tiktoken` passes them on), from the package's model of it."""
    tokenizer = get_encoding(known.name)
    vocab = tokenizer.vocab
    ids = mergeable_ids(tokenizer)  # the ranks: the file lists exactly these ids
    byte_ids = [0] * BASE_VOCAB_SIZE
    for token_id in ids[:BASE_VOCAB_SIZE]:
        byte_ids[vocab[token_id][0]] = token_id
    merges = [
        (vocab[left], vocab[right], token_id)
        for (left, right), token_id in zip(tokenizer.merges, ids[BASE_VOCAB_SIZE:], strict=True)
    ]
    return byte_ids, merges


def _import_merges(
    byte_ids: Sequence[int],
    merges: Sequence[tuple[bytes, bytes, int]],
    source: str,
    pattern: str | SplitPattern | None,
    special_tokens: Mapping[str, int] | None,
) -> ImportResult:
    """The import of a file's merges with the caller's `pattern` and `special_tokens`.

    Without a pattern, GPT-2's is assumed; the caller has refused a file whose tokens it
    could not make. A pattern given is checked by :func:`build_import`. Without special
    tokens, the file (which cannot record any) gets ``<|endoftext|>`` after its last rank.
    """
    if special_tokens is None:
        last = max([*byte_ids, *(source_id for _, _, source_id in merges)])
        special_tokens = {END_OF_TEXT_TOKEN: last + 1}
    return build_import(
        "tiktoken",
        byte_ids,
        merges,
        special_tokens,
        show_token,
        source=source,
        merge_at=_rank_of(merges, source),
        specials_given=True,
        pattern="gpt2" if pattern is None else pattern,
        pattern_known=pattern is None,  # a pattern given is checked there
    )
