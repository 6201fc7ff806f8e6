"""The core tier: the model and its one pipeline, text -> split -> chunks -> merges -> ids.

Read after :mod:`bpetite.reference`, which defines every result here; each module
below names the reference function it must equal. In the order data flows:

* ``_patterns``: the split of text into chunks merges never cross (equals
  ``reference.split``); ``_pretokenizer``: the chunks of texts counted;
* ``_specials``: special-token texts found and cut out before the split;
* ``_trainer``: learn the merges from chunk counts (equals ``reference.train_counts``),
  with ``_rescan`` for one merge in a huge word;
* ``_model``: the rules of a model's fields (``define``, for the constructor and the
  loader alike), and the vocabulary the merges make; ``_ids``: the ids of the mergeable
  tokens where a special token holds one among them (the encoder works in indices);
* ``_encoder``: apply them to new text (equals ``reference.encode``), with ``_rescan``;
* ``_decoder``: ids back to bytes and text (equals ``reference.decode``);
* ``_tokenizer``: the :class:`~bpetite.Tokenizer` that holds them together;
* ``_artifact``: the versioned JSON file a tokenizer is saved as.

Under them: ``_constants`` (values every stage agrees on), ``_errors`` (the error
family), ``_progress`` (the progress event), ``_json`` and ``_atomic`` (strict reading
and atomic writing of files), ``_gc`` (a pause of the cycle collector), ``_regex``
(the regex engine, with ``_unicode_classes`` where ``regex`` is missing). Beside
``Tokenizer``, what its methods build on the model alone: ``_unicode``, ``_budget``,
``_token_budget``, ``_surgery``, ``_batches``, ``_ranks``, ``_builtin`` and
``_model_names``. Nothing in
this folder imports the tiers above it (corpus, visualize, interop, cli);
``Tokenizer.explain`` and its HTML view reach ``bpetite.visualize`` by name when called.
Words such as rank, id, index, chunk, word, short, long and huge mean what
docs/architecture.md's glossary says.
"""
