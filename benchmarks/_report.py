"""Render ``results.json`` as markdown tables; the JSON stays the single source of truth."""

from __future__ import annotations

from typing import Any

_TEXT_LABELS = {
    "regex": "bare pre-tokenizer regex pass (`PRETOKENIZER.findall`)",
    "split": "bpetite's pre-tokenizer (`split_pattern.split`; the ASCII twin on ASCII text)",
    "bpetite_cold": "bpetite, cold (fresh tokenizer, empty cache)",
    "bpetite_warm": "bpetite, warm (same text again)",
    "tiktoken_cold": "tiktoken, cold (fresh `Encoding`)",
    "tiktoken_warm": "tiktoken, warm",
    "hf_cold": "HF tokenizers, cold (fresh `Tokenizer`)",
    "hf_warm": "HF tokenizers, warm",
    "hf_pretokenize": "HF tokenizers' pre-tokenizer alone (`Split` + `ByteLevel`)",
    "load": "`Tokenizer.load` of the artifact (for context)",
}
_SENTENCE_LABELS = {
    "bpetite_cold": "bpetite, cold (first encode on a fresh tokenizer)",
    "bpetite_warm": "bpetite, warm (steady state)",
    "tiktoken_cold": "tiktoken, cold (first encode on a fresh `Encoding`)",
    "tiktoken": "tiktoken, warm (steady state)",
    "naive": "naive rank-pass encoder (`tests.reference.naive_encode`)",
}


def seconds(value: float | None) -> str:
    if value is None:
        return "–"
    if value < 1e-3:
        return f"{value * 1e6:.0f} µs"
    if value < 1:
        return f"{value * 1e3:.3g} ms" if value < 0.1 else f"{value * 1e3:.0f} ms"
    return f"{value:.3g} s" if value < 100 else f"{value:.0f} s"


def spread(stat: dict[str, Any]) -> str:
    """``median (min–max)``, or just the value for a single run."""
    if stat["runs"] == 1:
        return f"{seconds(stat['median'])} (1 run)"
    return f"{seconds(stat['median'])} ({seconds(stat['min'])}–{seconds(stat['max'])})"


def megabytes(value: float) -> str:
    return f"{value / 1e6:.0f} MB"


def render(results: dict[str, Any]) -> str:
    title = f"# bpetite benchmark results ({results['mode']} run)"
    return "\n\n".join([title, _machine(results), *sections(results)]) + "\n"


def sections(results: dict[str, Any]) -> list[str]:
    """The harness's tables and notes, one markdown section each, without the machine."""
    parts = [
        _training(results),
        _multi_file(results),
        _encoding(results),
        _ratios(results),
    ]
    if results["notes"]:
        parts.append("## Notes\n\n" + "\n".join(f"- {note}" for note in results["notes"]))
    return [part for part in parts if part]


def _machine(results: dict[str, Any]) -> str:
    machine = results["machine"]
    packages = ", ".join(f"{name} {version}" for name, version in machine["packages"].items())
    dirty = " (with uncommitted changes under src/)" if machine["git_dirty_src"] else ""
    load = machine.get("load_average_start"), machine.get("load_average_end")
    corpus = results["corpus"]
    return "\n".join(
        [
            f"- Machine: {machine['cpu_model']}, {machine['logical_cpus']} logical CPUs "
            f"({machine['available_cpus']} available to this process), {machine['platform']}",
            f"- Python: {machine['python']}; {packages}",
            f"- Commit: {machine['git_commit']}{dirty}; {machine['date_utc']}",
            f"- Load average (1/5/15 min) at start {load[0]}, at end {load[1]}",
            f"- Corpus: {corpus['path']} ({corpus['bytes']:,} bytes)",
            f"- Total harness time: {results.get('total_seconds', 0):.0f} s",
        ]
    )


def _training_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| implementation | vocab | merges | trainer time | process wall | peak RSS | CPU / wall |",
        "| --- | ---: | ---: | --- | --- | ---: | ---: |",
    ]
    for row in rows:
        lines.append(
            f"| {row['implementation']} | {row['vocab_size']} | {row['merges']:,} "
            f"| {spread(row['trainer_seconds'])} | {spread(row['process_wall_seconds'])} "
            f"| {megabytes(row['peak_rss_bytes']['median'])} | {row['cpu_per_wall']:.2f} |"
        )
    return lines


def _training(results: dict[str, Any]) -> str:
    lines = [
        "## Training TinyShakespeare",
        "",
        "Each training runs in its own fresh process. *Trainer time* is the training call "
        "alone on the corpus already in memory as a `str` (for `cli`, the command's own "
        "`elapsed_ms`); *process wall* is the whole child process from spawn to exit "
        "(interpreter start, imports, reading the corpus, training, and for `cli` saving "
        "the artifact); *peak RSS* is that process's maximum resident set. Median of the "
        "runs, (min–max) across them. *CPU / wall* above 1 means several threads worked.",
        "",
        *_training_table(results["training"]),
    ]
    for row in results["training"]:
        if row.get("threads"):
            lines.append(f"\n`{row['id']}` threads: {row['threads']}.")
    for row in results["training"]:
        phases = row.get("phases_seconds")
        if phases:
            described = ", ".join(f"{name} {seconds(value)}" for name, value in phases.items())
            lines.append(f"\n`{row['id']}` phases (medians): {described}.")
    agreement = results["merge_agreement"]
    if agreement:
        lines += ["", "Merge agreement with bpetite (same corpus, same vocabulary size):", ""]
        for key, facts in agreement.items():
            if "identical" in facts:
                verdict = "identical" if facts["identical"] else "DIFFERENT"
                lines.append(f"- `{key}`: {facts['merges']} merges, {verdict} to bpetite's.")
            else:
                lines.append(
                    f"- `{key}`: {facts['theirs']:,} merges vs bpetite's {facts['ours']:,}; "
                    f"the first {facts['identical_prefix']:,} identical in order, "
                    f"{facts['same_rank']:,} equal at the same rank, {facts['shared']:,} "
                    "in both lists (ties between equally frequent pairs are broken "
                    "differently, after which the orders drift)."
                )
    return "\n".join(lines)


