"""Run by tests/pyodide/run.mjs inside Pyodide: bpetite with no `regex` and no network.

The one argument is a JSON object: ``texts`` to encode with ``cl100k_base`` and a small
training run (``train``: a text, a vocabulary size, a pattern), done from the text and
from a file of it. It prints one line,
``RESULT`` and a JSON object of what bpetite computed, for
``tests/project/test_pyodide.py`` to check against tiktoken and ``bpetite.reference``
on CPython.
"""

import importlib.util
import json
import sys
from pathlib import Path

import bpetite
from bpetite.core import _regex

job = json.loads(sys.argv[1])
encoding = bpetite.get_encoding("cl100k_base")
encoded = [encoding.encode(text, allowed_special="all") for text in job["texts"]]
train = job["train"]
trained = bpetite.Tokenizer.train(
    train["text"], vocab_size=train["vocab_size"], pattern=train["pattern"]
)
# The same training from a file, streamed in blocks in this process (workers=1).
corpus = Path("/tmp/corpus.txt")
corpus.write_text(train["text"], encoding="utf-8")
from_file = bpetite.train_files(
    corpus,
    train["vocab_size"],
    pattern=train["pattern"],
    workers=1,
    block_size=256,
)
result = {
    "python": list(sys.version_info[:3]),
    "platform": sys.platform,
    "regex_found": importlib.util.find_spec("regex") is not None,
    "engine": "regex" if _regex.have_regex() else "re",
    "rich_imported": "rich" in sys.modules,
    "encoded": encoded,
    "decoded": [encoding.decode(ids) for ids in encoded],
    "merges": [list(pair) for pair in trained.merges],
    "file_merges": [list(pair) for pair in from_file.merges],
    "trained_encoded": [trained.encode(text) for text in job["texts"]],
}
print("RESULT", json.dumps(result))
