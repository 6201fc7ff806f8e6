"""Write the model files that ``bpetite.get_encoding`` loads, from OpenAI's rank files.

A rank file (``cl100k_base.tiktoken``) lists each token's bytes and id; bpetite's model
is a merge list. Recovering every token's merge from the ids takes seconds, so it is
done here, once, and the package ships the result (the format is described in
``src/bpetite/core/_builtin.py``). For each rank file the built-in table names:

1. read ``tests/data/<rank file>.gz`` and check it has tiktoken's sha256;
2. recover each token's merge (the way ``bpetite import`` reads a ``.tiktoken`` file),
   and write it in indices: the file's ids skip the ids the table's special tokens hold
   among them (p50k_base's ``<|endoftext|>`` at 50256), every other id is its index;
3. write ``src/bpetite/_data/<stem>.merges.gz`` (gzip -9, no name or time in the
   header) and print the sha256 of its content, which the table must hold.

    uv run python scripts/write_builtin_vocabularies.py           # write, then compare
    uv run python scripts/write_builtin_vocabularies.py --check   # compare only

Exit codes: 0 when every shipped file is what its rank file gives and the table holds
its sha256; 1 otherwise (each difference printed); 2 for a usage error.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import sys
from collections.abc import Collection, Sequence
from pathlib import Path

from bpetite._internal import (
    BASE_VOCAB_SIZE,
    BUILTIN_VOCABULARIES,
    merged_ids,
    parse_ranks,
    recover_merges,
    write_model_file,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
RANK_FILES = REPO_ROOT / "tests" / "data"
PACKAGE_DATA = REPO_ROOT / "src" / "bpetite" / "_data"


def model_of(rank_file: str, sha256: str, special_ids: Collection[int]) -> bytes:
    """The content of the model file for `rank_file`, whose sha256 must be `sha256`;
    `special_ids` are the ids the table's special tokens hold in the names that use it."""
    path = RANK_FILES / f"{rank_file}.gz"
    data = gzip.decompress(path.read_bytes())
    if hashlib.sha256(data).hexdigest() != sha256:
        raise SystemExit(f"{path}: not tiktoken's {rank_file} (its sha256 is not {sha256})")
    recovered = recover_merges(parse_ranks(data, str(path)), str(path))
    if sorted(recovered.byte_ids) != list(range(BASE_VOCAB_SIZE)):
        raise SystemExit(f"{path}: its bytes do not hold the ids 0..255")
    made = [token_id for _, _, token_id in recovered.merges]
    if made != list(merged_ids(len(made), special_ids)):
        raise SystemExit(
            f"{path}: its merged tokens' ids are not the ids its special tokens leave free "
            "from 256 on, which a model file cannot hold"
        )
    index = dict(zip(made, range(BASE_VOCAB_SIZE, BASE_VOCAB_SIZE + len(made)), strict=True))
    index.update((byte_id, byte_id) for byte_id in range(BASE_VOCAB_SIZE))
    merges = [(index[left], index[right]) for left, right, _ in recovered.merges]
    return write_model_file(recovered.byte_order, merges)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="write nothing; compare the shipped files"
    )
    args = parser.parse_args(argv)
    table = {
        vocabulary.rank_file: (vocabulary.file, vocabulary.rank_file_sha256, vocabulary.file_sha256)
        for vocabulary in BUILTIN_VOCABULARIES.values()
    }
    special_ids: dict[str, set[int]] = {}  # every name's that uses the rank file
    for vocabulary in BUILTIN_VOCABULARIES.values():
        special_ids.setdefault(vocabulary.rank_file, set()).update(
            vocabulary.special_tokens.values()
        )
    differences = 0
    for rank_file, (file, rank_sha256, file_sha256) in table.items():
        content = model_of(rank_file, rank_sha256, special_ids[rank_file])
        digest = hashlib.sha256(content).hexdigest()
        path = PACKAGE_DATA / file
        if not args.check:
            path.write_bytes(gzip.compress(content, compresslevel=9, mtime=0))
        shipped = gzip.decompress(path.read_bytes()) if path.is_file() else None
        print(f"{file}: {len(content):,} bytes, sha256 {digest}")
        if shipped != content:
            print(f"  DIFFERS: the shipped {path} is not what {rank_file} gives")
            differences += 1
        if file_sha256 != digest:
            print(f"  DIFFERS: the table in core/_builtin.py has {file_sha256}")
            differences += 1
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
