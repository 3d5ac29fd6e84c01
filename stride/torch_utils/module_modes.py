"""Train / eval mode of one model, switched only when it changes."""

from __future__ import annotations

from typing import Optional, Sequence

from torch import nn


class ModuleModes:
    """``set(training)`` switches ``model`` (and every submodule) to train or eval mode when it
    changes. ``nn.Module.train()`` walks every submodule recursively (~50 us for a small MLP, twice
    per collect cycle); when no module overrides ``train`` each module's public ``training`` flag is
    set from a list cached at the first switch, which is what ``train()`` would do."""

    def __init__(self, model: nn.Module) -> None:
        self._model = model
        self._modules: Optional[Sequence[nn.Module]] = None

    def set(self, training: bool) -> None:
        model = self._model
        if model.training == training:
            return
        mods = self._modules
        if mods is None:
            mods = list(model.modules())
            if any(type(m).train is not nn.Module.train for m in mods):
                mods = ()  # someone customised train(): always go through it
            self._modules = mods
        if mods:
            for m in mods:
                m.training = training
        else:
            model.train(training)
