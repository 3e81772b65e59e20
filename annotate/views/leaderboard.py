"""Lead: judges and reward models scored on the stored evaluation runs, with a per-category
drill-down and examples of each judge's mistakes. Incomplete runs (failed or missing
judgments) are listed apart, unranked and left out of the plot, unless the lead asks to rank
them too.

Registered by app.py as the "leaderboard" page; ``render(store)`` draws it for any store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import streamlit as st

from annotate import charts, ui
from annotate.render import plain
from annotate.session_ui import require
from annotate.widgets import rich
from curate.model import category_title
from curate.store import Store
from curate.wording import snippet

if TYPE_CHECKING:  # the page imports mmrb_eval when it renders
    from mmrb_eval.scoring import ScoringOptions
    from mmrb_eval.workflow import ScoredJudgments


def _options():
    from mmrb_eval.scoring import PARSE_FAILURE, PRESETS, TIE_POLICIES, preset_options

    with st.expander("Scoring rules", expanded=False):
        c1, c2, c3, c4 = st.columns(4)
        preset = c1.selectbox("Preset", ["(none)", *sorted(PRESETS)], key="lb_preset")
        failure = c2.selectbox("Unparsed verdicts", ["(preset/default)", *PARSE_FAILURE], key="lb_fail")
        ties = c3.selectbox("Ties", ["(preset/default)", *TIE_POLICIES], key="lb_ties")
        boots = c4.number_input("Bootstrap resamples", 0, 5000, 200, step=100, key="lb_boot")

    def pick(v: str) -> str | None:  # "(preset/default)" picks nothing
        return None if v.startswith("(") else v

    return preset_options(pick(preset), parse_failure=pick(failure), ties=pick(ties), bootstrap=int(boots))


def _scaling(runs: Sequence[ScoredJudgments], include: bool) -> None:
    """Inference-time scaling: shown only when some run has K > 1 samples to draw."""
    from mmrb_eval.dashboard import SCALING_CAPTION, scaling_frame

    rows = scaling_frame(runs, include)
    if not rows:
        return
    st.markdown("**Inference-time scaling**")
    st.altair_chart(charts.scaling(rows), width="stretch")
    st.caption(SCALING_CAPTION)


def render(store: Store) -> None:
    from mmrb_eval.dashboard import board_frame, board_rows, category_rows, mistakes, scored_runs
    from mmrb_eval.leaderboard import APART, categories_of

    st.subheader("Leaderboard")
    opts = _options()
    runs, problems = scored_runs(store, opts)
    for p in problems:
        st.warning(plain(p))
    if not runs:
        st.info("No evaluation runs yet: `mmrb evaluate --dataset FILE --judge judge.toml` stores one.")
        _bestofn(store, opts, [])
        return
    reports = [r.report for r in runs]
    include = st.checkbox(
        "Rank incomplete runs too (marked)",
        key="lb_incomplete",
        help="Runs with failed or missing judgments score only part of the dataset.",
    )
    ranked, apart = board_rows(runs, include)
    if ranked:
        st.dataframe(ranked, hide_index=True)
    if apart:
        st.markdown("**Incomplete runs (not ranked)**")
        st.caption(APART.replace("`--include-incomplete`", "the box above"))
        st.dataframe(apart, hide_index=True)
    drawn = board_frame(reports, include)
    if drawn:  # some ranked run has an accuracy to draw
        st.altair_chart(charts.leaderboard(drawn), width="stretch")
        st.caption("Dashed: chance (50%). A bar without a line has no interval (too few pairs).")
    _scaling(runs, include)

    cats = categories_of(reports)
    st.markdown("**By category**")
    cat = st.selectbox("Category", cats, key="lb_category")
    st.dataframe(category_rows(runs, cat), hide_index=True)
    _bestofn(store, opts, runs)

    st.markdown("**Mistakes**")
    labels = {f"{r.judge} ({r.run_id})": r for r in runs}
    c1, c2 = st.columns(2)
    which = c1.selectbox("Judge", list(labels), key="lb_judge")
    only = c2.selectbox("Category ", ["(all)", *cats], key="lb_mistake_cat")
    found = mistakes(labels[which], None if only == "(all)" else only)
    if not found:
        st.success("No mistakes in this selection.")
    for m in found:
        with st.expander(
            plain(f"{snippet(m.prompt, 60) or m.pair} · {category_title(m.category)} · {m.order} · {m.mistake}")
        ):
            st.caption(f"Pair {plain(m.pair)}")
            st.markdown("**Prompt**")
            rich(m.prompt)
            if m.images:
                st.caption("Images: " + plain(", ".join(m.images)))
            a, b = st.columns(2)
            a.markdown(f"**Chosen** (shown as {m.chosen_shown_as})")
            a.text(m.chosen)
            b.markdown("**Rejected**")
            b.text(m.rejected)
            st.markdown("**Judge output**")
            st.code(m.judge_output or "(empty)", language=None)


def _bestofn(store: Store, opts: ScoringOptions, scored: Sequence[ScoredJudgments]) -> None:
    """Best-of-N: each stored run's accuracy beside its baselines, read back (nothing sent);
    then validity across judges with both kinds of run: the scatter, the verdict, its caveats."""
    from mmrb_eval.dashboard import (
        bestofn_frame,
        bestofn_table,
        store_validity,
        stored_bestofn_runs,
        validity_points,
        validity_rows,
    )

    st.markdown("**Best-of-N**")
    runs, problems = stored_bestofn_runs(store, opts.bootstrap)
    for p in problems:
        st.warning(plain(p))
    if not runs:
        st.info("No Best-of-N runs yet: `mmrb bestofn --judge judge.toml` stores one.")
        return
    st.dataframe(bestofn_table(runs), hide_index=True)
    drawn = bestofn_frame(runs)
    if drawn:
        st.altair_chart(charts.leaderboard(drawn, chance=None), width="stretch")
        st.caption(
            "Each judge's Best-of-N accuracy beside the random pick (expected), the first candidate, the majority "
            "answer and the oracle, on the same complete items; a bar without a line has no interval."
        )
    st.markdown("**Validity: does the benchmark predict Best-of-N gain?**")
    report, why = store_validity(store, opts, scored=scored, read_back=runs)
    if report is None:
        st.info(plain(f"No validity figures: {why}."))
        return
    points = validity_points(report)
    if points:
        r = report.overall.pearson.value
        title = f"Pearson r = {r:.2f}" if r is not None else "Pearson r undefined"
        st.altair_chart(charts.validity_scatter(points, title), width="stretch")
    (st.success if report.complete else st.info)(plain(f"Verdict: {report.verdict}"))
    for c in report.caveats:
        st.caption(plain(f"Caveat: {c}"))
    st.caption("By category: which parts of the benchmark predict usefulness (95% intervals).")
    st.dataframe(validity_rows(report), hide_index=True)


if __name__ == "__main__":  # run as a Streamlit page
    require("leaderboard")
    render(ui.store())
