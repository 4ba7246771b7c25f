"""Render a :class:`~distrl.viewer.report.RunReport` as one self-contained HTML page.

The page must open from ``file://`` on a machine with no network, so its CSS and JavaScript are
inline, the JavaScript is vanilla and images are relative links into ``img/``.

Every string that came from a trajectory (instructions, typed text, raw model output) is model
or user output, so it goes through :func:`esc` and reaches the page only as text: the markup is
built here from fixed templates, and the script only toggles ``hidden`` and reads ``data-*``
attributes, never builds markup from them.
"""

from __future__ import annotations

import html
import math
import time
from collections import Counter
from string import Template

from distrl.viewer.report import RunReport, StepView, TrajectoryView

_STYLE = """
:root { --fg:#1f2328; --muted:#59636e; --line:#d1d9e0; --bg:#f6f8fa; --ok:#1a7f37;
  --bad:#cf222e; --accent:#0969da; --mark:#ff00ff; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
  color:var(--fg); background:#fff; }
header { padding:16px 24px 12px; border-bottom:1px solid var(--line); background:var(--bg); }
header h1 { margin:0 0 4px; font-size:20px; }
header .path { color:var(--muted); font-family:ui-monospace,monospace; font-size:12px; }
.figures { display:flex; flex-wrap:wrap; gap:8px; margin:10px 0 4px; padding:0; }
.figures div { background:#fff; border:1px solid var(--line); border-radius:6px; padding:4px 10px; }
.figures dt { font-size:11px; color:var(--muted); text-transform:uppercase; }
.figures dd { margin:0; font-weight:600; font-variant-numeric:tabular-nums; }
main { padding:12px 24px 32px; }
h2 { font-size:16px; margin:18px 0 8px; }
.plots { display:flex; flex-wrap:wrap; gap:12px; }
.plots figure { margin:0; width:430px; border:1px solid var(--line); border-radius:6px;
  padding:6px; }
.plots img { display:block; width:416px; height:auto; }
.plots figcaption, .muted { color:var(--muted); font-size:12px; }
.notes { margin:8px 0; padding:8px 12px 8px 28px; background:#fff8c5; border:1px solid #d4a72c66;
  border-radius:6px; font-size:13px; }
details.config pre { max-height:320px; overflow:auto; background:var(--bg); padding:8px;
  border:1px solid var(--line); border-radius:6px; font-size:12px; }
.filters { display:flex; flex-wrap:wrap; gap:12px; align-items:end; padding:10px 12px;
  background:var(--bg); border:1px solid var(--line); border-radius:6px; }
.filters label { display:flex; flex-direction:column; font-size:12px; color:var(--muted); gap:2px; }
.filters select, .filters input { font:inherit; padding:3px 6px; min-width:140px; }
#f-count { margin-left:auto; font-weight:600; }
.browser { display:grid; grid-template-columns:minmax(280px, 380px) 1fr; gap:16px;
  margin-top:12px; align-items:start; }
#traj-list { list-style:none; margin:0; padding:0; border:1px solid var(--line);
  border-radius:6px; max-height:calc(100vh - 16px); overflow-y:auto; overflow-x:hidden;
  position:sticky; top:8px; }
.traj { padding:7px 10px; border-bottom:1px solid var(--line); cursor:pointer; }
.traj:hover { background:#f0f6ff; }
.traj[aria-current="true"] { background:#ddf4ff; box-shadow:inset 3px 0 0 var(--accent); }
.traj .line1 { display:flex; flex-wrap:wrap; gap:2px 8px; align-items:center; font-size:12px;
  color:var(--muted); }
.traj .line1 span { white-space:nowrap; }
.traj .line1 .wire { margin-left:auto; }
.traj .instr { white-space:nowrap; overflow:hidden; text-overflow:ellipsis; }
.badge { display:inline-block; padding:0 7px; border-radius:10px; font-size:11px;
  font-weight:600; color:#fff; line-height:18px; }
.badge.ok { background:var(--ok); } .badge.bad { background:var(--bad); }
.badge.wire { background:#57606a; }
.detail h3 { margin:0 0 6px; font-size:17px; overflow-wrap:anywhere; }
.meta { display:grid; grid-template-columns:repeat(auto-fill, minmax(190px, 1fr)); gap:2px 16px;
  margin:0 0 12px; font-size:12px; }
.meta div { display:flex; gap:6px; min-width:0; }
.meta div.wide { grid-column:span 2; }
.meta dt { color:var(--muted); } .meta dd { margin:0; overflow-wrap:anywhere; }
.steps { display:flex; flex-wrap:wrap; gap:12px; }
.step { margin:0; width:252px; border:1px solid var(--line); border-radius:6px; padding:6px;
  background:#fff; }
.step img { display:block; width:238px; height:auto; border:1px solid var(--line);
  background:#eee; }
.step .title { font-weight:600; margin:6px 0 2px; overflow-wrap:anywhere; }
.step .kind { color:var(--muted); font-size:11px; text-transform:uppercase; }
.step table { width:100%; border-collapse:collapse; font-size:12px;
  font-variant-numeric:tabular-nums; }
.step td { padding:1px 0; } .step td:last-child { text-align:right; }
.step td:first-child { color:var(--muted); }
.step pre { white-space:pre-wrap; overflow-wrap:anywhere; font-size:11px; background:var(--bg);
  margin:4px 0 0; padding:4px; border-radius:4px; max-height:120px; overflow:auto; }
.step.final { background:var(--bg); }
.placeholder { color:var(--muted); padding:24px; border:1px dashed var(--line);
  border-radius:6px; }
"""

