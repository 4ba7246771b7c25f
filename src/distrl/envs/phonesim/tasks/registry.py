"""Every PhoneSim task template by name, and which suite each belongs to."""

from __future__ import annotations

from distrl.envs.phonesim.tasks.base import TaskTemplate
from distrl.envs.phonesim.tasks.general import GENERAL_TEMPLATES
from distrl.envs.phonesim.tasks.web_general import WEB_GENERAL_TEMPLATES
from distrl.envs.phonesim.tasks.webshop import WEBSHOP_TEMPLATES

#: Episode length limits, as in Android-in-the-Wild's DigiRL setting.
SUITE_HORIZONS: dict[str, int] = {"general": 10, "webshop": 20}

TEMPLATES: dict[str, TaskTemplate] = {
    template.name: template
    for template in (*GENERAL_TEMPLATES, *WEB_GENERAL_TEMPLATES, *WEBSHOP_TEMPLATES)
}


def suite_templates(suite: str) -> list[TaskTemplate]:
    """The templates of ``suite`` in a fixed order."""
    return [t for t in TEMPLATES.values() if t.suite == suite]
