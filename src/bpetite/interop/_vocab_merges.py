"""Vocabulary plus merges: encoder.json + vocab.bpe (OpenAI), vocab.json + merges.txt (HF).

Both pairs are the same format: a JSON object from each token, written in GPT-2's byte
alphabet, to its id, and a text file of merges, one ``left right`` pair a line in rank
order, after an optional ``#version`` line. ``tokenizer.json`` embeds the same two
tables, so its import ends here too. GPT-2's encoder and Hugging Face's BPE both merge
by pair rank, lowest first, exactly like bpetite, so the conversion is exact whenever
the tables fit bpetite's layout; everything else is refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

from bpetite._internal import BASE_VOCAB_SIZE, END_OF_TEXT_TOKEN, loads_json
from bpetite.errors import InteropError
from bpetite.interop._alphabet import from_alphabet, to_alphabet
from bpetite.interop._model import (
    ImportFormat,
    ImportResult,
    build_import,
)


def spell(token: bytes) -> str:
    """A token as these files write it, in JSON quotes: ``b" the"`` -> ``"Ġthe"``."""
    return json.dumps(to_alphabet(token), ensure_ascii=False)


def load_json(data: bytes, source: str) -> object:
    """Strict JSON (bpetite's one reader): UTF-8, no duplicate keys, no NaN, bounded depth."""
    return loads_json(data, source=source, error=InteropError)


def check_vocab(value: object, source: str) -> dict[str, int]:
    """A token -> id object with non-negative integer ids."""
    if not isinstance(value, dict):
        raise InteropError(f"{source} must be a JSON object from token to id")
    for token, token_id in value.items():
        if type(token_id) is not int or token_id < 0:
            raise InteropError(
                f"{source}: the id of {json.dumps(token, ensure_ascii=False)} must be a "
                f"non-negative integer, got {json.dumps(token_id)}"
            )
    return value


def parse_merges_text(data: bytes, source: str) -> tuple[list[tuple[str, str]], list[int]]:
    """``left right`` lines in rank order, and the line each is on (for messages); a first
    ``#version`` line and blank lines are skipped."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InteropError(f"{source} is not UTF-8: {error}") from None
    merges: list[tuple[str, str]] = []
    lines: list[int] = []
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")  # byte-level tokens never hold a raw \r
        if not line or (number == 1 and line.startswith("#version")):
            continue
        halves = line.split(" ")
        if len(halves) != 2 or not all(halves):
            raise InteropError(
                f"{source} line {number}: expected two tokens separated by one space, "
                f"got {json.dumps(line, ensure_ascii=False)}"
            )
        merges.append((halves[0], halves[1]))
        lines.append(number)
    return merges, lines


def import_tables(
    vocab: Mapping[str, int],
    merges: Sequence[tuple[str, str]],
    added_tokens: Mapping[str, int],
    source_format: ImportFormat,
    source: str,
    *,
    merge_at: Callable[[int], str],
    pattern: str = "gpt2",
) -> ImportResult:
    """Map a byte-level vocabulary and merge list onto bpetite's layout, or refuse.

    `added_tokens` are the special tokens (tokenizer.json's ``added_tokens``); each may
    also be listed in the vocabulary with the same id. Without any, an
    ``<|endoftext|>`` in the vocabulary that no merge makes is the special token, as in
    GPT-2's encoder.json; a source with neither has no special token. `merge_at(rank)`
    says where the file holds a merge (``"'vocab.bpe' line 4"``). `pattern` is the
    preset the source splits text with.
    """
    for content, token_id in added_tokens.items():
        if vocab.get(content, token_id) != token_id:
            raise InteropError(
                f"{source} gives {json.dumps(content, ensure_ascii=False)} the id {token_id} "
                f"as an added token but {vocab[content]} in the vocabulary"
            )
    if len(set(vocab.values())) != len(vocab):
        owners: dict[int, str] = {}
        for token, token_id in vocab.items():
            other = owners.setdefault(token_id, token)
            if other != token:
                raise InteropError(
                    f"{source}: the vocabulary gives id {token_id} to both "
                    f"{json.dumps(other, ensure_ascii=False)} and "
                    f"{json.dumps(token, ensure_ascii=False)}"
                )
    by_bytes: dict[bytes, int] = {}
    #: Added tokens spelled in the byte alphabet: a byte or a merge that makes one of
    #: them is a mergeable token the file also makes special.
    added_by_bytes: dict[bytes, str] = {}
    for content in added_tokens:
        data = from_alphabet(content)
        if data is not None:
            added_by_bytes[data] = content

    def refuse_added(data: bytes, made_by: str) -> InteropError:
        content = added_by_bytes[data]
        return InteropError(
            f"{source}: the added token {json.dumps(content, ensure_ascii=False)} (id "
            f"{added_tokens[content]}) is also a mergeable token ({made_by}); bpetite gives "
            "a special token an id of its own, so it cannot make a mergeable token special"
        )

    for token, token_id in vocab.items():
        if token in added_tokens:
            continue
        data = from_alphabet(token)
        if data is None:
            raise InteropError(
                f"{source}: vocabulary entry {json.dumps(token, ensure_ascii=False)} (id "
                f"{token_id}) is not written in GPT-2's byte alphabet, so this is not a "
                "byte-level BPE vocabulary"
            )
        by_bytes[data] = token_id

    byte_ids = []
    for byte in range(BASE_VOCAB_SIZE):
        byte_id = by_bytes.get(bytes((byte,)))
        if byte_id is None and bytes((byte,)) in added_by_bytes:
            raise refuse_added(bytes((byte,)), f"the entry for byte 0x{byte:02x}")
        if byte_id is None:
            raise InteropError(
                f"{source}: the vocabulary has no entry for byte 0x{byte:02x} (written "
                f"{spell(bytes((byte,)))}); a byte-level vocabulary needs all 256 bytes"
            )
        byte_ids.append(byte_id)

    decoded: list[tuple[bytes, bytes, int]] = []
    for rank, (left, right) in enumerate(merges):
        halves = (from_alphabet(left), from_alphabet(right))
        if halves[0] is None or halves[1] is None:
            raise InteropError(
                f"{merge_at(rank)}: the merge {left} {right} is not written in GPT-2's byte "
                "alphabet"
            )
        made = halves[0] + halves[1]
        made_id = by_bytes.get(made)
        if made_id is None and made in added_by_bytes:
            raise refuse_added(made, f"{merge_at(rank)}: the merge {left} {right} makes it")
        if made_id is None:
            raise InteropError(
                f"{merge_at(rank)}: the merge {left} {right} makes {spell(made)}, which "
                f"the vocabulary does not list (no entry in {source})"
            )
        decoded.append((halves[0], halves[1], made_id))

    specials = dict(added_tokens)
    merged_ids = {made_id for _, _, made_id in decoded}
    if not specials and vocab.get(END_OF_TEXT_TOKEN) not in (None, *merged_ids):
        specials[END_OF_TEXT_TOKEN] = vocab[END_OF_TEXT_TOKEN]
    known = {*byte_ids, *merged_ids, *specials.values()}
    stray = [(token, token_id) for token, token_id in vocab.items() if token_id not in known]
    if stray:
        token, token_id = stray[0]
        raise InteropError(
            f"{source}: {len(stray)} vocabulary entr{'y is' if len(stray) == 1 else 'ies are'} "
            f"neither a byte, nor made by a merge, nor a special token (for example "
            f"{json.dumps(token, ensure_ascii=False)}, id {token_id}); no text can produce "
            "such a token with bpetite's merges, so bpetite cannot represent it"
        )
    return build_import(
        source_format,
        byte_ids,
        decoded,
        specials,
        spell,
        source=source,
        merge_at=merge_at,
        pattern=pattern,
        pattern_known=source_format == "tokenizer.json",
    )
