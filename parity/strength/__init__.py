"""How strong are the goldens: Go coverage, Python coverage and a mutation score.

``parity strength`` (``make strength``, ``_cli``) measures, for a corpus and its journal:

1. **Go coverage** of the tool logic (package ``recallref/recall``) while the recorder
   plays the corpus into a Go reference built with ``go build -cover`` (``_cover``);
2. **Python coverage** of the tool logic under ``coverage run`` of the replay (``_cover``);
3. a **mutation score**: the Python tool logic mutated in memory (``_mutants``), each
   mutant run through the golden replay in worker processes (``_runner``).

What no golden can reach, or no input can kill, is explained in ``explanations.toml``
(``_explain``); anything else missing is "unexplained", a case to add to the corpus.
"""

from __future__ import annotations

from parity.strength._cli import add_parser, run

__all__ = ["add_parser", "run"]
