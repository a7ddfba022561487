"""How strong are the goldens: Go coverage, Python coverage and a mutation score.

``parity strength`` (``make strength``) measures three things about a corpus and its
journal, and prints each figure with what is missing:

1. **Go coverage** of the tool logic (package ``recallref/recall``) while the
   recorder plays the corpus into a Go reference built with ``-cover``
   (``_gocover``);
2. **Python coverage** of ``recall/`` (lines and branches, ``coverage.py``) while
   the replay that ``make parity`` runs replays the journal (``_pycover``);
3. a **mutation score**: the Python tool logic mutated one mutant at a time
   (``_mutants``: in memory, the file is never written), each mutant run through
   the full golden replay in worker interpreters (``_runner``).

What no golden can reach, or no input can kill, is explained in
``explanations.toml`` (``_explain``), keyed on what the code means (normalized
forms, ``_normal``) so that a refactor of the port leaves each explanation on its
code; anything else missing is "unexplained", a case to add to the corpus. The
report (``_report``) is text, with ``--json`` and ``--markdown`` besides. Exit
status (``_cli``): 0 for a report; with a ``--fail-under-*`` gate or ``--smoke``, 5
when a figure is under its gate, anything is unexplained, or an explanation no
longer fits; 2 on a harness error.
"""

from __future__ import annotations

from parity.strength._cli import SMOKE_SAMPLE, SMOKE_SEED, add_parser, run
from parity.strength._explain import (
    EXPLANATIONS_PATH,
    Explanations,
    MutantMatch,
    Problem,
    StrengthDataError,
    load_explanations,
    parse_explanations,
    statements_of,
)
from parity.strength._gocover import (
    GO_TOOL_PACKAGE,
    GoBlock,
    GoCoverage,
    go_coverage,
    parse_go_profile,
)
from parity.strength._mutants import (
    Mutant,
    Shape,
    generate_mutants,
    mutants_of_source,
    regex_variants,
    sample_mutants,
    select_mutants,
)
from parity.strength._pycover import PyCoverage, PyGap, python_coverage
from parity.strength._report import entry_for, print_mutation
from parity.strength._runner import MutantResult, MutationRun, run_mutants

__all__ = [
    "EXPLANATIONS_PATH",
    "GO_TOOL_PACKAGE",
    "SMOKE_SAMPLE",
    "SMOKE_SEED",
    "Explanations",
    "GoBlock",
    "GoCoverage",
    "Mutant",
    "MutantMatch",
    "MutantResult",
    "MutationRun",
    "Problem",
    "PyCoverage",
    "PyGap",
    "Shape",
    "StrengthDataError",
    "add_parser",
    "entry_for",
    "generate_mutants",
    "go_coverage",
    "load_explanations",
    "mutants_of_source",
    "parse_explanations",
    "parse_go_profile",
    "print_mutation",
    "python_coverage",
    "regex_variants",
    "run",
    "run_mutants",
    "sample_mutants",
    "select_mutants",
    "statements_of",
]
