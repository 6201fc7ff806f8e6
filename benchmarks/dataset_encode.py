"""Encoding a dataset: ``bpetite.write_dataset`` against tiktoken's ``encode_ordinary_batch``.

The code corpus of the section above, one document per file, with GPT-2's vocabulary
read from the committed ``gpt2.tiktoken`` by each side. bpetite:
``write_dataset(files, "train.bin", gpt2, workers=2)``, worker processes; tiktoken:
``encode_ordinary_batch(texts, num_threads=2)`` on texts already in memory. The two run
interleaved, round by round, and neither keeps its result between rounds (71 million
ids as int lists are 2.5 GB that bpetite's forked workers would inherit). The
``train.bin`` must hold tiktoken's ids, document by document, each followed by
``<|endoftext|>``.
"""

from __future__ import annotations

import sys
from array import array
from functools import partial

from benchmarks import big_corpus, harness, peers
from bpetite import write_dataset

WORKERS = 2
#: How many documents tiktoken encodes at a time for the (untimed) check.
CHECK_BATCH = 500


def run(run: harness.Run) -> harness.Section:
    corpus = big_corpus.build_corpus(run.big_corpus_mb, run.cache)
    texts = [path.read_bytes().decode("utf-8") for path in corpus.files]
    tokenizer, ranks = peers.openai("gpt2", run.cache)
    encoding = peers.tiktoken_of(tokenizer, ranks)
    output = run.scratch / "train.bin"
    rounds = 1 if run.quick else 3
    cases = {
        "bpetite dataset, 2 workers": partial(
            write_dataset, corpus.files, output, tokenizer, workers=WORKERS, overwrite=True
        ),
        "tiktoken, 2 threads": partial(encoding.encode_ordinary_batch, texts, num_threads=WORKERS),
    }
    harness.log(f"dataset: {len(texts):,} documents, {corpus.bytes:,} bytes, {rounds} round(s)")
    timings = harness.measure(cases, rounds, keep="none")

    ours = array("H", output.read_bytes())
    if sys.byteorder == "big":  # the file is little-endian
        ours.byteswap()
    separator = array("H", [tokenizer.special_tokens["<|endoftext|>"]])
    position, same = 0, True
    for start in range(0, len(texts), CHECK_BATCH):
        for ids in encoding.encode_ordinary_batch(
            texts[start : start + CHECK_BATCH], num_threads=WORKERS
        ):
            end = position + len(ids)
            same = (
                same and ours[position:end] == array("H", ids) and ours[end : end + 1] == separator
            )
            position = end + 1
    title = f"Encoding a dataset (GPT-2's vocabulary, 2 workers, {rounds} round(s))"
    section = harness.Section(title, __doc__)
    section.record({name: timing.stat for name, timing in timings.items()})
    section.check(
        "the .bin holds tiktoken's ids, document by document", same and position == len(ours)
    )
    section.add(
        f"{len(texts):,} files, {corpus.bytes:,} bytes, {position - len(texts):,} tokens.",
        harness.table(
            "encoder | time, median (min–max) | >MB/s",
            [
                [name, harness.spread(t.stat), f"{corpus.bytes / t.stat.median / 1e6:.1f}"]
                for name, t in timings.items()
            ],
        ),
    )
    section.ratio(
        f"encode a {corpus.bytes / 1e6:.0f} MB code corpus to a dataset, 2 workers: "
        "bpetite speed / tiktoken's (2 threads)",
        timings["tiktoken, 2 threads"].stat,
        timings["bpetite dataset, 2 workers"].stat,
        ">= 0.8",
        how="GPT-2's vocabulary; ids checked document by document",
        source="speed target",
    )
    return section
