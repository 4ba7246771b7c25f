"""Typed, validated run configuration: schema sections, YAML presets and ``key=value`` overrides.

Nothing else in distrl reads raw config dicts; everything takes a :class:`RunConfig` (or one of its
sections) built here, so every value has been checked once, with one-line errors.

>>> cfg = load_config("general", ["play.episodes=5"])
>>> (cfg.env.suite, cfg.play.episodes)
('general', 5)
"""

from distrl.config.loader import (
    ConfigError,
    apply_overrides,
    available_presets,
    config_to_yaml,
    load_config,
)
from distrl.config.schema import (
    ConfigSection,
    DynamicsConfig,
    EnvConfig,
    LatencyConfig,
    PhoneSimConfig,
    PlayConfig,
    RunConfig,
)

__all__ = [
    "ConfigError",
    "ConfigSection",
    "DynamicsConfig",
    "EnvConfig",
    "LatencyConfig",
    "PhoneSimConfig",
    "PlayConfig",
    "RunConfig",
    "apply_overrides",
    "available_presets",
    "config_to_yaml",
    "load_config",
]
