"""The Quality page fits its models once per state of the labels (annotate/figures.py keys
them by Store.change_stamp): another view or a rerun refits nothing; an edited label does."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from tests.support.apptest import sign_in
from tests.test_app_flows import label_everything

QUALITY = "annotate/views/admin_quality.py"


def test_a_page_view_does_not_refit_and_an_edited_label_does(sqlite_env, monkeypatch) -> None:
    from annotate import figures

    calls: list[int] = []
    fit = figures.store_figures

    def counted(*args, **kwargs):
        calls.append(1)
        return fit(*args, **kwargs)

    monkeypatch.setattr(figures, "store_figures", counted)
    label_everything(sqlite_env)
    lead = sign_in("lead")
    lead.switch_page(QUALITY).run()
    assert not lead.exception, lead.exception
    assert len(calls) == 1
    lead.switch_page(QUALITY).run()  # another view
    sign_in("lead").switch_page(QUALITY).run()  # another session of the same process
    assert len(calls) == 1
    old = sqlite_env.get_label("p0", "alice")
    assert old is not None
    sqlite_env.save_label(replace(old, preference="tie"), expected_revision=old.revision)
    lead.switch_page(QUALITY).run()
    assert not lead.exception, lead.exception
    assert len(calls) == 2


def test_a_revisit_recomputes_no_figure_of_the_quality_and_progress_pages(sqlite_env, monkeypatch) -> None:
    """A revisit with nothing changed draws no chart and computes no table again (200,000
    pairs: these were 1.2 s of each Progress run and 0.5 s of each Quality run)."""
    from annotate import admin, charts, figures

    calls: list[str] = []

    def counted(module, name):
        fn = getattr(module, name)

        def run(*args, **kwargs):
            calls.append(name)
            return fn(*args, **kwargs)

        monkeypatch.setattr(module, name, run)

    for module, name in (
        (figures, "gold_stats_of"),
        (charts, "annotator_reliability"),
        (charts, "annotator_bias"),
        (admin, "progress_by_category"),
        (admin, "short_of_overlap"),
        (admin, "annotator_counts"),
    ):
        counted(module, name)
    label_everything(sqlite_env)
    lead = sign_in("lead")
    for page in (QUALITY, "annotate/views/admin_progress.py"):
        lead.switch_page(page).run()
        assert not lead.exception, lead.exception
    first = sorted(calls)
    assert first == sorted(
        ["gold_stats_of", "annotator_bias", "progress_by_category", "short_of_overlap", "annotator_counts"]
        + ["annotator_reliability"] * 3
    )
    for page in (QUALITY, "annotate/views/admin_progress.py"):
        lead.switch_page(page).run()
    assert sorted(calls) == first
    old = sqlite_env.get_label("p0", "alice")
    assert old is not None
    sqlite_env.save_label(replace(old, preference="tie"), expected_revision=old.revision)
    lead.switch_page(QUALITY).run()
    assert len(calls) == len(first) + 5  # gold figures, three reliability charts, the bias chart


def test_gold_figures_follow_regold_and_the_qualification_set(sqlite_env) -> None:
    """Gold answers re-imported for the same pairs leave the change stamp as it was, and the
    qualification set is a setting: the cached gold figures follow both."""
    from annotate import figures
    from curate.model import Gold
    from curate.quality.qualification import set_qualification

    label_everything(sqlite_env)
    lead = sign_in("lead")
    lead.switch_page(QUALITY).run()
    sqlite_env.set_gold([Gold("p0", "import", preference="first")])
    before = figures.gold_stats(sqlite_env)
    assert before.per_field_values["preference"] == {"first": 1} and before.qualification_pairs == 0
    stamp = sqlite_env.change_stamp()
    sqlite_env.set_gold([Gold("p0", "import", preference="second")])
    set_qualification(sqlite_env, ["p0"], 0.5)
    assert sqlite_env.change_stamp() == stamp
    after = figures.gold_stats(sqlite_env)
    assert after.per_field_values["preference"] == {"second": 1} and after.qualification_pairs == 1


def test_the_progress_table_reads_accounts_and_the_last_hour_live(sqlite_env) -> None:
    """The per-annotator counts are cached by the change stamp; an account's role and whether
    it is active are not in the stamp, nor is the clock: both are read on every run."""
    from datetime import UTC, datetime

    from annotate import admin, figures

    label_everything(sqlite_env)
    sign_in("lead").switch_page("annotate/views/admin_progress.py").run()
    counts = figures.annotator_counts(sqlite_env)
    stamp = sqlite_env.change_stamp()
    sqlite_env.update_annotator("bob", active=False)
    assert sqlite_env.change_stamp() == stamp
    people = admin.progress_by_annotator(sqlite_env, counts=figures.annotator_counts(sqlite_env)).set_index("annotator")
    assert not people.loc["bob", "active"] and people.loc["bob", "submitted"] == counts["bob"].submitted > 0
    later = datetime(2025, 1, 1, 9, 30, tzinfo=UTC)  # label_everything's labels start at 9:00
    fresh = admin.progress_by_annotator(sqlite_env, now=later)
    cached = admin.progress_by_annotator(sqlite_env, now=later, counts=figures.annotator_counts(sqlite_env))
    pd.testing.assert_frame_equal(cached, fresh)
    assert cached["last_hour"].sum() > 0


def test_the_lead_pages_read_the_labels_once_per_state(sqlite_env, monkeypatch) -> None:
    """Progress, Quality and Agreement in turn read one label sheet (annotate/figures.py) and
    the assignments' columns once; an edited label makes a new one."""
    from curate.store import sheet

    reads: list[str] = []
    for cls in (sheet.LabelSheet, sheet.Assignments):
        real = cls.read

        def counted(store, _real=real, _name=cls.__name__):
            reads.append(_name)
            return _real(store)

        monkeypatch.setattr(cls, "read", counted)
    label_everything(sqlite_env)
    lead = sign_in("lead")
    for page in ("annotate/views/admin_progress.py", QUALITY, "annotate/views/admin_agreement.py"):
        lead.switch_page(page).run()
        assert not lead.exception, (page, lead.exception)
    assert reads == ["LabelSheet", "Assignments"]
    old = sqlite_env.get_label("p0", "alice")
    assert old is not None
    sqlite_env.save_label(replace(old, preference="tie"), expected_revision=old.revision)
    lead.switch_page(QUALITY).run()
    assert not lead.exception, lead.exception
    assert reads == ["LabelSheet", "Assignments", "LabelSheet", "Assignments"]
