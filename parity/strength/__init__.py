"""How strong are the goldens (``parity strength``, ``_cli``; ``make strength``): Go and
Python coverage of the tool logic under the goldens (``_cover``), and a mutation score
(``_mutants``, ``_runner``), less what ``explanations.toml`` explains (``_explain``);
``docs/strength.md`` says how each figure is made."""
