"""The ``stride`` command's argument parser: argparse whose usage errors are one line."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (``stride: error: ... (see PROG -h)``), exit code 2."""

    def error(self, message: str) -> NoReturn:
        print(f"stride: error: {message} (see {self.prog} -h)", file=sys.stderr)
        sys.exit(2)
