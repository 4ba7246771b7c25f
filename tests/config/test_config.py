"""Config schema, presets, overrides and one-line error messages."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from distrl.config import (
    ConfigError,
    DynamicsConfig,
    LatencyConfig,
    PlayConfig,
    RunConfig,
    apply_overrides,
    available_presets,
    config_to_yaml,
    load_config,
)
from distrl.config.schema import ConfigSection

EXPECTED_PRESETS = {"default", "general", "webshop", "emulator-latency", "clean", "vlm-quick"}


def _all_sections(model: type[ConfigSection]) -> list[type[ConfigSection]]:
    """Every section class reachable from ``model``, so schema-wide rules are checked on all."""
    found = [model]
    for field in model.model_fields.values():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, ConfigSection):
            found.extend(_all_sections(annotation))
    return found


def _error_of(preset: str | Path | None = None, overrides: tuple[str, ...] = ()) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(preset, overrides)
    message = str(info.value)
    assert "\n" not in message, message
    return info.value


# --- schema -----------------------------------------------------------------------------------


def test_defaults_validate_and_match_the_spec() -> None:
    cfg = RunConfig()
    assert RunConfig.model_validate(cfg.model_dump()) == cfg
    assert cfg.seed == 0 and cfg.run_root == "runs" and cfg.run_name is None
    assert (cfg.env.backend, cfg.env.suite, cfg.env.split) == ("phonesim", "general", "train")
    assert cfg.env.task_file is None
    assert (cfg.env.phonesim.width, cfg.env.phonesim.height) == (360, 720)
    dynamics = cfg.env.phonesim.dynamics
    assert (dynamics.popup_prob, dynamics.loading_prob, dynamics.ad_prob) == (0.25, 0.3, 0.35)
    assert dynamics.loading_max_steps == 3 and dynamics.popups and dynamics.keyboard_covers_content
    latency = cfg.env.phonesim.latency
    assert not latency.enabled and latency.time_scale == 1.0
    assert (latency.step_seconds, latency.type_extra_seconds, latency.reset_seconds) == (7, 4, 45)
    assert (latency.crash_prob, latency.hang_prob, latency.hang_timeout_seconds) == (0, 0, 120)
    assert (cfg.play.policy, cfg.play.noise, cfg.play.episodes) == ("oracle", 0.3, 20)
    assert cfg.play.save_screenshots is False


def test_every_field_has_a_description_and_sections_forbid_unknown_keys() -> None:
    for section in _all_sections(RunConfig):
        assert section.model_config.get("extra") == "forbid", section.__name__
        assert section.model_config.get("validate_assignment") is True, section.__name__
        for name, field in section.model_fields.items():
            assert field.description, f"{section.__name__}.{name} has no description"


def test_dynamics_none_switches_everything_off() -> None:
    off = DynamicsConfig.none()
    switches = [name for name, f in DynamicsConfig.model_fields.items() if f.annotation is bool]
    assert len(switches) == 7
    assert all(getattr(off, name) is False for name in switches)


def test_assignment_is_validated() -> None:
    cfg = RunConfig()
    cfg.play.episodes = 5
    assert cfg.play.episodes == 5
    with pytest.raises(ValidationError) as info:
        cfg.play.episodes = 0
    error = ConfigError.from_validation_error(info.value, PlayConfig, prefix=("play",))
    assert str(error) == (
        "config key 'play.episodes' = 0 is out of range (must be >= 1 and <= 1000000)"
    )
    assert error.key == "play.episodes"


def test_non_finite_floats_are_rejected() -> None:
    with pytest.raises(ValidationError):
        LatencyConfig(step_seconds=float("inf"))


# --- presets ----------------------------------------------------------------------------------


def test_available_presets_lists_the_shipped_files() -> None:
    assert set(available_presets()) >= EXPECTED_PRESETS


@pytest.mark.parametrize("name", sorted(EXPECTED_PRESETS))
def test_every_preset_loads(name: str) -> None:
    assert isinstance(load_config(name), RunConfig)
    assert load_config(f"{name}.yaml") == load_config(name)


def test_presets_set_what_their_names_say() -> None:
    assert load_config() == RunConfig()
    assert load_config("default") == RunConfig()
    assert load_config("general").env.suite == "general"
    assert load_config("webshop").env.suite == "webshop"
    latency = load_config("emulator-latency").env.phonesim.latency
    assert latency.enabled and latency.time_scale == 0.01
    assert latency.step_seconds == LatencyConfig().step_seconds
    assert load_config("clean").env.phonesim.dynamics == DynamicsConfig.none()


def test_preset_from_a_path(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("seed: 7\nplay:\n  policy: random\n", encoding="utf-8")
    for preset in (path, str(path)):
        cfg = load_config(preset)
        assert (cfg.seed, cfg.play.policy) == (7, "random")


def test_empty_file_and_empty_sections_mean_defaults(tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing here\n", encoding="utf-8")
    assert load_config(empty) == RunConfig()
    commented = tmp_path / "commented.yaml"
    commented.write_text("env:\n  # suite: webshop\nplay:\n", encoding="utf-8")
    assert load_config(commented) == RunConfig()


# --- overrides --------------------------------------------------------------------------------


def test_overrides_set_nested_values_with_yaml_types() -> None:
    cfg = load_config(
        "webshop",
        [
            "env.phonesim.dynamics.ads=false",
            "env.phonesim.dynamics.popup_prob=0.5",
            "env.phonesim.latency.enabled=true",
            "env.phonesim.width=480",
            "play.episodes=3",
            "run_name=my-run",
            "env.task_file=tasks.jsonl",
        ],
    )
    dynamics = cfg.env.phonesim.dynamics
    assert dynamics.ads is False and dynamics.popup_prob == 0.5 and dynamics.popups is True
    assert cfg.env.phonesim.latency.enabled is True
    assert cfg.env.phonesim.width == 480 and cfg.play.episodes == 3
    assert cfg.run_name == "my-run" and cfg.env.task_file == "tasks.jsonl"
    assert cfg.env.suite == "webshop"


def test_override_null_and_later_overrides_win() -> None:
    cfg = load_config(None, ["run_name=first", "run_name=null", "seed=1", "seed=2"])
    assert cfg.run_name is None and cfg.seed == 2
    assert load_config(None, ["run_name=123abc"]).run_name == "123abc"


def test_mapping_override_merges_into_the_section() -> None:
    cfg = load_config("emulator-latency", ["env.phonesim.latency={crash_prob: 0.01}"])
    latency = cfg.env.phonesim.latency
    assert latency.crash_prob == 0.01 and latency.enabled and latency.time_scale == 0.01


def test_apply_overrides_returns_a_new_config() -> None:
    base = RunConfig()
    changed = apply_overrides(base, ["play.policy=noisy", "play.noise=0.1"])
    assert (changed.play.policy, changed.play.noise) == ("noisy", 0.1)
    assert base.play.policy == "oracle"
    assert apply_overrides(base, []) == base
    with pytest.raises(ConfigError, match="play.noise"):
        apply_overrides(base, ["play.noise=2"])


# --- one-line errors --------------------------------------------------------------------------


def test_unknown_key_lists_the_sections_fields() -> None:
    error = _error_of(overrides=("env.phonesim.dynamics.popup=1",))
    message = str(error)
    assert message.startswith("config key 'env.phonesim.dynamics.popup' is unknown (allowed: ")
    for name in DynamicsConfig.model_fields:
        assert name in message
    assert "did you mean 'popups'" in message
    assert error.key == "env.phonesim.dynamics.popup"


def test_unknown_top_level_key() -> None:
    message = str(_error_of(overrides=("sead=3",)))
    assert "config key 'sead' is unknown" in message
    assert "seed, run_root, run_name, env, play" in message


def test_literal_error_lists_choices() -> None:
    message = str(_error_of(overrides=("env.suite=shopping",)))
    assert (
        message == "config key 'env.suite' = 'shopping' is not allowed (allowed: general, webshop)"
    )


def test_range_error_gives_the_bounds() -> None:
    assert str(_error_of(overrides=("play.episodes=0",))) == (
        "config key 'play.episodes' = 0 is out of range (must be >= 1 and <= 1000000)"
    )
    assert str(_error_of(overrides=("play.noise=1.5",))) == (
        "config key 'play.noise' = 1.5 is out of range (must be >= 0 and <= 1)"
    )
    message = str(_error_of(overrides=("env.phonesim.latency.step_seconds=0",)))
    assert "'env.phonesim.latency.step_seconds' = 0" in message and "must be > 0" in message


def test_type_errors_say_what_was_expected() -> None:
    assert str(_error_of(overrides=("play.noise=abc",))) == (
        "config key 'play.noise' = 'abc' has the wrong type (expected a number)"
    )
    assert "expected true or false" in str(_error_of(overrides=("play.save_screenshots=maybe",)))
    assert "expected a whole number" in str(_error_of(overrides=("play.episodes=2.5",)))
    assert "expected a string or null" in str(_error_of(overrides=("env.task_file=[1, 2]",)))
    message = str(_error_of(overrides=("env=3",)))
    assert "config key 'env' = 3 has the wrong type" in message
    assert "backend, suite, split, task_file, phonesim" in message


def test_several_problems_stay_on_one_line() -> None:
    message = str(_error_of(overrides=("play.episodes=0", "env.suite=x")))
    assert "'play.episodes'" in message and "'env.suite'" in message


def test_override_syntax_errors() -> None:
    assert "'play.episodes' is not key=value" in str(_error_of(overrides=("play.episodes",)))
    assert "is not key=value" in str(_error_of(overrides=("=3",)))
    assert "empty part" in str(_error_of(overrides=("play..episodes=3",)))
    message = str(_error_of(overrides=("play=3", "play.noise=0.1")))
    assert "config key 'play' = 3 is not a section" in message and "'play.noise'" in message


def test_unknown_preset_lists_available() -> None:
    message = str(_error_of("genral"))
    assert "config preset 'genral' is unknown" in message
    for name in EXPECTED_PRESETS:
        assert name in message
    assert "did you mean 'general'" in message


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.yaml"
    message = str(_error_of(path))
    assert str(path) in message and "cannot be read" in message


def test_invalid_yaml_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("env:\n  suite: general\n  phonesim: [unclosed\n  width: 3\n", encoding="utf-8")
    message = str(_error_of(path))
    assert "broken.yaml" in message and "not valid YAML" in message and "line 4" in message


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- seed\n- 3\n", encoding="utf-8")
    message = str(_error_of(path))
    assert "list.yaml" in message and "mapping" in message and "not a list" in message


def test_bad_key_in_a_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text("env:\n  suit: webshop\n", encoding="utf-8")
    message = str(_error_of(path))
    assert "config key 'env.suit' is unknown" in message and "typo.yaml" in message
    assert "backend, suite, split, task_file, phonesim" in message


# --- saving a resolved config -----------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(EXPECTED_PRESETS))
def test_config_to_yaml_round_trips(name: str, tmp_path: Path) -> None:
    cfg = load_config(name, ["seed=11", "run_name=trip", "play.noise=0.125"])
    path = tmp_path / "config.yaml"
    path.write_text(config_to_yaml(cfg), encoding="utf-8")
    assert load_config(path) == cfg