def _multi_file(results: dict[str, Any]) -> str:
    multi = results["multi_file"]
    lines = [
        "## Multi-file training",
        "",
        "`bpetite.train_files` on the corpus as one file, and cut at line ends into "
        f"{multi['files']} files; columns as in the training table. With several workers "
        "the peak RSS is the largest single process and CPU / wall counts them all.",
        "",
        *_training_table(multi["rows"]),
    ]
    for row in multi["rows"]:
        phases = row.get("phases_seconds")
        if phases:
            described = ", ".join(f"{name} {seconds(value)}" for name, value in phases.items())
            lines.append(f"\n`{row['id']}` phases (medians): {described}.")
    checks = ", ".join(f"{name}: {'yes' if ok else 'NO'}" for name, ok in multi["checks"].items())
    lines += ["", f"Checks: {checks}."]
    return "\n".join(lines)


def _encoding(results: dict[str, Any]) -> str:
    encoding = results["encoding"]
    lines = [
        f"## Encoding (TinyShakespeare model at vocab {encoding['model_vocab_size']}, "
        f"{encoding['mergeable_vocab_size']:,} mergeable tokens)",
        "",
        "Cold: the first encode on a freshly built `Tokenizer(merges)` (the state "
        "`Tokenizer.load` returns), so the chunk cache is empty. Warm: the same text "
        "again on the same object. Building an encoder is never timed.",
        "",
        f"### The {encoding['sentence_words']}-word sentence",
        "",
        "| model vocab | encoder | p50 | p99 | min | max | runs |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for model, stats in encoding["sentence"].items():
        for name, stat in stats.items():
            lines.append(
                f"| {model} | {_SENTENCE_LABELS.get(name, name)} | {seconds(stat['p50'])} "
                f"| {seconds(stat['p99'])} | {seconds(stat['min'])} | {seconds(stat['max'])} "
                f"| {stat['runs']} |"
            )
    text = encoding["text"]
    lines += [
        "",
        f"### The whole corpus ({text['bytes']:,} bytes, {text['tokens']:,} tokens)",
        "",
        "| what | time, median (min–max) | MB/s |",
        "| --- | --- | ---: |",
    ]
    for name, stat in text["stats"].items():
        speed = "" if name == "load" else f"{stat['mb_per_s']:.1f}"
        lines.append(f"| {_TEXT_LABELS.get(name, name)} | {spread(stat)} | {speed} |")
    checks = ", ".join(f"{name}: {'yes' if ok else 'NO'}" for name, ok in text["checks"].items())
    lines += ["", f"Checks: {checks}."]
    mixed = encoding.get("multilingual")
    if mixed:
        lines += [
            "",
            f"### A multilingual text ({mixed['bytes']:,} bytes, {mixed['tokens']:,} tokens, "
            "its own 5k model)",
            "",
            "| what | time, median (min–max) | MB/s |",
            "| --- | --- | ---: |",
        ]
        for name, stat in mixed["stats"].items():
            lines.append(
                f"| {_TEXT_LABELS.get(name, name)} | {spread(stat)} | {stat['mb_per_s']:.1f} |"
            )
        checks = ", ".join(
            f"{name}: {'yes' if ok else 'NO'}" for name, ok in mixed["checks"].items()
        )
        lines += ["", f"Checks: {checks}."]
    long = encoding["long_chunk"]
    lines += [
        "",
        "### One long chunk (letters only, a single pre-token, never cached)",
        "",
        "| letters | bpetite | growth vs previous | tiktoken |",
        "| ---: | --- | ---: | --- |",
    ]
    previous: float | None = None
    for size in long["sizes"]:
        ours = long["stats"].get(f"bpetite_{size}")
        theirs = long["stats"].get(f"tiktoken_{size}")
        growth = "" if previous is None or ours is None else f"{ours['median'] / previous:.2f}x"
        lines.append(
            f"| {size:,} | {spread(ours) if ours else '–'} | {growth} "
            f"| {spread(theirs) if theirs else '–'} |"
        )
        previous = ours["median"] if ours else None
    return "\n".join(lines)


def _ratios(results: dict[str, Any]) -> str:
    lines = [
        "## Same-run ratios and targets",
        "",
        "*Value* is the ratio of the medians. *Paired* is the median of the per-repeat "
        "ratios, where both sides ran once per repeat, back to back: a slow stretch of "
        "the shared machine then slows both sides of a pair and cancels out.",
        "",
        "| ratio | value | paired | target | met | from |",
        "| --- | ---: | ---: | --- | --- | --- |",
    ]
    verdicts = {True: "yes", False: "**no**", None: ""}
    for row in results["ratios"]:
        value = "–" if row["value"] is None else f"{row['value']:.3g}"
        paired = "–" if row["paired"] is None else f"{row['paired']:.3g}"
        met = verdicts[row["met"]]
        if row["met"] is not None and row["met_paired"] != row["met"]:
            met += f" (paired: {verdicts[row['met_paired']]})"
        name = row["name"] + (f" ({row['how']})" if row["how"] else "")
        lines.append(
            f"| {name} | {value} | {paired} | {row['target'] or ''} | {met} | {row['source']} |"
        )
    return "\n".join(lines)
