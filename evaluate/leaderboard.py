"""A table of judges across reports: Markdown, CSV, HTML, and a PNG plot.

Input is the reports of ``evaluate.scoring.score`` (with a ``judge`` name), e.g. the JSON
files of ``mmrb score --output``. Every accuracy is shown with its 95% interval and its
``correct/n``.
"""

from __future__ import annotations

import csv
import html
import io
from pathlib import Path
from typing import Sequence

SORT_KEYS = ("overall", "macro", "size_weighted")


def categories_of(reports: Sequence[dict]) -> list[str]:
    return list(dict.fromkeys(c for r in reports for c in r.get("categories", {})))


def table_rows(reports: Sequence[dict], sort: str = "overall") -> list[dict]:
    """One flat row per report, best first (undefined accuracies last)."""
    rows = []
    for r in reports:
        pos = r.get("position", {})
        row = {
            "judge": r.get("judge", "?"),
            "overall": r["overall"],
            "macro": r["macro"],
            "size_weighted": r["size_weighted"],
            "categories": r.get("categories", {}),
            "parse_failure_rate": r.get("parse_failure_rate", {}).get("rate"),
            "tie_rate": r.get("tie_rate", {}).get("rate"),
            "consistency": pos.get("consistency", {}).get("accuracy"),
            "acc_chosen_first": pos.get("acc_chosen_shown_first", {}).get("accuracy"),
            "acc_chosen_second": pos.get("acc_chosen_shown_second", {}).get("accuracy"),
            "preset": r.get("options", {}).get("preset"),
        }
        rows.append(row)
    rows.sort(key=lambda x: (x[sort]["accuracy"] is None, -(x[sort]["accuracy"] or 0), x["judge"]))
    return rows


def _acc(s: dict | None, with_n: bool = True) -> str:
    if not s or s.get("accuracy") is None:
        return "n/a"
    out = f"{100 * s['accuracy']:.1f}"
    if s.get("ci"):
        out += f" [{100 * s['ci'][0]:.1f}, {100 * s['ci'][1]:.1f}]"
    if with_n and "correct_n" in s:
        out += f" ({s['correct_n']})"
    return out


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}"


def _header(cats: list[str]) -> list[str]:
    return ["#", "judge", "overall", "macro", "size-weighted", *cats, "parse fail %", "tie %", "consistency %",
            "acc chosen 1st", "acc chosen 2nd"]


def _cells(i: int, row: dict, cats: list[str]) -> list[str]:
    return [
        str(i),
        row["judge"],
        _acc(row["overall"]),
        _acc(row["macro"], False),
        _acc(row["size_weighted"], False),
        *[_acc(row["categories"].get(c)) for c in cats],
        _pct(row["parse_failure_rate"]),
        _pct(row["tie_rate"]),
        _pct(row["consistency"]),
        _pct(row["acc_chosen_first"]),
        _pct(row["acc_chosen_second"]),
    ]


def to_markdown(reports: Sequence[dict], sort: str = "overall") -> str:
    cats = categories_of(reports)
    rows = table_rows(reports, sort)
    head = _header(cats)
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for i, row in enumerate(rows, 1):
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in _cells(i, row, cats)) + " |")
    lines.append("")
    lines.append("Accuracy in %, [95% bootstrap interval] (correct/n).")
    return "\n".join(lines) + "\n"


def to_csv(reports: Sequence[dict], sort: str = "overall") -> str:
    """Machine-readable: one column per number (accuracy, interval, correct, n)."""
    cats = categories_of(reports)
    rows = table_rows(reports, sort)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    groups = ["overall", "macro", "size_weighted", *cats]
    head = ["rank", "judge"]
    for g in groups:
        head += [f"{g}_acc", f"{g}_ci_low", f"{g}_ci_high", f"{g}_correct", f"{g}_n"]
    head += ["parse_failure_rate", "tie_rate", "consistency", "acc_chosen_first", "acc_chosen_second", "preset"]
    w.writerow(head)
    for i, row in enumerate(rows, 1):
        out: list = [i, row["judge"]]
        for g in groups:
            s = row[g] if g in ("overall", "macro", "size_weighted") else row["categories"].get(g) or {}
            ci = s.get("ci") or [None, None]
            out += [s.get("accuracy"), ci[0], ci[1], s.get("correct"), s.get("n")]
        out += [row["parse_failure_rate"], row["tie_rate"], row["consistency"], row["acc_chosen_first"],
                row["acc_chosen_second"], row["preset"] or ""]
        w.writerow(["" if v is None else v for v in out])
    return buf.getvalue()


def to_html(reports: Sequence[dict], sort: str = "overall", title: str = "Leaderboard") -> str:
    cats = categories_of(reports)
    rows = table_rows(reports, sort)
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in _header(cats))
    body = "\n".join(
        "<tr>" + "".join(f"<td>{e(c)}</td>" for c in _cells(i, row, cats)) + "</tr>" for i, row in enumerate(rows, 1)
    )
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + e(title) + "</title>\n"
        "<style>body{font-family:sans-serif}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td:nth-child(2){text-align:left}</style>"
        "</head><body>\n<h1>" + e(title) + "</h1>\n<table>\n<thead><tr>" + head + "</tr></thead>\n<tbody>\n"
        + body + "\n</tbody></table>\n<p>Accuracy in %, [95% bootstrap interval] (correct/n).</p>\n</body></html>\n"
    )


def plot(reports: Sequence[dict], path: str | Path, sort: str = "overall") -> Path:
    """Horizontal bars of each judge's accuracy with its 95% interval (matplotlib, Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in table_rows(reports, sort) if r[sort]["accuracy"] is not None][::-1]
    fig, ax = plt.subplots(figsize=(7, 0.45 * max(len(rows), 2) + 1.2))
    try:
        ys = range(len(rows))
        accs = [100 * r[sort]["accuracy"] for r in rows]
        lo = [100 * (r[sort]["accuracy"] - r[sort]["ci"][0]) if r[sort].get("ci") else 0 for r in rows]
        hi = [100 * (r[sort]["ci"][1] - r[sort]["accuracy"]) if r[sort].get("ci") else 0 for r in rows]
        ax.barh(list(ys), accs, xerr=[lo, hi], color="#4c72b0", ecolor="black", capsize=3)
        ax.set_yticks(list(ys))
        ax.set_yticklabels([r["judge"] for r in rows])
        ax.axvline(50, color="grey", linestyle=":", linewidth=1)
        ax.set_xlim(0, 100)
        ax.set_xlabel(f"{sort.replace('_', '-')} accuracy (%) with 95% interval")
        fig.tight_layout()
        out = Path(path)
        fig.savefig(out, dpi=120)
    finally:
        plt.close(fig)
    return out


def render(reports: Sequence[dict], fmt: str = "md", sort: str = "overall") -> str:
    if fmt in ("md", "markdown"):
        return to_markdown(reports, sort)
    if fmt == "csv":
        return to_csv(reports, sort)
    if fmt == "html":
        return to_html(reports, sort)
    raise ValueError(f"unknown leaderboard format {fmt!r}: md, csv or html")
