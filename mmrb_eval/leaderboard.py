"""A table of judges across reports: Markdown, CSV, HTML, JSON, and a PNG plot.

Input is the reports of ``mmrb_eval.scoring.score`` (with a ``judge`` name), e.g. the JSON
files of ``mmrb score --output``. Every accuracy is shown with its 95% interval and its
``correct/n``, and every run with its completeness and error rate. An interval over fewer than
``MIN_BOOTSTRAP_PAIRS`` scored pairs is "[undefined]" with a note saying why (also in a report
written before intervals had that floor). An incomplete run (failed requests or judgments never
made) is never ranked among complete ones: it is listed apart, unranked, in tables and plots
alike, unless ``include_incomplete`` ranks everything together.
"""

from __future__ import annotations

import csv
import html
import io
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from curate.agreement.limits import MIN_BOOTSTRAP_PAIRS, TOO_FEW_PAIRS
from curate.errors import InputError, InputProblem, MmrbError
from curate.formats.reader import MALFORMED, json_problem


def read_report(path: str | Path) -> dict:
    """A report written by ``mmrb score --output``; named after its file when it names no judge."""
    try:
        r = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError([InputProblem(str(path), None, None, "file not found")]) from None
    except json.JSONDecodeError as e:
        raise InputError([InputProblem(str(path), e.lineno, None, f"{MALFORMED}: {e.msg}")]) from None
    except UnicodeDecodeError as e:
        raise InputError(
            [InputProblem(str(path), None, None, f"not valid UTF-8 (byte 0x{e.object[e.start]:02x})")]
        ) from None
    except (ValueError, RecursionError) as e:  # nested too deeply, a number too long
        raise InputError([InputProblem(str(path), None, None, json_problem(e))]) from None
    if not isinstance(r, dict) or "overall" not in r:
        raise InputError([InputProblem(str(path), None, "overall", "not a report of mmrb score --output")])
    r.setdefault("judge", Path(path).stem)
    return r


def categories_of(reports: Sequence[dict]) -> list[str]:
    return list(dict.fromkeys(c for r in reports for c in r.get("categories", {})))


def health_of(report: dict) -> dict:
    """A JSON report's completeness: its ``run_health`` (stored runs), else estimated from its
    counts (failed judgments, dataset pairs without any)."""
    h = report.get("run_health")
    if h:
        return {
            "complete": bool(h["complete"]),
            "completeness": h.get("completeness"),
            "error_rate": h.get("error_rate"),
        }
    return estimated_health(
        failed=(report.get("outcomes") or {}).get("error", 0),
        total=report.get("judgments", 0),
        pairs=report.get("pairs", 0),
        missing=report.get("missing_pairs", 0),
    )


def estimated_health(*, failed: int, total: int, pairs: int, missing: int) -> dict:
    """Completeness from a report's counts: ``failed`` of ``total`` judgments, ``missing`` of
    ``pairs`` dataset pairs without any (as many judgments planned for each as for the others)."""
    judged = pairs - missing
    planned = total + missing * (total / judged if judged > 0 else 1)
    return {
        "complete": not failed and not missing,
        "completeness": (total - failed) / planned if planned else None,
        "error_rate": failed / total if total else None,
    }


def incomplete_runs(reports: Sequence[dict]) -> list[str]:
    """The run (else judge) of every incomplete report."""
    return [r.get("run") or r["judge"] for r in reports if not health_of(r)["complete"]]


