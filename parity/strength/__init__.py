"""How strong are the goldens: Go coverage, Python coverage and a mutation score.

``parity strength`` (``make strength``) measures three things about a corpus and its
journal, and prints each figure with what is missing (``_cli``):

1. **Go coverage** of the tool logic (package ``recallref/recall``) while the
   recorder plays the corpus into a Go reference built with ``-cover``, and
2. **Python coverage** of the tool logic (lines and branches) under ``coverage run``
   of the replay that ``make parity`` runs (``_cover``);
3. a **mutation score**: the Python tool logic mutated one mutant at a time
   (``_mutants``: in memory, the file is never written), each mutant run through
   the full golden replay in worker processes (``_runner``).

What no golden can reach, or no input can kill, is explained in
``explanations.toml`` (``_explain``), each entry keyed on its function, its line's
text and its change, so that moving code leaves it on its code; anything else
missing is "unexplained", a case to add to the corpus.
"""

from __future__ import annotations

from parity.strength._cli import SMOKE_SAMPLE, add_parser, entry_for, run
from parity.strength._cover import GO_TOOL_PACKAGE, go_coverage, python_coverage
from parity.strength._explain import (
    Explanations,
    Problem,
    StrengthDataError,
    load_explanations,
    parse_explanations,
)
from parity.strength._mutants import Mutant, generate_mutants, mutants_of_source, regex_variants
from parity.strength._runner import MutantResult, run_mutants

__all__ = [
    "GO_TOOL_PACKAGE",
    "SMOKE_SAMPLE",
    "Explanations",
    "Mutant",
    "MutantResult",
    "Problem",
    "StrengthDataError",
    "add_parser",
    "entry_for",
    "generate_mutants",
    "go_coverage",
    "load_explanations",
    "mutants_of_source",
    "parse_explanations",
    "python_coverage",
    "regex_variants",
    "run",
    "run_mutants",
]
