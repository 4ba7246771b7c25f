"""The configuration reference: always current, and complete down to every schema field."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from distrl.config.reference import field_rows, main, render_reference, sections
from distrl.config.schema import ConfigSection, RunConfig

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def _leaf_keys(values: dict, prefix: str = "") -> set[str]:
    """Dotted keys of every non-section value in a dumped config (independent of the renderer)."""
    keys: set[str] = set()
    for name, value in values.items():
        key = f"{prefix}.{name}" if prefix else name
        keys |= _leaf_keys(value, key) if isinstance(value, dict) else {key}
    return keys


def test_committed_reference_is_current() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == render_reference(), (
        "docs/configuration.md is out of date: run `python -m distrl.config.reference` "
        "from the repository root and commit the result"
    )


def test_every_schema_field_has_a_row() -> None:
    text = render_reference()
    rendered = {row.key for prefix, model in sections() for row in field_rows(model, prefix)}
    expected = _leaf_keys(RunConfig().model_dump())
    assert rendered == expected
    missing = [key for key in sorted(expected) if f"| `{key}` |" not in text]
    assert not missing, f"keys without a row in the reference: {missing}"
    # A pipe inside a description is escaped, or it would split the table's row.
    assert "| DPER weight of mean \\|delta\\|. |" in text


def test_every_row_carries_a_description() -> None:
    undocumented = [
        row.key
        for prefix, model in sections()
        for row in field_rows(model, prefix)
        if not row.description.strip()
    ]
    assert not undocumented, f"schema fields without a description: {undocumented}"


class _Example(ConfigSection):
    """An example section.

    Only the first paragraph is the summary."""

    count: int = Field(default=2, ge=1, le=9, description="How many.")
    mode: Literal["fast", "slow"] = Field(default="fast", description="Speed.")
    path: str | None = Field(default=None, description="Where.")
    names: list[str] = Field(default_factory=lambda: ["a", "b"], description="Names.")
    ratio: float = Field(default=0.5, gt=0, lt=1, description="A share.")


def test_rows_give_type_default_range_and_description() -> None:
    rows = {row.key: row for row in field_rows(_Example, "x")}
    assert (rows["x.count"].kind, rows["x.count"].default, rows["x.count"].bounds) == (
        "int",
        "2",
        ">= 1, <= 9",
    )
    assert (rows["x.mode"].kind, rows["x.mode"].default, rows["x.mode"].bounds) == (
        "choice",
        "'fast'",
        "`fast`, `slow`",
    )
    assert (rows["x.path"].kind, rows["x.path"].default) == ("str or null", "null")
    assert (rows["x.names"].kind, rows["x.names"].default) == ("list of str", "[a, b]")
    assert (rows["x.ratio"].bounds, rows["x.ratio"].description) == ("> 0, < 1", "A share.")


def test_main_writes_then_checks(tmp_path: Path, capsys) -> None:
    target = tmp_path / "docs" / "configuration.md"
    assert main(["--output", str(target), "--check"]) == 1
    assert main(["--output", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == render_reference()
    assert main(["--output", str(target), "--check"]) == 0
    target.write_text("stale", encoding="utf-8")
    assert main(["--output", str(target), "--check"]) == 1
    assert "out of date" in capsys.readouterr().out
