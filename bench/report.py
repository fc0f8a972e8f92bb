"""Turn samples into the report: medians, min/max, per-repetition ratios, targets.

Ratios are cat-code / other per repetition (the clients of one repetition ran back to
back, so they saw the same machine), then the median of those: above 1 means cat-code
is slower or bigger. ``latest.json`` keeps the issue's shape (``name``, ``unit``,
``median``, ``ratio_vs_floor``, ``ratio_vs_sdk``, ``target_vs_floor``) plus min, max,
every sample and the target verdict, so other tools can read it.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

IMPLS = ("cat_code", "sdk", "floor")
#: Another program doing the same job (Claude Code), for the rows that name one.
PEER = "peer"
LABELS = {"cat_code": "cat-code", "sdk": "SDK", "floor": "floor", PEER: "peer"}


@dataclass(frozen=True)
class Metric:
    """What a metric measures and the target it is held to, if any."""

    name: str
    unit: str  # "s", "MB" or "tokens"
    what: str
    target_vs_floor: float | None = None
    #: A target against something other than the floor: (what, at most).
    other_target: tuple[str, float] | None = None
    floor_is: str = "bare client"
    sdk_is: str = "mcp 2.3.0 client"
    #: The program this row holds cat-code against instead (its own table), and the target.
    peer: str = ""
    target_vs_peer: float | None = None


_ALL = (*IMPLS, PEER)


@dataclass
class Result:
    metric: Metric
    samples: dict[str, list[float]] = field(default_factory=lambda: {i: [] for i in _ALL})
    #: For a target against another quantity: its value per repetition, per client.
    reference: dict[str, list[float]] = field(default_factory=lambda: {i: [] for i in _ALL})
    #: Side measurements that explain the main one: name -> client -> samples.
    extras: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _ratio(numerator: list[float], denominator: list[float]) -> float | None:
    pairs = [(a, b) for a, b in zip(numerator, denominator, strict=False) if b > 0]
    return statistics.median(a / b for a, b in pairs) if pairs else None


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else float(f"{value:.{digits}g}")


def entry(result: Result) -> dict[str, Any]:
    """One workload in the shape of ``latest.json``."""
    m = result.metric
    s = result.samples
    out: dict[str, Any] = {
        "name": m.name,
        "unit": m.unit,
        "what": m.what,
        "median": {i: _round(_median(s[i])) for i in IMPLS},
        "min": {i: _round(min(s[i])) if s[i] else None for i in IMPLS},
        "max": {i: _round(max(s[i])) if s[i] else None for i in IMPLS},
        "repetitions": {i: len(s[i]) for i in IMPLS},
        "ratio_vs_floor": _round(_ratio(s["cat_code"], s["floor"]), 3),
        "ratio_vs_sdk": _round(_ratio(s["cat_code"], s["sdk"]), 3),
        "target_vs_floor": m.target_vs_floor,
        "peers": {"sdk": m.sdk_is or None, "floor": m.floor_is},
        "samples": {i: [_round(v) for v in s[i]] for i in IMPLS},
    }
    if m.peer:
        out["peer"] = {
            "name": m.peer,
            "median": _round(_median(s[PEER])),
            "min": _round(min(s[PEER])) if s[PEER] else None,
            "max": _round(max(s[PEER])) if s[PEER] else None,
            "samples": [_round(v) for v in s[PEER]],
            "ratio": _round(_ratio(s["cat_code"], s[PEER]), 3),
        }
    target = _target(result)
    if target is not None:
        out["target"] = target
    if result.extras:
        out["extras"] = {
            name: {i: _round(_median(values.get(i, []))) for i in IMPLS}
            for name, values in result.extras.items()
        }
    if result.notes:
        out["notes"] = result.notes
    if result.errors:
        out["errors"] = result.errors
    return out


def _target(result: Result) -> dict[str, Any] | None:
    m = result.metric
    if m.target_vs_peer is not None:
        ratio = _ratio(result.samples["cat_code"], result.samples[PEER])
        return {
            "against": m.peer,
            "max": m.target_vs_peer,
            "ratio": _round(ratio, 3),
            "met": None if ratio is None else ratio <= m.target_vs_peer,
        }
    if m.target_vs_floor is not None:
        ratio = _ratio(result.samples["cat_code"], result.samples["floor"])
        return {
            "against": "floor",
            "max": m.target_vs_floor,
            "ratio": _round(ratio, 3),
            "met": None if ratio is None else ratio <= m.target_vs_floor,
        }
    if m.other_target is not None:
        against, limit = m.other_target
        ratios = {i: _round(_ratio(result.samples[i], result.reference[i]), 3) for i in IMPLS}
        ratio = ratios["cat_code"]
        return {
            "against": against,
            "max": limit,
            "ratio": ratio,
            "met": None if ratio is None else ratio <= limit,
            "same_ratio_for": {"sdk": ratios["sdk"], "floor": ratios["floor"]},
        }
    return None


# -- Markdown ---------------------------------------------------------------------------


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "MB":
        return f"{value:.1f} MB"
    if unit == "tokens":
        return f"{value:,.0f} tokens"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.3g} ms"
    return f"{value * 1e6:.3g} µs"


def _cell(values: list[float], unit: str) -> str:
    if not values:
        return "—"
    if len(values) == 1:  # measured once (a count, not a time): no range to show
        return _fmt(values[0], unit)
    low, high = _fmt(min(values), unit), _fmt(max(values), unit)
    return f"{_fmt(statistics.median(values), unit)} ({low}–{high})"


def _x(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.2f}×" if value >= 0.01 else f"{value:.1g}×"


def markdown(results: list[Result], meta: dict[str, Any]) -> str:
    """The table, then the targets, then the notes."""
    lines = [
        f"Medians over {meta['repetitions']} interleaved repetitions (min–max); ratios are "
        "medians of per-repetition cat-code / other (below 1: cat-code is faster or smaller).",
        "",
        "| workload | what | cat-code | SDK (mcp 2.3.0) | floor | cat-code / SDK "
        "| cat-code / floor | target |",
        "|---|---|---|---|---|---|---|---|",
    ]
    notes: list[str] = []
    for r in results:
        m = r.metric
        if m.peer:
            continue
        target = _target(r)
        vs_floor = _ratio(r.samples["cat_code"], r.samples["floor"])
        verdict = ""
        if target is not None:
            met = target["met"]
            mark = "—" if met is None else ("met" if met else "**missed**")
            against = target["against"]
            # The floor ratio as in its own column (the JSON's is rounded to 3 digits).
            ratio = vs_floor if target["against"] == "floor" else target["ratio"]
            verdict = f"≤{target['max']}× {against}: {_x(ratio)} {mark}"
        lines.append(
            f"| `{m.name}` | {m.what} | {_cell(r.samples['cat_code'], m.unit)} "
            f"| {_cell(r.samples['sdk'], m.unit)} | {_cell(r.samples['floor'], m.unit)} "
            f"| {_x(_ratio(r.samples['cat_code'], r.samples['sdk']))} "
            f"| {_x(vs_floor)} | {verdict} |"
        )
        for note in r.notes:
            notes.append(f"- `{m.name}`: {note}")
        for impl, error in r.errors.items():
            notes.append(f"- `{m.name}`: {LABELS[impl]} failed: {error}")
    peers = [r for r in results if r.metric.peer]
    if peers:
        lines += [
            "",
            "| workload | what | cat-code | other program | cat-code / other | target |",
            "|---|---|---|---|---|---|",
        ]
    for r in peers:
        m = r.metric
        target = _target(r)
        ratio = _ratio(r.samples["cat_code"], r.samples[PEER])
        verdict = ""
        if target is not None and target["met"] is not None:
            mark = "met" if target["met"] else "**missed**"
            verdict = f"≤{target['max']}× {m.peer}: {_x(ratio)} {mark}"
        lines.append(
            f"| `{m.name}` | {m.what} | {_cell(r.samples['cat_code'], m.unit)} "
            f"| {m.peer}: {_cell(r.samples[PEER], m.unit)} | {_x(ratio)} | {verdict} |"
        )
        for note in r.notes:
            notes.append(f"- `{m.name}`: {note}")
        for impl, error in r.errors.items():
            notes.append(f"- `{m.name}`: {LABELS[impl]} failed: {error}")
    if notes:
        lines += ["", *notes]
    lines += [
        "",
        f"Run: `{meta['command']}` · {meta['when']} · Python {meta['python']} · "
        f"{meta['cpus']} CPUs · load average {meta['load_before']} before, "
        f"{meta['load_after']} after · commit {meta['commit']}",
    ]
    return "\n".join(lines) + "\n"
