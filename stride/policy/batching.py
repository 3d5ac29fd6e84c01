"""``PolicyIO``: what crosses between a worker's data and an algorithm's tensors.

Learn batches (a list of samples or a replay buffer's dict of columns) become tensors on the
policy's device; ``{env_id: obs}`` become one stacked observation batch; a sampling wrapper's
actions go back per env, in the env's units. Observations are normalised here when the policy
keeps running statistics (:class:`~stride.policy.obs_norm.ObsNorm`).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, cast

import numpy as np
import torch

from ..torch_utils import to_device, to_tensor
from ..torch_utils.module_modes import ModuleModes
from ..utils.data import Nested, default_collate
from .action_range import ActionScale
from .obs_norm import ObsNorm


class PolicyIO:
    """Batch conversion for one policy: its device, observation statistics, action scale and modes."""

    def __init__(self, device: torch.device, obs_norm: Optional[ObsNorm], action_scale: ActionScale,
                 modes: ModuleModes) -> None:
        self._device, self._obs_norm, self._action_scale, self._modes = device, obs_norm, action_scale, modes

    def learn_batch(self, data: Any) -> Dict[str, torch.Tensor]:
        """A learn batch as tensors on the policy's device: a list of sample dicts (the seeds' form)
        is collated; a dict of columns (the replay buffer's batched path) is converted in place."""
        columns: Nested
        if isinstance(data, list):
            columns = default_collate(data)
        else:
            columns = {k: to_tensor(v) for k, v in data.items() if not isinstance(v, (list, str)) or k == "IS"}
        if not isinstance(columns, dict):
            raise TypeError(f"a learn batch is a list of dict samples or a dict of columns, not {type(data).__name__}")
        # what each algorithm reads are tensors (a dict observation: a dict of them), moved once: pinned,
        # non-blocking, in their stored dtypes (uint8 frames become float inside the model, on the device)
        batch = cast(Dict[str, torch.Tensor], columns)
        if self._device.type != "cpu":
            batch = cast(Dict[str, torch.Tensor], to_device(batch, self._device))
        if self._obs_norm is not None:  # stored raw; learnt from with the statistics the collector has now
            for key in ("obs", "next_obs"):
                if isinstance(batch.get(key), torch.Tensor):
                    batch[key] = self._obs_norm.normalize(batch[key])
        return batch

    def obs_batch(self, data: Dict[int, Any]) -> Tuple[List[int], torch.Tensor | Dict[str, torch.Tensor]]:
        """``{env_id: obs}`` -> (ids, stacked obs tensor on device)."""
        ids = list(data.keys())
        values = list(data.values())
        if isinstance(values[0], dict):
            stacked = {k: torch.as_tensor(np.stack([v[k] for v in values])) for k in values[0]}
            return ids, {k: (v.float() if v.dtype == torch.float64 else v).to(self._device) for k, v in stacked.items()}
        else:
            try:
                arr = np.array(values)  # one call; np.stack is 4x slower on a handful of small arrays
            except ValueError:
                arr = np.stack(values)  # ragged: np.stack names the mismatching shapes
            obs = torch.from_numpy(arr)
            if obs.dtype == torch.float64:
                obs = obs.float()
            if self._device.type != "cpu":
                obs = obs.to(self._device)
            if self._obs_norm is not None:
                obs = self._obs_norm.normalize(obs)
        return ids, obs

    def act(self, model: Any, data: Dict[int, Any], to_env: bool = False, **kwargs: Any) -> Dict[int, Any]:
        """One batched forward of a sampling wrapper: ``{env_id: obs}`` -> ``{env_id: {'action': ...}}``;
        ``to_env``: the wrapper's actions are squashed into [-1, 1] and leave in the env's units."""
        ids, obs = self.obs_batch(data)
        self._modes.set(False)
        with torch.inference_mode():  # only NumPy actions leave: no autograd bookkeeping at all (~5% of a step)
            action = model.forward(obs, **kwargs)["action"].cpu().numpy()
        if to_env:
            action = self._action_scale.to_env(action)
        return {env_id: {"action": a} for env_id, a in zip(ids, action)}