# Vanilla JS, no template literals: string.Template would read their ``${...}`` as placeholders.
_SCRIPT = """
(function () {
  "use strict";
  var items = Array.prototype.slice.call(document.querySelectorAll("#traj-list .traj"));
  var filters = ["f-family", "f-success", "f-worker"].map(function (id) {
    return document.getElementById(id);
  });
  var search = document.getElementById("f-text");
  var count = document.getElementById("f-count");
  var placeholder = document.getElementById("placeholder");

  function applyFilters() {
    var family = filters[0].value, success = filters[1].value, worker = filters[2].value;
    var query = search.value.trim().toLowerCase();
    var shown = 0;
    items.forEach(function (item) {
      var visible = (!family || item.dataset.family === family) &&
        (!success || item.dataset.success === success) &&
        (!worker || item.dataset.worker === worker) &&
        (!query || item.dataset.search.indexOf(query) >= 0);
      item.hidden = !visible;
      if (visible) { shown += 1; }
    });
    count.textContent = shown + " of " + items.length + " listed";
  }

  function show(target) {
    var found = false;
    document.querySelectorAll(".detail").forEach(function (detail) {
      detail.hidden = detail.id !== target;
      found = found || !detail.hidden;
    });
    items.forEach(function (item) {
      item.setAttribute("aria-current", item.dataset.target === target ? "true" : "false");
    });
    if (placeholder) { placeholder.hidden = found; }
  }

  function fromHash() {
    var target = decodeURIComponent(window.location.hash.slice(1));
    if (target) {
      show(target);
    } else if (items.length) {
      show(items[0].dataset.target);  // the newest, without jumping the page to it
    }
  }

  items.forEach(function (item) {
    item.addEventListener("click", function () { window.location.hash = item.dataset.target; });
    item.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        window.location.hash = item.dataset.target;
      }
    });
  });
  filters.forEach(function (select) { select.addEventListener("change", applyFilters); });
  search.addEventListener("input", applyFilters);
  window.addEventListener("hashchange", fromHash);
  applyFilters();
  fromHash();
})();
"""

_PAGE = Template(
    """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src 'self' data:; \
style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>distrl view: $title</title>
<style>$style</style>
</head>
<body>
<header>
<h1>Run $title</h1>
<div class="path">$run_dir</div>
$figures
<div id="shown-count">$shown_line</div>
</header>
<main>
$notes
<h2>Curves</h2>
$plots
$config
<h2>Trajectories</h2>
$browser
</main>
<footer class="muted" style="padding:0 24px 16px">made by distrl view at $made_at</footer>
<script>$script</script>
</body>
</html>
"""
)


def esc(value: object) -> str:
    """``value`` as HTML text (quotes too, so it is safe inside attributes)."""
    return html.escape(str(value), quote=True)


def _number(value: float | None, digits: int = 3) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:.{digits}f}"


