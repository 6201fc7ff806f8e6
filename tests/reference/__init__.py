"""The reference-equivalence tests: bpetite.reference itself, then every fast path against it."""
