"""The core tier: the model and its one pipeline, text -> split -> chunks -> merges -> ids.

Read after :mod:`bpetite.reference`, which defines every result here; each module
below names the reference function it must equal. In the order data flows:

* ``_patterns``, ``_pretokenizer``: the split of text into chunks merges never cross;
* ``_specials``: special-token texts found and cut out before the split;
* ``_trainer``: learn the merges from chunk counts (equals ``reference.train``);
* ``_encoder``: apply them to new text (equals ``reference.encode``);
* ``_decoder``: ids back to bytes and text (equals ``reference.decode``);
* ``_tokenizer``: the :class:`~bpetite.Tokenizer` that holds them together;
* ``_artifact``: the versioned JSON file a tokenizer is saved as.

Under them: ``_constants`` (values every stage agrees on), ``_errors`` (the error
family), ``_progress`` (the progress event), ``_json`` and ``_atomic`` (strict reading
and atomic writing of files), ``_gc`` (a pause of the cycle collector). Nothing in
this folder imports from the tiers above it (corpus, visualize, interop, cli).
"""
