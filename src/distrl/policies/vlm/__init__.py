"""The vision-language model policy (``policy.kind=vlm``): any transformers VLM, LoRA through
peft, AitW action text; plus a tiny local VLM for tests and CPU runs.

``VLMPolicy`` is importable from here; importing this package pulls in transformers and peft,
which the small policy never needs.
"""

from distrl.policies.vlm.policy import VLMPolicy

__all__ = ["VLMPolicy"]