def table_rows(reports: Sequence[dict], sort: str = "overall", include_incomplete: bool = False) -> list[dict]:
    """One flat row per report: the ranked ones best first (undefined accuracies last), then
    the incomplete ones, unranked (``rank`` None), unless ``include_incomplete``."""
    rows = []
    for r in reports:
        pos = r.get("position", {})
        h = health_of(r)
        row = {
            "judge": r.get("judge", "?"),
            "complete": h["complete"],
            "completeness": h["completeness"],
            "error_rate": h["error_rate"],
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
    rows.sort(
        key=lambda x: (
            not (include_incomplete or x["complete"]),
            x[sort]["accuracy"] is None,
            -(x[sort]["accuracy"] or 0),
            x["judge"],
        )
    )
    rank = 0
    for row in rows:
        ranked = include_incomplete or row["complete"]
        rank += ranked
        row["rank"] = rank if ranked else None
    return rows


def display_name(row: dict) -> str:
    """A judge as the board names it: incomplete runs say so."""
    return row["judge"] if row["complete"] else f"{row['judge']} (incomplete)"


def interval_of(s: dict | None) -> tuple[list[float] | None, str | None]:
    """A figure's 95% interval, or why it has none (None, None: no interval was asked for). A
    report written before intervals had a floor holds one over a category of a single pair too:
    below ``MIN_BOOTSTRAP_PAIRS`` scored pairs it is not shown, whoever wrote it."""
    if not s:
        return None, None
    ci, pairs = s.get("ci"), s.get("pairs")
    if ci and isinstance(pairs, int) and 0 < pairs < MIN_BOOTSTRAP_PAIRS:
        return None, TOO_FEW_PAIRS
    return (ci, None) if ci else (None, s.get("ci_undefined"))


def _acc(s: dict | None, with_n: bool = True) -> str:
    if not s or s.get("accuracy") is None:
        return "n/a"
    out = f"{100 * s['accuracy']:.1f}"
    ci, why = interval_of(s)
    if ci:
        out += f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"
    elif why:
        out += " [undefined]"
    if with_n and "correct_n" in s:
        out += f" ({s['correct_n']})"
    return out


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}"


def _header(cats: list[str]) -> list[str]:
    return [
        "#",
        "judge",
        "complete %",
        "error %",
        "overall",
        "macro",
        "size-weighted",
        *cats,
        "parse fail %",
        "tie %",
        "consistency %",
        "acc chosen 1st",
        "acc chosen 2nd",
    ]


