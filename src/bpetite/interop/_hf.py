"""Hugging Face ``tokenizer.json``: a BPE model over GPT-2's byte alphabet.

Export writes the tokenizer's split pattern as a ``Split`` pre-tokenizer followed by a
``ByteLevel`` step that only maps bytes to the alphabet, bpetite's vocabulary and
merges, a ``ByteLevel`` decoder and every special token as an added token with
bpetite's id; import reads the pattern (a preset's spelling) and the added tokens back.
Hugging Face's BPE merges the lowest-ranked pair first, leftmost occurrence first, as
bpetite does, so the file encodes exactly like bpetite (up to the regex engine's Unicode
tables, see docs/interop.md). Merges are written as ``"left right"`` strings, which every
``tokenizers`` version reads (byte-level tokens never contain a space: 0x20 is ``Ġ``).

A directory for ``transformers.AutoTokenizer.from_pretrained`` adds what a
``tokenizer.json`` has no place for: which special token is the beginning, end or
padding of a sequence, and a chat template (``tokenizer_config.json`` and
``special_tokens_map.json``, in the form transformers 4 writes and 5 reads).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from bpetite import PRESETS, Tokenizer
from bpetite._internal import END_OF_TEXT_TOKEN, atomic_writer, show_token, write_atomically
from bpetite.chat import check_chat_template
from bpetite.errors import InteropError, ParameterError
from bpetite.interop._alphabet import to_alphabet
from bpetite.interop._model import (
    ImportResult,
    check_distinct_bytes,
    first_token_not_encoding_to_itself,
    mergeable_ids,
    refuse_unportable_pattern,
)
from bpetite.interop._vocab_merges import import_tables, spell

#: GPT-2's pattern as released, which Hugging Face's ByteLevel(use_regex=true) applies.
GPT2_PATTERN: Final = (
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
)
#: tiktoken's faster spelling of the same pattern (``r50k_pat_str``).
TIKTOKEN_GPT2_PATTERN: Final = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
)
#: Spellings of bpetite's pattern that split every text identically (tests check this).
PRETOKENIZER_PATTERN: Final = PRESETS["gpt2"]
EQUIVALENT_PATTERNS: Final = frozenset({PRETOKENIZER_PATTERN, GPT2_PATTERN, TIKTOKEN_GPT2_PATTERN})

#: A possessive counted repetition such as ``\p{N}{1,3}+``. Python's ``regex`` and Rust's
#: engines read it as possessive; Oniguruma, which ``tokenizers`` uses, reads ``{1,3}+``
#: as "one or more of {1,3}", which would join any run of digits into one piece.
_POSSESSIVE_COUNT: Final = re.compile(r"(\{\d+(?:,\d*)?\})\+")


def hf_regex(pattern: str, name: str) -> str:
    r"""`pattern` spelled for Hugging Face's Split pre-tokenizer (Oniguruma).

    A preset's possessive counted repetition ends its alternative (cl100k's
    ``\p{N}{1,3}+|``), where nothing follows that could make it backtrack, so the plain
    greedy ``{1,3}`` splits identically. A custom pattern is written verbatim, and one
    that holds such a repetition is refused: bpetite cannot know it is safe to rewrite.
    """
    if name != "custom":
        return _POSSESSIVE_COUNT.sub(r"\1", pattern)
    if _POSSESSIVE_COUNT.search(pattern):
        raise InteropError(
            "the custom split pattern has a possessive counted repetition such as {1,3}+, "
            "which Hugging Face's regex engine reads differently; write it without the "
            "final + (or as an atomic group) and train again"
        )
    return pattern


def preset_of_regex(regex: str) -> str | None:
    """The preset a Split regex spells: the export's spelling of a preset, or GPT-2's.

    A preset's source with a possessive counted repetition (cl100k's ``\\p{N}{1,3}+``)
    is not that preset in a tokenizer.json: Oniguruma reads it differently (see
    :func:`hf_regex`), so only the spelling the export writes is.
    """
    if regex in EQUIVALENT_PATTERNS:
        return "gpt2"
    for name, source in PRESETS.items():
        if regex == hf_regex(source, name):
            return name
    return None


_BYTE_LEVEL_MAPPING_ONLY: Final = {
    "type": "ByteLevel",
    "add_prefix_space": False,
    "trim_offsets": False,
    "use_regex": False,
}


def export_hf(tokenizer: Tokenizer) -> str:
    """Return the text of a ``tokenizer.json`` that encodes and decodes exactly like `tokenizer`.

    The split pattern becomes a Split pre-tokenizer and every special token an added
    token with bpetite's id, also where it sits among the mergeable ids (p50k_base's
    ``<|endoftext|>``). Raises InteropError if two tokens share their bytes (a
    hand-made artifact can do that; the file's vocabulary maps each token's text to one
    id), if two special texts share an id (o200k_harmony's alias), if a special token
    is spelled like a mergeable token in the byte alphabet, or for a custom pattern
    holding a construct Hugging Face's engine reads otherwise (see :func:`hf_regex` and
    :func:`refuse_unportable_pattern`).
    """
    check_distinct_bytes(tokenizer, "tokenizer.json")
    _check_no_aliases(tokenizer)
    refuse_unportable_pattern(tokenizer, "tokenizer.json")
    vocab = tokenizer.vocab
    texts = {token_id: to_alphabet(vocab[token_id]) for token_id in mergeable_ids(tokenizer)}
    document = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": token_id,
                "content": content,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for content, token_id in sorted(
                tokenizer.special_tokens.items(), key=lambda item: item[1]
            )
        ],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": hf_regex(tokenizer.pattern, tokenizer.pattern_name)},
                    "behavior": "Isolated",
                    "invert": False,
                },
                _BYTE_LEVEL_MAPPING_ONLY,
            ],
        },
        "post_processor": None,
        "decoder": _BYTE_LEVEL_MAPPING_ONLY,
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": _model_vocab(texts, tokenizer),
            "merges": [f"{texts[left]} {texts[right]}" for left, right in tokenizer.merges],
        },
    }
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def _check_no_aliases(tokenizer: Tokenizer) -> None:
    """Refuse two special texts for one id: tokenizer.json gives each id one token."""
    owners: dict[int, str] = {}
    for text, token_id in tokenizer.special_tokens.items():
        first = owners.setdefault(token_id, text)
        if first != text:
            raise InteropError(
                f"special tokens {json.dumps(first, ensure_ascii=False)} and "
                f"{json.dumps(text, ensure_ascii=False)} share the id {token_id}; "
                "tokenizer.json gives each id one token, so drop the second first: "
                f"tokenizer.with_special_tokens(drop=[{text!r}])"
            )


def _model_vocab(texts: dict[int, str], tokenizer: Tokenizer) -> dict[str, int]:
    """The BPE model's vocabulary: each mergeable token's text, and sparse specials too.

    ``tokenizers`` gives an added token whose text is also in the model's vocabulary
    that entry's id, whatever id the file states, so a special token spelled like a
    mergeable token in the byte alphabet (``"§"``, ``"Ġthe"``) is refused in every
    layout. It gives an added token that is not in the model's vocabulary the next free
    id, ignoring the id the file states; special ids with gaps, or among the mergeable
    ids, keep theirs only when the model's vocabulary lists them (as OpenAI-style files
    do).
    """
    vocab = {text: token_id for token_id, text in texts.items()}
    for content, token_id in sorted(tokenizer.special_tokens.items(), key=lambda item: item[1]):
        if content in vocab:
            mergeable = vocab[content]
            raise InteropError(
                f"the special token {json.dumps(content, ensure_ascii=False)} (id {token_id}) "
                f"is spelled like the mergeable token {mergeable} "
                f"{show_token(tokenizer.vocab[mergeable])} in tokenizer.json's byte alphabet, "
                "so tokenizers would give it that token's id; rename or drop it first: "
                f"tokenizer.with_special_tokens(drop=[{content!r}])"
            )
    specials = sorted(set(tokenizer.special_tokens.values()))
    if specials == list(range(len(texts), len(texts) + len(specials))):
        return vocab
    for content, token_id in tokenizer.special_tokens.items():
        vocab[content] = token_id
    return vocab


def write_hf(
    tokenizer: Tokenizer, path: str | os.PathLike[str], *, overwrite: bool = False
) -> None:
    """Write :func:`export_hf`'s file to `path` atomically (FileExistsError unless `overwrite`)."""
    write_atomically(path, export_hf(tokenizer).encode("utf-8"), overwrite=overwrite)