def _when(seconds: float) -> str:
    if not seconds or not math.isfinite(seconds):
        return "—"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _options(counts: Counter[str]) -> str:
    """``<option>``s for the values of a filter, each labelled with how many entries have it."""
    return "".join(
        f'<option value="{esc(value)}">{esc(value)} ({count})</option>'
        for value, count in sorted(counts.items())
    )


def _figures(report: RunReport) -> str:
    if not report.key_figures:
        return ""
    items = "".join(
        f"<div><dt>{esc(name)}</dt><dd>{esc(value)}</dd></div>"
        for name, value in report.key_figures.items()
    )
    return f'<dl class="figures">{items}</dl>'


def _plots(report: RunReport) -> str:
    if not report.plots:
        return '<p class="muted">No curves in this run (no curve.json, no TensorBoard scalars).</p>'
    figures = "".join(
        f'<figure><img src="{esc(p.image)}" alt="{esc(p.title)}" width="520" height="320">'
        f"<figcaption><b>{esc(p.title)}</b>: {esc(p.caption)}</figcaption></figure>"
        for p in report.plots
    )
    return f'<div class="plots">{figures}</div>'


def _config(report: RunReport) -> str:
    path = report.run_dir / "config.yaml"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    return f'<details class="config"><summary>config.yaml</summary><pre>{esc(text)}</pre></details>'


def _anchor(number: int) -> str:
    return f"t{number:04d}"


def _list_entry(number: int, trajectory: TrajectoryView, mark_wireframes: bool) -> str:
    outcome = "success" if trajectory.success else "failure"
    badge_class = "ok" if trajectory.success else "bad"
    wire = (
        '<span class="badge wire">wireframe</span>'
        if mark_wireframes and not trajectory.screenshots_stored
        else ""
    )
    searchable = f"{trajectory.instruction} {trajectory.task_id} {trajectory.trajectory_id}"
    return (
        f'<li class="traj" tabindex="0" data-target="{_anchor(number)}" '
        f'data-family="{esc(trajectory.family)}" data-success="{outcome}" '
        f'data-worker="{esc(trajectory.worker_id)}" data-search="{esc(searchable.lower())}">'
        f'<div class="line1"><span class="badge {badge_class}">{outcome}</span>'
        f"<span>#{number + 1}</span><span>{esc(trajectory.family)}</span>"
        f"<span>{_plural(trajectory.num_steps, 'step')}</span>"
        f"<span>{esc(trajectory.worker_id)}</span>"
        f"{wire}</div>"
        f'<div class="instr" title="{esc(trajectory.instruction)}">'
        f"{esc(trajectory.instruction)}</div></li>"
    )


def _staleness(step: StepView) -> str:
    if step.staleness is not None:
        return str(step.staleness)
    return '<span title="no learner version stored with this trajectory">not recorded</span>'


def _step_card(step: StepView) -> str:
    image_note = "screenshot" if step.screenshot_stored else "wireframe (no screenshot stored)"
    wire = "" if step.screenshot_stored else " · wireframe"
    image = (
        f'<a href="{esc(step.image)}" target="_blank" rel="noopener">'
        f'<img src="{esc(step.image)}" loading="lazy" alt="step {step.index} ({image_note})">'
        "</a>"
    )
    if step.action_type is None:
        return (
            f'<figure class="step final">{image}<figcaption>'
            f'<div class="kind">{esc(image_note)}</div>'
            f'<div class="title">Final screen</div>'
            '<div class="muted">the observation after the last action</div>'
            "</figcaption></figure>"
        )
    rows = [
        ("reward", _number(step.reward, 2)),
        ("behaviour log-prob", _number(step.behaviour_logprob)),
        ("entropy", _number(step.entropy)),
        ("policy_version", esc(step.policy_version)),
        ("staleness", _staleness(step)),
        ("step seconds", _number(step.step_seconds, 3)),
    ]
    table = "".join(f"<tr><td>{name}</td><td>{value}</td></tr>" for name, value in rows)
    typed = (
        f'<div>typed text:</div><pre class="typed">{esc(step.typed_text)}</pre>'
        if step.typed_text
        else ""
    )
    action_text = (
        f'<div>action text:</div><pre class="action-text">{esc(step.action_text)}</pre>'
        if step.action_text
        else '<div class="muted">no action text recorded</div>'
    )
    done = " · done" if step.done else ""
    return (
        f'<figure class="step">{image}<figcaption>'
        f'<div class="kind">step {step.index + 1} · {esc(step.action_type)}{done}{wire}</div>'
        f'<div class="title">{esc(step.action_summary)}</div>'
        f"<table>{table}</table>{typed}{action_text}</figcaption></figure>"
    )


