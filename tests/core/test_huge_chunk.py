"""One chunk of 50 MB trains and encodes in memory linear in its size (docs/reliability.md).

Each training or encoding runs in a fresh interpreter, which reports its own peak
resident set (``VmHWM``: ``ru_maxrss`` would count the parent's pages, inherited
through the fork before the exec) along with what it computed. The bound is the one
docs/reliability.md states: 20 times the chunk's bytes, for the whole process
(interpreter, the text, its chunk, the merges and the ids). Two chunks: one letter
repeated, and the letters of TinyShakespeare repeated, one English word of 50 MB
with no space (the ``gpt2`` pattern makes a run of letters one chunk). The results
are checked independently: the run of one letter against what BPE must learn from it
(each doubling, then the leftovers), the text against the decoded ids. One letter is
encoded with the model of a run of 1,000, so that the chunk is merged, not found whole.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bpetite import reference
from tests.datafiles import DATA_DIR

#: The chunk's size, and the bound on a process's peak memory per byte of it.
SIZE = 50_000_000
BOUND = 20

CHILD = r"""
import gzip, json, sys
from pathlib import Path
from bpetite import Tokenizer

def peak():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

kind, size, task, artifact = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
if kind == "one letter":
    text = "a" * size
else:
    source = gzip.decompress(Path(sys.argv[5]).read_bytes()).decode("utf-8")
    letters = "".join(char for char in source if char.isascii() and char.isalpha())
    text = (letters * (size // len(letters) + 1))[:size]
    del source, letters
if task == "train":
    tokenizer = Tokenizer.train(text, 300)
    tokenizer.save(artifact)
    report = {"merges": [list(pair) for pair in tokenizer.merges]}
else:
    # One letter: a model of a shorter run, so that the chunk is merged, not one token.
    if kind == "one letter":
        tokenizer = Tokenizer.train("a" * 1000, 300)
    else:
        tokenizer = Tokenizer.load(artifact)
    ids = tokenizer.encode(text)
    report = {"tokens": len(ids), "peak": peak()}  # the check below is not the encoder's
    report["roundtrip"] = tokenizer.decode(ids) == text
    if len(ids) < 100:
        report["ids"] = ids
print(json.dumps({"peak": peak(), **report}))
"""


def run(kind: str, task: str, artifact: Path) -> dict[str, Any]:
    """One training or encoding of the 50 MB chunk in a fresh interpreter: its report."""
    source = str(DATA_DIR / "tinyshakespeare.txt.gz")
    command = [sys.executable, "-c", CHILD, kind, str(SIZE), task, str(artifact), source]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    report: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return report


def doublings_then_leftovers(size: int) -> list[tuple[int, int]]:
    """What BPE learns from one chunk of `size` copies of ``a``, worked out by hand.

    While the run holds three or more copies of the newest token ``t``, the pair
    ``(t, t)`` is counted at least twice and every other pair once, so it merges: each
    doubling halves the run, and an odd run leaves one ``t`` at its end. Then every
    pair occurs once, and the smallest, the two last ids, joins until one token is left.
    """
    merges: list[tuple[int, int]] = []
    tail: list[int] = []  # the leftovers after the run, left to right
    token, run = 97, size
    while run >= 3 or (run == 2 and not tail):
        merges.append((token, token))
        if run % 2:
            tail.insert(0, token)
        token, run = 256 + len(merges) - 1, run // 2
    tokens = [token] * run + tail
    while len(tokens) > 1:
        # every pair occurs once: the smallest (left, right) wins, ties by right
        index = min(range(len(tokens) - 1), key=lambda i: (tokens[i], tokens[i + 1]))
        merges.append((tokens[index], tokens[index + 1]))
        tokens[index : index + 2] = [256 + len(merges) - 1]
    return merges


def test_the_hand_worked_merges_are_the_reference_on_small_runs() -> None:
    for size in [*range(1, 40), 97, 1000, 1023, 1024, 1025]:
        expected = reference.train_counts({b"a" * size: 1}, 300)
        assert doublings_then_leftovers(size) == expected, size


def test_fifty_megabytes_of_one_letter(tmp_path: Path) -> None:
    artifact = tmp_path / "one-letter.json"
    trained = run("one letter", "train", artifact)
    assert [tuple(pair) for pair in trained["merges"]] == doublings_then_leftovers(SIZE)
    assert trained["peak"] <= BOUND * SIZE
    encoded = run("one letter", "encode", artifact)
    # With the model of a^1000, most tokens are a^512 or longer.
    assert encoded["roundtrip"] is True and 0 < encoded["tokens"] <= SIZE // 500
    assert encoded["peak"] <= BOUND * SIZE


def test_fifty_megabytes_of_english_with_no_space(tmp_path: Path) -> None:
    artifact = tmp_path / "letters.json"
    trained = run("letters", "train", artifact)
    assert len(trained["merges"]) == 44
    assert trained["peak"] <= BOUND * SIZE
    encoded = run("letters", "encode", artifact)
    assert encoded["roundtrip"] is True
    assert 0 < encoded["tokens"] < SIZE
    assert encoded["peak"] <= BOUND * SIZE
