"""Renamed config keys: an old run folder's ``config.yaml`` and old ``key=value`` overrides still
load, under the new names, with a warning; old and new together is a one-line error."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from distrl.config import ConfigError, RunConfig, config_to_yaml, load_config
from distrl.config.renames import RENAMED_KEYS, current_key


def _old_config_yaml(tmp_path: Path) -> Path:
    """A resolved config.yaml as a run folder written before the renames holds it."""
    text = config_to_yaml(RunConfig())
    assert "\njudge:\n" in text and "save_screenshots:" in text
    old = text.replace("\njudge:\n", "\nevaluator:\n").replace("save_screenshots:", "save_screens:")
    path = tmp_path / "config.yaml"
    path.write_text(old.replace("model: gpt-4o-mini", "model: judge-model-x"), encoding="utf-8")
    return path


def test_an_old_run_config_loads_under_the_new_names(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _old_config_yaml(tmp_path)
    with caplog.at_level(logging.WARNING, logger="distrl.config.renames"):
        cfg = load_config(path, ["play.save_screens=true"])
    assert cfg.judge.vlm.model == "judge-model-x"
    assert cfg.play.save_screenshots is True
    warnings = [record.getMessage() for record in caplog.records]
    assert any("'evaluator' is now 'judge'" in w for w in warnings), warnings
    assert any("'play.save_screens' is now 'play.save_screenshots'" in w for w in warnings)


def test_old_override_keys_inside_a_renamed_section_are_renamed() -> None:
    cfg = load_config(None, ["evaluator.kind=vlm", "evaluator.vlm.timeout_seconds=7"])
    assert cfg.judge.kind == "vlm"
    assert cfg.judge.vlm.timeout_seconds == 7
    assert current_key("evaluatorx.kind") == "evaluatorx.kind"  # a prefix, not a section


def test_setting_a_key_under_its_old_and_new_name_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "both.yaml"
    path.write_text("play:\n  save_screens: true\n  save_screenshots: false\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "\n" not in message
    assert "'play.save_screens'" in message and "keep only 'play.save_screenshots'" in message
    assert info.value.key == "play.save_screenshots"


def test_every_renamed_key_exists_under_its_new_name_only() -> None:
    resolved = RunConfig().model_dump()
    for old, new in RENAMED_KEYS.items():
        assert _has(resolved, new), new
        assert not _has(resolved, old), old


def _has(mapping: dict, dotted: str) -> bool:
    node: object = mapping
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True
