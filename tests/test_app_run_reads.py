"""What one run of the label page reads: the session once (a callback's check is the page's),
the queue's progress and next pair in one transaction, the gate on the account already read;
and none of it outlives its run (a session ended or a setting changed shows at the next run)."""

from __future__ import annotations

import pytest

from annotate import auth, queue, sessions
from curate.model import Annotator
from curate.quality.qualification import gate
from tests.support.apptest import all_text, label, sign_in


@pytest.fixture
def checks(monkeypatch):
    """How many times the session was read from the store."""
    calls: list[int] = []
    real = sessions.check

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(sessions, "check", counted)
    return calls


def test_a_submit_reads_the_session_once(sqlite_env, checks):
    at = sign_in("alice")
    checks.clear()
    label(at, left="correct", right="incorrect", pref="left")
    assert sqlite_env.get_label("p0", "alice") is not None
    assert "Question 1" in all_text(at)
    assert len(checks) == 1  # the submit's callback; app.py and the page took its answer


def test_a_page_run_without_a_callback_reads_the_session_once(sqlite_env, checks):
    at = sign_in("alice")
    checks.clear()
    at.run()
    assert len(checks) == 1


def test_a_session_ended_after_a_submit_stops_the_next_run(sqlite_env):
    at = sign_in("alice")
    label(at, left="correct", right="incorrect", pref="left")
    auth.set_active(sqlite_env, "alice", False)  # the lead disables the account between two runs
    at.run()
    assert "Question" not in all_text(at)
    assert not at.radio  # the sign-in page, not the next pair


def test_a_handed_over_check_too_old_is_read_again(sqlite_env, checks):
    at = sign_in("alice")
    sid = at.session_state["session"]
    who = sqlite_env.get_annotator("alice")
    at.session_state["session_checked"] = (sid, who, -1e9)  # a run that ended before its page's check, long ago
    auth.set_active(sqlite_env, "alice", False)
    checks.clear()
    at.run()
    assert checks and not at.radio


def test_the_rationale_rule_shown_is_read_again_on_a_new_run(sqlite_env):
    at = sign_in("alice")
    label(at, left="correct", right="incorrect", pref="left")  # the submit read the rule
    sqlite_env.set_setting("rationale_required", "always")
    at.run()
    assert any("required for: always" in t.label for t in at.text_area)


def test_queue_page_is_the_progress_and_current_view(sqlite_env):
    s = sqlite_env
    alice = s.get_annotator("alice")
    progress, view = queue.queue_page(s, alice)
    assert progress == s.queue_progress("alice")
    assert view == queue.current_view(s, "alice")
    assert view is not None and view.pair_id == "p0"


def test_the_gate_takes_the_account_read_by_the_caller(sqlite_env):
    s = sqlite_env
    alice = s.get_annotator("alice")
    paused = Annotator(**{**alice.__dict__, "paused": "by the lead"})
    assert gate(s, "alice").open
    assert not gate(s, "alice", account=paused).open  # the row given, not read again
    assert gate(s, "alice", account=Annotator(**{**paused.__dict__, "name": "bob"})).open  # another's row: read
    progress, view = queue.queue_page(s, paused)
    assert view is None and progress.assigned > 0
