"""The Quality page fits its models once per state of the labels (annotate/figures.py keys
them by Store.change_stamp): another view or a rerun refits nothing; an edited label does."""

from __future__ import annotations

from dataclasses import replace

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
