"""The corpora, one module per tool set moved from Go to Python (see ``parity.corpus``)."""