def _cells(row: dict, cats: list[str]) -> list[str]:
    return [
        "-" if row["rank"] is None else str(row["rank"]),
        display_name(row),
        _pct(row["completeness"]),
        _pct(row["error_rate"]),
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


NOTE = "Accuracy in %, [95% bootstrap interval] (correct/n); complete %: planned judgments answered."


def _notes(rows: list[dict], cats: list[str]) -> list[str]:
    """NOTE, then why an interval reads "[undefined]" (once per reason) when one does."""
    figures = [row[g] for row in rows for g in ("overall", "macro", "size_weighted")]
    figures += [row["categories"].get(c) for row in rows for c in cats]
    reasons = (interval_of(f)[1] for f in figures if f and f.get("accuracy") is not None)
    why = [w for w in dict.fromkeys(reasons) if w]
    words = {
        TOO_FEW_PAIRS: f"fewer than {MIN_BOOTSTRAP_PAIRS} scored pairs (or, for macro and size-weighted, a category "
        "with fewer), too few for a bootstrap interval"
    }
    return [NOTE] + [f"[undefined] interval: {words.get(w, w)}." for w in why]


APART = (
    "Incomplete runs, not ranked: some judgments failed or were never made, so their scores cover "
    "part of the dataset (rerun `mmrb evaluate` to complete them; `--include-incomplete` ranks them)."
)


def _split(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    return [r for r in rows if r["rank"] is not None], [r for r in rows if r["rank"] is None]


def to_markdown(reports: Sequence[dict], sort: str = "overall", include_incomplete: bool = False) -> str:
    cats = categories_of(reports)
    ranked, apart = _split(table_rows(reports, sort, include_incomplete))
    head = _header(cats)

    def table(rows: list[dict]) -> list[str]:
        out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        return out + ["| " + " | ".join(c.replace("|", "\\|") for c in _cells(row, cats)) + " |" for row in rows]

    lines = table(ranked) if ranked or not apart else []
    if apart:
        lines += ([""] if lines else []) + [APART, ""] + table(apart)
    for note in _notes(ranked + apart, cats):
        lines += ["", note]
    return "\n".join(lines) + "\n"


def to_csv(reports: Sequence[dict], sort: str = "overall", include_incomplete: bool = False) -> str:
    """Machine-readable: one column per number (accuracy, interval, correct, n); an unranked
    (incomplete) run has an empty rank."""
    cats = categories_of(reports)
    rows = table_rows(reports, sort, include_incomplete)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    groups = ["overall", "macro", "size_weighted", *cats]
    head = ["rank", "judge", "complete", "completeness", "error_rate"]
    for g in groups:
        head += [f"{g}_acc", f"{g}_ci_low", f"{g}_ci_high", f"{g}_correct", f"{g}_n"]
    head += ["parse_failure_rate", "tie_rate", "consistency", "acc_chosen_first", "acc_chosen_second", "preset"]
    w.writerow(head)
    for row in rows:
        out: list = [row["rank"], row["judge"], str(row["complete"]).lower(), row["completeness"], row["error_rate"]]
        for g in groups:
            s = row[g] if g in ("overall", "macro", "size_weighted") else row["categories"].get(g) or {}
            ci = interval_of(s)[0]  # empty cells where it is undefined (too few pairs)
            out += [s.get("accuracy"), *(ci or (None, None)), s.get("correct"), s.get("n")]
        out += [
            row["parse_failure_rate"],
            row["tie_rate"],
            row["consistency"],
            row["acc_chosen_first"],
            row["acc_chosen_second"],
            row["preset"] or "",
        ]
        w.writerow(["" if v is None else v for v in out])
    return buf.getvalue()


def to_html(
    reports: Sequence[dict], sort: str = "overall", title: str = "Leaderboard", include_incomplete: bool = False
) -> str:
    cats = categories_of(reports)
    ranked, apart = _split(table_rows(reports, sort, include_incomplete))
    notes = "".join(f"<p>{html.escape(n)}</p>\n" for n in _notes(ranked + apart, cats))
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in _header(cats))

    def table(rows: list[dict]) -> str:
        body = "\n".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in _cells(row, cats)) + "</tr>" for row in rows)
        return "<table>\n<thead><tr>" + head + "</tr></thead>\n<tbody>\n" + body + "\n</tbody></table>\n"

    parts = [table(ranked)] if ranked or not apart else []
    if apart:
        parts.append("<h2>Incomplete runs (not ranked)</h2>\n<p>" + e(APART) + "</p>\n" + table(apart))
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>' + e(title) + "</title>\n"
        "<style>body{font-family:sans-serif}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td:nth-child(2){text-align:left}</style>"
        "</head><body>\n<h1>" + e(title) + "</h1>\n" + "".join(parts) + notes + "</body></html>\n"
    )


def plot_rows(
    reports: Sequence[dict], sort: str = "overall", include_incomplete: bool = False
) -> tuple[list[dict], list[dict]]:
    """(the rows drawn as bars, best first; the incomplete runs named apart)."""
    ranked, apart = _split(table_rows(reports, sort, include_incomplete))
    return [r for r in ranked if r[sort]["accuracy"] is not None], apart