def _detail(number: int, trajectory: TrajectoryView) -> str:
    outcome = "success" if trajectory.success else "failure"
    badge_class = "ok" if trajectory.success else "bad"
    meta = [
        ("task", trajectory.task_id),
        ("family", trajectory.family),
        ("suite / split", f"{trajectory.suite} / {trajectory.split}"),
        ("worker", trajectory.worker_id),
        ("device", trajectory.device_id),
        ("steps", str(trajectory.num_steps)),
        ("total reward", _number(trajectory.total_reward, 2)),
        ("finished", _when(trajectory.finished_at)),
        ("duration", _number(trajectory.finished_at - trajectory.started_at, 2) + " s"),
        (
            "learner version",
            "not recorded"
            if trajectory.learner_version is None
            else str(trajectory.learner_version),
        ),
        (
            "screens",
            "screenshots"
            if trajectory.screenshots_stored
            else "wireframes (no screenshots stored)",
        ),
        ("trajectory id", trajectory.trajectory_id),
    ]
    meta_html = "".join(
        f'<div class="{"wide" if k == "trajectory id" else ""}">'
        f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd></div>"
        for k, v in meta
    )
    cards = "".join(_step_card(step) for step in trajectory.steps)
    return (
        f'<section class="detail" id="{_anchor(number)}" hidden>'
        f'<h3><span class="badge {badge_class}">{outcome}</span> '
        f'<span class="instruction">{esc(trajectory.instruction)}</span></h3>'
        f'<dl class="meta">{meta_html}</dl><div class="steps">{cards}</div></section>'
    )


def _browser(report: RunReport) -> str:
    if not report.trajectories:
        return '<p class="placeholder">This run has no stored trajectories.</p>'
    trajectories = report.trajectories
    families = Counter(t.family for t in trajectories)
    workers = Counter(t.worker_id for t in trajectories)
    filters = (
        '<div class="filters">'
        f'<label>task family<select id="f-family"><option value="">all</option>'
        f"{_options(families)}</select></label>"
        '<label>result<select id="f-success"><option value="">all</option>'
        '<option value="success">success</option><option value="failure">failure</option>'
        "</select></label>"
        f'<label>worker<select id="f-worker"><option value="">all</option>'
        f"{_options(workers)}</select></label>"
        '<label>search<input id="f-text" type="search" '
        'placeholder="instruction or task id"></label>'
        f'<span id="f-count">{len(trajectories)} of {len(trajectories)} listed</span></div>'
    )
    # Badge wireframe entries only when the list mixes them with screenshots; a training run's
    # are all wireframes, which the notes say once.
    stored = {t.screenshots_stored for t in trajectories}
    entries = "".join(_list_entry(i, t, len(stored) > 1) for i, t in enumerate(trajectories))
    details = "".join(_detail(i, t) for i, t in enumerate(trajectories))
    return (
        f'{filters}<div class="browser"><ol id="traj-list">{entries}</ol><div id="details">'
        '<p class="placeholder" id="placeholder">Select a trajectory on the left to see its '
        f"steps.</p>{details}</div></div>"
    )


def shown_line(report: RunReport) -> str:
    """What the header says about how many trajectories the page holds."""
    total, shown = report.trajectories_total, report.trajectories_shown
    if total == 0:
        return "No stored trajectories."
    if shown == total:
        return f"Showing all {total} trajectories, newest first."
    return f"Showing the newest {shown} of {total} trajectories."


def render_page(report: RunReport) -> str:
    """The whole page as a string."""
    notes = "".join(f"<li>{esc(note)}</li>" for note in report.notes)
    return _PAGE.substitute(
        title=esc(report.title),
        run_dir=esc(report.run_dir.resolve()),
        figures=_figures(report),
        shown_line=esc(shown_line(report)),
        notes=f'<ul class="notes">{notes}</ul>' if notes else "",
        plots=_plots(report),
        config=_config(report),
        browser=_browser(report),
        made_at=esc(time.strftime("%Y-%m-%d %H:%M:%S")),
        style=_STYLE,
        script=_SCRIPT,
    )
