"""Experiment logs: a text log per component, TensorBoard events, and ``progress.csv``."""

from __future__ import annotations

import csv
import logging
import os
from typing import List, Mapping, Optional, Protocol


def build_logger(exp_dir: Optional[str], name: str, level: int = logging.INFO) -> logging.Logger:
    """A logger writing ``<exp_dir>/log/<name>.txt`` (and nowhere else: the terminal has the bar)."""
    logger = logging.getLogger(f"stride.{name}.{id(exp_dir)}" if exp_dir else f"stride.{name}")
    logger.setLevel(level)
    logger.propagate = False
    if exp_dir and not logger.handlers:
        os.makedirs(os.path.join(exp_dir, "log"), exist_ok=True)
        handler = logging.FileHandler(os.path.join(exp_dir, "log", f"{name}.txt"))
        handler.setFormatter(logging.Formatter("[%(asctime)s] %(message)s", "%Y-%m-%d %H:%M:%S"))
        logger.addHandler(handler)
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
    return logger


def close_logger(logger: logging.Logger) -> None:
    for h in list(logger.handlers):
        h.close()
        logger.removeHandler(h)


class TBWriter(Protocol):
    """What Stride uses of a TensorBoard ``SummaryWriter``: scalars, then close."""

    def add_scalar(self, tag: str, scalar_value: float, global_step: int) -> object:
        """Record one scalar at ``global_step``."""

    def close(self) -> None:
        """Flush and close the event file."""


def build_tb_writer(exp_dir: Optional[str]) -> Optional[TBWriter]:
    """A tensorboardX ``SummaryWriter`` on ``<exp_dir>/log/serial`` (None without an exp dir)."""
    if not exp_dir:
        return None
    from tensorboardX import SummaryWriter

    writer: TBWriter = SummaryWriter(os.path.join(exp_dir, "log", "serial"))
    return writer


class ProgressCSV:
    """Append rows to ``progress.csv``; the header is fixed by the first row, later keys are ignored."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._fields: Optional[List[str]] = None
        if os.path.exists(path):
            with open(path) as f:
                header = f.readline().strip()
            self._fields = header.split(",") if header else None

    def write(self, row: Mapping[str, object]) -> None:
        """Append ``row`` (keys outside the header are ignored)."""
        new = self._fields is None
        fields = self._fields = list(row) if self._fields is None else self._fields
        with open(self._path, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
            if new:
                w.writeheader()
            w.writerow(row)
