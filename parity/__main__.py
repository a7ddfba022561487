"""``python -m parity``: the harness's command line (see ``parity.cli``)."""

from parity.cli import main

raise SystemExit(main())
