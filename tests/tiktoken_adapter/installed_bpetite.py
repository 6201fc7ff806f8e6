"""A pytest plugin for tiktoken's suite: bpetite's source counts as installed code.

Hypothesis feeds its text strategies with string constants it finds in local modules
(not in site-packages, not tests). tiktoken's suite runs against an installed tiktoken,
whose constants it never sees; here bpetite runs from its source tree, so texts such as
``<|fim_prefix|>`` would reach ``st.text()`` and make ``test_hyp_roundtrip`` encode a
special token, which tiktoken refuses as bpetite does. Counting bpetite's folder among
the installed ones keeps the suite's inputs what they are against tiktoken.
"""

from pathlib import Path

from hypothesis.internal import scrutineer

import bpetite

scrutineer.SITE_PACKAGES_DIRS.add(Path(bpetite.__file__).resolve().parent)