#: The files of a directory export, in the order they are written.
HF_FILES: Final = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
#: Files transformers reads before or beside ours, which would change the tokenizer a
#: directory export loads as; an export refuses to write beside them.
_SHADOWING_FILES: Final = ("added_tokens.json", "chat_template.jinja", "chat_template.json")


def export_hf_pretrained(
    tokenizer: Tokenizer,
    *,
    bos_token: str | None = None,
    eos_token: str | None = None,
    pad_token: str | None = None,
    chat_template: str | None = None,
) -> dict[str, str]:
    """The files of a directory ``AutoTokenizer.from_pretrained`` loads: name -> text.

    ``tokenizer.json`` is :func:`export_hf`'s. ``tokenizer_config.json`` and
    ``special_tokens_map.json`` give each role (`bos_token`, `eos_token`, `pad_token`)
    to one of the tokenizer's special tokens, list the other special tokens as
    ``additional_special_tokens`` (so ``all_special_tokens`` holds every one), keep
    decoding exact (``clean_up_tokenization_spaces`` off) and store `chat_template`, a
    Jinja template, as transformers reads it, once it compiles (ParameterError if not,
    with the error rendering it would give; checked only where jinja2 is installed). A
    role that names no special token raises ParameterError. A byte-level vocabulary
    encodes every text, so there is no unknown token. The roles add nothing to the ids:
    transformers' ``encode`` gives bpetite's ids exactly, as ``tokenizer.json`` alone does.
    """
    roles = _checked_roles(
        tokenizer, {"bos_token": bos_token, "eos_token": eos_token, "pad_token": pad_token}
    )
    if chat_template is not None and not isinstance(chat_template, str):
        raise TypeError(f"chat_template must be a str, got {type(chat_template).__name__}")
    if chat_template is not None:
        check_chat_template(chat_template)  # stored to be rendered: it must compile
    others = [text for text in _specials_by_id(tokenizer) if text not in roles.values()]
    special_map: dict[str, Any] = {**roles, "additional_special_tokens": others}
    config: dict[str, Any] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        **special_map,
        # On, transformers 4 would drop the space before punctuation when decoding.
        "clean_up_tokenization_spaces": False,
    }
    if chat_template is not None:
        config["chat_template"] = chat_template
    return {
        "tokenizer.json": export_hf(tokenizer),
        "tokenizer_config.json": _json_text(config),
        "special_tokens_map.json": _json_text(special_map),
    }


