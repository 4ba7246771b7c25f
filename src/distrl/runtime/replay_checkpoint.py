"""The replay sampler's state across a resume: priorities and the beta schedule's progress.

A resumed run rebuilds the replay's windows from the Parquet store, so a window need not land in
the slot it had: slots are not a stable name for it. The checkpoint therefore keys each live
window's stored priority by the window itself (its trajectory id and first step), and on restore
gives every rebuilt window the priority it had. Windows that arrived after the checkpoint keep
the priority a new window gets. The sampler's draw count (which drives prioritized replay's
importance-sampling exponent beta) and its wall-clock budget progress are restored as is.
"""

from __future__ import annotations

from typing import Any

import torch

from distrl.algos.step_window import StepWindow
from distrl.replay import ReplayBuffer


def window_key(window: StepWindow) -> str:
    return f"{window.trajectory_id}:{window.start}"


def sampler_snapshot(buffer: ReplayBuffer[StepWindow]) -> dict[str, Any]:
    """The sampler's state keyed by window (tensors and plain data: loadable with
    ``weights_only``)."""
    state = buffer.sampler.state_dict()
    slots = buffer.storage.slots()
    snapshot: dict[str, Any] = {
        "num_samples": int(state.get("num_samples", 0)),
        "windows": [window_key(buffer.storage[slot]) for slot in slots],
    }
    if "progress" in state:
        snapshot["progress"] = float(state["progress"])
    if "stored_priorities" in state:
        snapshot["priorities"] = torch.as_tensor(state["stored_priorities"][slots])
    return snapshot


def restore_sampler(buffer: ReplayBuffer[StepWindow], snapshot: dict[str, Any]) -> int:
    """Give the rebuilt windows their checkpointed priorities and the sampler its draw count;
    returns how many windows got their priority back."""
    state = buffer.sampler.state_dict()
    restored = 0
    if "stored_priorities" in state and "priorities" in snapshot:
        saved = dict(zip(snapshot["windows"], snapshot["priorities"].tolist(), strict=True))
        stored = state["stored_priorities"].copy()
        for slot in buffer.storage.slots():
            priority = saved.get(window_key(buffer.storage[slot]))
            if priority is not None:
                stored[slot] = priority
                restored += 1
        state["stored_priorities"] = stored
    if "num_samples" in state:
        state["num_samples"] = snapshot["num_samples"]
    if "progress" in state and "progress" in snapshot:
        state["progress"] = snapshot["progress"]
    buffer.sampler.load_state_dict(state)
    return restored
