"""How strong are the goldens (``parity strength``, ``make strength``): Go coverage and
Python coverage of the tool logic under the goldens (``_cover``), and a mutation score
(``_mutants``, ``_runner``), less what ``explanations.toml`` explains (``_explain``);
``docs/strength.md`` says how each figure is made."""

from __future__ import annotations

from parity.strength._cli import add_parser as add_parser
from parity.strength._cli import run as run
