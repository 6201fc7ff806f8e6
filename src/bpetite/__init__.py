"""bpetite: a deterministic byte-level BPE tokenizer in pure Python."""
