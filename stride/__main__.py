"""``python -m stride`` runs the ``stride`` command."""

import sys

from .entry.cli import main

sys.exit(main())
