"""stride.torch_utils.module_modes: the train / eval switch sets every submodule as train() would."""

from __future__ import annotations

from torch import nn

from stride.torch_utils.module_modes import ModuleModes


def test_set_switches_every_submodule():
    model = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5), nn.Sequential(nn.BatchNorm1d(2)))
    modes = ModuleModes(model)
    for training in (False, True, False):
        modes.set(training)
        assert all(m.training is training for m in model.modules())


def test_a_module_that_customises_train_is_switched_through_it():
    calls = []

    class Custom(nn.Module):
        def train(self, mode: bool = True) -> "Custom":
            calls.append(mode)
            return super().train(mode)

    model = nn.Sequential(nn.Linear(2, 2), Custom())
    modes = ModuleModes(model)
    modes.set(False)
    modes.set(False)  # unchanged: nothing called
    modes.set(True)
    assert calls == [False, True] and all(m.training for m in model.modules())