def write_hf_pretrained(
    tokenizer: Tokenizer,
    directory: str | os.PathLike[str],
    *,
    bos_token: str | None = None,
    eos_token: str | None = None,
    pad_token: str | None = None,
    chat_template: str | None = None,
    overwrite: bool = False,
) -> list[Path]:
    """Write :func:`export_hf_pretrained`'s files into `directory` and return their paths.

    The directory is created if missing (its parent must exist), or may already hold a
    model's other files (``config.json``, weights). Each file is written atomically, and
    none is published before all are written, so a failure leaves none of them new. An
    existing file of the same name is kept (OutputExistsError) unless `overwrite`. A
    directory holding a file transformers would read instead of ours
    (``added_tokens.json``, ``chat_template.jinja``...) is refused with InteropError.
    """
    files = export_hf_pretrained(
        tokenizer,
        bos_token=bos_token,
        eos_token=eos_token,
        pad_token=pad_token,
        chat_template=chat_template,
    )
    folder = Path(directory)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"cannot write into '{folder}': it is a file, not a directory")
    for name in _SHADOWING_FILES:
        if (folder / name).exists():
            raise InteropError(
                f"'{folder / name}' exists, and transformers would read it beside or instead "
                "of the exported files; remove it or export to another directory"
            )
    created = not folder.exists()
    if created:
        folder.mkdir()  # FileNotFoundError names the missing parent
    paths = [folder / name for name in files]
    written: list[tuple[Path, os.stat_result]] = []  # each file and its temp file's identity
    try:
        with contextlib.ExitStack() as stack:
            # Every file is written and flushed to disk before the first is published
            # (a full disk fails here, with nothing published): the writers publish as
            # the stack unwinds, and an error while writing removes every temp file.
            for path, text in zip(paths, files.values(), strict=True):
                handle = stack.enter_context(atomic_writer(path, overwrite=overwrite))
                handle.write(text.encode("utf-8"))
                handle.flush()
                os.fsync(handle.fileno())
                written.append((path, os.fstat(handle.fileno())))
    except BaseException:
        if created:
            # Publishing one file can still fail after another was published: in a folder
            # this call made, remove those (its own inodes, never a file someone else made
            # meanwhile) and the folder. A folder that was there keeps each file whole, old
            # or new: removing a new one would lose the old one it replaced.
            for path, identity in written:
                with contextlib.suppress(OSError):
                    if os.path.samestat(path.lstat(), identity):
                        path.unlink()
            with contextlib.suppress(OSError):
                folder.rmdir()  # only if the failure left it empty
        raise
    return paths