def plot(reports: Sequence[dict], path: str | Path, sort: str = "overall", include_incomplete: bool = False) -> Path:
    """Horizontal bars of each ranked judge's accuracy with its 95% interval (matplotlib, Agg);
    incomplete runs left unranked are named under the axis, not drawn."""
    rows, apart = plot_rows(reports, sort, include_incomplete)
    rows = rows[::-1]

    def draw(ax: Any) -> None:
        ys = range(len(rows))
        accs = [100 * r[sort]["accuracy"] for r in rows]
        cis = [interval_of(r[sort])[0] for r in rows]  # none drawn where it is undefined
        lo = [100 * (r[sort]["accuracy"] - ci[0]) if ci else 0 for r, ci in zip(rows, cis, strict=True)]
        hi = [100 * (ci[1] - r[sort]["accuracy"]) if ci else 0 for r, ci in zip(rows, cis, strict=True)]
        bars = ax.barh(
            list(ys),
            accs,
            xerr=[lo, hi],
            color=["#4c72b0" if r["complete"] else "#bbbbbb" for r in rows],
            ecolor="black",
            capsize=3,
        )
        hatched = [bar for bar, r in zip(bars, rows, strict=True) if interval_of(r[sort])[1]]
        for bar in hatched:  # no interval (too few pairs): hatched, as on the dataset card
            bar.set_hatch("//")
            bar.set_edgecolor("white")
        ax.set_yticks(list(ys))
        ax.set_yticklabels([display_name(r) for r in rows])
        ax.axvline(50, color="grey", linestyle=":", linewidth=1)
        ax.set_xlim(0, 100)
        ax.set_xlabel(
            f"{sort.replace('_', '-')} accuracy (%) with 95% interval"
            + ("; hatched: too few pairs for one" if hatched else "")
        )
        if not rows:
            ax.text(0.5, 0.5, "no complete run to rank", ha="center", va="center", color="grey", transform=ax.transAxes)
        if apart:
            names = ", ".join(r["judge"] for r in apart[:5]) + (f" and {len(apart) - 5} more" if len(apart) > 5 else "")
            ax.set_title(f"not ranked (incomplete): {names}", fontsize=8, color="#aa3333", loc="left")

    return saved_plot(path, (7, 0.45 * max(len(rows), 2) + 1.2 + 0.2 * bool(apart)), draw)


def saved_plot(path: str | Path, size: tuple[float, float], draw: Callable[[Any], None]) -> Path:
    """One matplotlib figure (Agg) of ``size`` inches drawn by ``draw(axes)``, saved as a PNG
    at 120 dpi and closed even when drawing fails (the project's plots: this and validity's)."""
    # deferred: matplotlib takes 0.6 s to import, and only the plot needs it
    import matplotlib

    matplotlib.use("Agg")
    # deferred, as matplotlib above
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=size)
    try:
        draw(ax)
        fig.tight_layout()
        out = Path(path)
        fig.savefig(out, dpi=120)
    finally:
        plt.close(fig)
    return out


def _figure(s: dict | None) -> dict | None:
    """One accuracy as the CSV has it: its interval where defined, else why not."""
    if not s:
        return None
    ci, why = interval_of(s)
    keys = ("accuracy", "correct", "n")
    return {**{k: s.get(k) for k in keys}, "ci": ci, "ci_undefined": None if ci else why}


def as_dict(reports: Sequence[dict], sort: str = "overall", include_incomplete: bool = False) -> dict[str, Any]:
    """The board as one JSON document (`mmrb leaderboard --json`): the CSV's rows, nested."""
    cats = categories_of(reports)
    groups = ("overall", "macro", "size_weighted")
    rows = [
        {
            **row,
            **{g: _figure(row[g]) for g in groups},
            "categories": {c: _figure(row["categories"].get(c)) for c in cats},
        }
        for row in table_rows(reports, sort, include_incomplete)
    ]
    return {
        "sort": sort,
        "include_incomplete": include_incomplete,
        "categories": cats,
        "rows": rows,
        "incomplete": incomplete_runs(reports),
    }


def render(reports: Sequence[dict], fmt: str = "md", sort: str = "overall", include_incomplete: bool = False) -> str:
    if fmt == "json":
        doc = as_dict(reports, sort, include_incomplete)
        return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if fmt in ("md", "markdown"):
        return to_markdown(reports, sort, include_incomplete)
    if fmt == "csv":
        return to_csv(reports, sort, include_incomplete)
    if fmt == "html":
        return to_html(reports, sort, include_incomplete=include_incomplete)
    raise MmrbError(f"unknown leaderboard format {fmt!r}: md, csv, html or json")