def _checked_roles(tokenizer: Tokenizer, roles: Mapping[str, str | None]) -> dict[str, str]:
    """The roles given, each checked to be one of the tokenizer's special tokens."""
    checked = {}
    for role, token in roles.items():
        if token is None:
            continue
        if not isinstance(token, str):
            raise TypeError(f"{role} must be a str, got {type(token).__name__}")
        if token not in tokenizer.special_tokens:
            known = ", ".join(
                json.dumps(text, ensure_ascii=False) for text in tokenizer.special_tokens
            )
            raise ParameterError(
                f"{role} {json.dumps(token, ensure_ascii=False)} is not a special token of "
                f"this tokenizer; its special tokens are {known or 'none'}"
            )
        checked[role] = token
    return checked


def _specials_by_id(tokenizer: Tokenizer) -> list[str]:
    return [text for text, _ in sorted(tokenizer.special_tokens.items(), key=lambda item: item[1])]


def _json_text(document: dict[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def import_tokenizer_json(document: dict[str, Any], source: str) -> ImportResult:
    """Import a byte-level BPE ``tokenizer.json`` that splits text with a preset's pattern.

    The pattern (GPT-2's, cl100k's or o200k's) and every added token come back as the
    tokenizer's pattern and special tokens.

    Everything that changes which ids a text gets is checked: the normalizer, the
    pre-tokenizer and its regex, the model's options, added tokens and post-processing
    (which may add tokens around every input). Anything bpetite cannot reproduce is
    refused with the field that says so.
    """
    for field in ("truncation", "padding", "normalizer"):
        if document.get(field) is not None:
            raise InteropError(
                f"{source} sets {field}; bpetite has no {field}, so it would encode differently"
            )
    pattern = _check_pre_tokenizer(document.get("pre_tokenizer"), source)
    _check_optional_byte_level(document.get("post_processor"), "post_processor", source)
    _check_optional_byte_level(document.get("decoder"), "decoder", source)

    model = document.get("model")
    if not isinstance(model, dict):
        raise InteropError(f'{source} has no "model" object')
    if model.get("type", "BPE") != "BPE":
        raise InteropError(
            f"{source} holds a {json.dumps(model.get('type'))} model; bpetite imports only BPE"
        )
    for option, neutral in (
        ("dropout", (None, 0, 0.0)),
        ("continuing_subword_prefix", (None, "")),
        ("end_of_word_suffix", (None, "")),
        ("byte_fallback", (None, False)),
        ("ignore_merges", (None, False, True)),
    ):
        value = model.get(option)
        if value not in neutral or type(value) not in {type(v) for v in neutral}:
            raise InteropError(
                f"{source}: model.{option} is {json.dumps(value)}; bpetite has no such "
                "option, so it would encode differently"
            )
    vocab = model.get("vocab")
    if not isinstance(vocab, dict):
        raise InteropError(f"{source}: model.vocab must be an object from token to id")
    for token, token_id in vocab.items():
        if type(token_id) is not int or token_id < 0:
            raise InteropError(
                f"{source}: model.vocab gives {json.dumps(token, ensure_ascii=False)} the id "
                f"{json.dumps(token_id)}; ids are non-negative integers"
            )
    added_tokens = _added_tokens(document.get("added_tokens", []), source)
    if END_OF_TEXT_TOKEN in vocab and END_OF_TEXT_TOKEN not in added_tokens:
        raise InteropError(
            f"{source} has {END_OF_TEXT_TOKEN} in its vocabulary but not as an added token, "
            "so it encodes the literal as ordinary text; bpetite always reads it as the "
            "special token"
        )
    result = import_tables(
        vocab,
        _merges(model.get("merges"), source),
        added_tokens,
        "tokenizer.json",
        source,
        merge_at=lambda rank: f"{source} model.merges[{rank}]",
        pattern=pattern,
    )
    if model.get("ignore_merges") is True:
        _check_whole_word_lookup(result, source)
    return result


def _check_pre_tokenizer(pre_tokenizer: object, source: str) -> str:
    """Accept GPT-2's ByteLevel(use_regex) or Split(a preset's pattern) + ByteLevel.

    Returns the preset's name.
    """
    if not isinstance(pre_tokenizer, dict):
        raise InteropError(
            f"{source} has no pre-tokenizer; bpetite imports only byte-level BPE that splits "
            "text with GPT-2's pattern"
        )
    if pre_tokenizer.get("type") == "ByteLevel":
        _check_byte_level(pre_tokenizer, source, use_regex=True)
        return "gpt2"
    steps = pre_tokenizer.get("pretokenizers")
    if (
        pre_tokenizer.get("type") == "Sequence"
        and isinstance(steps, list)
        and len(steps) == 2
        and isinstance(steps[0], dict)
        and isinstance(steps[1], dict)
        and steps[0].get("type") == "Split"
        and steps[1].get("type") == "ByteLevel"
    ):
        name = _check_split(steps[0], source)
        _check_byte_level(steps[1], source, use_regex=False)
        return name
    shown = json.dumps(pre_tokenizer, ensure_ascii=False)
    raise InteropError(
        f"{source} has the pre-tokenizer {shown[:120]}; bpetite imports only a ByteLevel "
        "pre-tokenizer with use_regex, or a Split with a preset's pattern followed by ByteLevel"
    )


def _check_split(split: dict[str, Any], source: str) -> str:
    pattern = split.get("pattern")
    regex = pattern.get("Regex") if isinstance(pattern, dict) else None
    if not isinstance(regex, str):
        raise InteropError(
            f"{source} splits on {json.dumps(pattern, ensure_ascii=False)}, not on a regex; "
            "bpetite cannot reproduce it"
        )
    name = preset_of_regex(regex)
    repetition = _POSSESSIVE_COUNT.search(regex)
    if name is None and repetition is not None:
        raise InteropError(
            f"{source} splits text with the regex {json.dumps(regex, ensure_ascii=False)}, "
            f"whose {repetition.group()} Hugging Face's regex engine (Oniguruma) reads as a "
            f"repeated group (one or more runs of {repetition.group(1)}), not as the possessive "
            "repetition bpetite's engine reads, so the file's ids would differ from bpetite's; "
            "it cannot be imported exactly (bpetite's own export writes such a repetition "
            f"without the final +, as {repetition.group(1)})"
        )
    if name is None:
        raise InteropError(
            f"{source} splits text with the regex {json.dumps(regex, ensure_ascii=False)}, not "
            "bpetite's gpt2, cl100k or o200k pattern; another regex may split some text "
            "differently in Hugging Face's regex engine (Oniguruma) than in bpetite's, and an "
            "unmatched character is kept there but refused here, so it cannot be imported exactly"
        )
    if split.get("behavior") != "Isolated" or split.get("invert", False) is not False:
        raise InteropError(
            f"{source}: the Split pre-tokenizer must keep each match as its own piece "
            f'("behavior": "Isolated", "invert": false), got behavior '
            f"{json.dumps(split.get('behavior'))}, invert {json.dumps(split.get('invert'))}"
        )
    return name


def _check_byte_level(step: dict[str, Any], source: str, *, use_regex: bool) -> None:
    if step.get("add_prefix_space", True) is not False:
        raise InteropError(
            f"{source}: the ByteLevel pre-tokenizer adds a space before the text "
            "(add_prefix_space); bpetite never does, so it would encode differently"
        )
    if step.get("use_regex", True) is not use_regex:
        detail = (
            "must split with GPT-2's pattern (use_regex: true) when it is the only step"
            if use_regex
            else "must not split again after the Split step (use_regex: false)"
        )
        raise InteropError(f"{source}: the ByteLevel pre-tokenizer {detail}")


def _check_optional_byte_level(step: object, field: str, source: str) -> None:
    """A ByteLevel post-processor only adjusts offsets; a ByteLevel decoder maps back to bytes."""
    if step is None or (isinstance(step, dict) and step.get("type") == "ByteLevel"):
        return
    kind = step.get("type") if isinstance(step, dict) else step
    raise InteropError(
        f"{source} has a {json.dumps(kind)} {field}; bpetite imports only byte-level BPE "
        f"(no {field}, or ByteLevel)"
    )


def _merges(merges: object, source: str) -> list[tuple[str, str]]:
    """``"left right"`` strings (older tokenizers) or ``[left, right]`` pairs (newer)."""
    if not isinstance(merges, list):
        raise InteropError(f"{source}: model.merges must be a list")
    pairs: list[tuple[str, str]] = []
    for rank, merge in enumerate(merges):
        halves = merge.split(" ") if isinstance(merge, str) else merge
        if (
            not isinstance(halves, list)
            or len(halves) != 2
            or not all(isinstance(half, str) and half for half in halves)
        ):
            raise InteropError(
                f'{source}: model.merges[{rank}] must be "left right" or [left, right], '
                f"got {json.dumps(merge, ensure_ascii=False)}"
            )
        pairs.append((halves[0], halves[1]))
    return pairs


def _added_tokens(added: object, source: str) -> dict[str, int]:
    if not isinstance(added, list):
        raise InteropError(f"{source}: added_tokens must be a list")
    tokens: dict[str, int] = {}
    for index, token in enumerate(added):
        if not isinstance(token, dict) or type(token.get("id")) is not int:
            raise InteropError(f"{source}: added_tokens[{index}] must be an object with an id")
        content = token.get("content")
        if not isinstance(content, str):
            raise InteropError(f"{source}: added_tokens[{index}] has no content string")
        for flag in ("single_word", "lstrip", "rstrip"):
            if token.get(flag, False) is not False:
                raise InteropError(
                    f"{source}: added token {json.dumps(content, ensure_ascii=False)} sets "
                    f"{flag}, which changes how it matches; bpetite matches it exactly"
                )
        if content in tokens:
            raise InteropError(f"{source} lists the added token {json.dumps(content)} twice")
        tokens[content] = token["id"]
    return tokens


def _check_whole_word_lookup(result: ImportResult, source: str) -> None:
    """ignore_merges looks a whole piece up in the vocabulary before merging.

    That equals merging whenever every token's own bytes merge back to that token,
    which is exactly what this checks.
    """
    found = first_token_not_encoding_to_itself(result.tokenizer)
    if found is not None:
        token_id, ids = found
        token = result.tokenizer.vocab[token_id]
        raise InteropError(
            f"{source} sets model.ignore_merges, which returns a piece's own token when "
            f"it has one, but the merges split {spell(token)} into {len(ids)} tokens; "
            "bpetite would encode it differently"
        )
