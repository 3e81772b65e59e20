"""The rules the app's pages and widgets call (clock, form keys, the rationale words, guidelines,
progress totals, account and identity rules), without a browser."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotate import auth
from annotate.clock import Clock
from annotate.form import FormInput, problems, rationale_required_for
from annotate.form_state import keys_of, shown_marker
from annotate.guidelines import NONE, guidelines_markdown, guidelines_text
from annotate.keys import KEYS
from annotate.progress import ProgressTotals
from annotate.queue import PairView
from annotate.render import pair_token
from curate.errors import MmrbError
from curate.model import Label
from curate.seeding import hex_hash


def test_the_clock_starts_once_per_key_and_stops():
    c = Clock()
    key = ("db", "alice", "p1")
    assert c.started(key, now=10.0) == 10.0 and c.started(key, now=99.0) == 10.0  # a refresh keeps it
    assert c.seconds(key, now=14.5) == 4.5
    assert c.seconds(("db", "bob", "p1"), now=20.0) == 0.0  # another annotator: their own clock
    c.stop(key)
    assert c.started(key, now=30.0) == 30.0  # shown again after a label: a new clock
    c.stop(("db", "nobody", "p9"))  # stopping a clock never started is fine


def test_the_clock_forgets_the_oldest_beyond_its_size():
    c = Clock(most=2)
    for i, t in enumerate((1.0, 2.0, 3.0)):
        c.started(("db", "a", f"p{i}"), now=t)
    assert c.started(("db", "a", "p0"), now=50.0) == 50.0  # p0 was forgotten
    assert c.started(("db", "a", "p2"), now=50.0) == 3.0


@pytest.mark.parametrize(
    "rule, words",
    [
        (frozenset({"tie", "unsure", "flag"}), "flag, tie, unsure"),
        (frozenset({"never", "tie"}), "never"),
        (frozenset({"always", "tie"}), "always"),
        (frozenset({"tie"}), "tie"),
        (frozenset({"sometimes"}), "never"),  # a word the rule does not know asks for nothing
        (frozenset(), "never"),
    ],
)
def test_rationale_required_for_says_what_the_rule_checks(rule, words):
    assert rationale_required_for(rule) == words


@given(st.frozensets(st.sampled_from(["tie", "unsure", "flag", "always", "never", "other"])))
def test_the_words_shown_agree_with_the_check(rule):
    tie = FormInput(left="correct", right="correct", preference="tie")
    needs = any("rationale" in p for p in problems(tie, rule))
    words = rationale_required_for(rule)
    assert needs == (words == "always" or "tie" in words.split(", "))


def test_form_keys_keep_the_prefixes_the_keyboard_finds():
    k0, k2 = keys_of("new", None), keys_of("new", 2)
    assert (k0.left, k0.submit, k2.preference) == ("q_left_new", "q_submit_new", "q_pref_new2")
    assert keys_of("new", 0) == k0 and keys_of("edit", 1).rationale == "q_rationale_edit1"
    assert (k2.correctness("left"), k2.correctness("right")) == ("q_left_new2", "q_right_new2")
    prefixes = {prefix for prefix, _ in KEYS.values() if prefix.startswith("q_")}
    assert all(any(getattr(k2, f).startswith(p + "_") for f in k2.__dataclass_fields__) for p in prefixes)


def test_shown_marker_changes_with_the_revision_of_a_reopened_label():
    view = PairView("p1", "i1", "q", "c", "a", "b", "first", None, "none", None, 0)
    assert shown_marker(view) == "p1"
    lab = Label(pair_id="p1", annotator="alice", revision=3)
    assert shown_marker(replace(view, label=lab)) == "p1@3"


def test_pair_token_is_a_short_stable_hash_the_benches_import():
    # stored nowhere: only the page's elements and served image names carry it
    assert pair_token("p1") == hex_hash("p1", n=10) == hashlib.sha256(b"p1").hexdigest()[:10]
    assert len({pair_token(f"p{i}") for i in range(1000)}) == 1000
    root = Path(__file__).resolve().parents[1]
    copies = [p.name for p in (root / "bench").rglob("*.py") if "sha1" in p.read_text(encoding="utf-8")]
    assert copies == []  # bench/annotate.py and its bare page find the elements by pair_token itself


def test_guidelines_from_the_store_else_the_file(sqlite_store, tmp_path):
    f = tmp_path / "g.md"
    assert guidelines_text(sqlite_store) is None and guidelines_markdown(sqlite_store, str(f)) == NONE
    f.write_text("# From the file", encoding="utf-8")
    assert guidelines_markdown(sqlite_store, str(f)) == "# From the file"
    sqlite_store.set_guidelines("# From the store", "lead")
    assert guidelines_text(sqlite_store, str(f)) == "# From the store"


def test_progress_totals():
    people = pd.DataFrame(
        {"done": [3, 4, 0], "assigned": [5, 5, 2], "last_hour": [1, 2, 0], "median_seconds": [10.0, 20.0, None]}
    )
    assert ProgressTotals.of(people) == ProgressTotals(done=7, assigned=12, last_hour=3, median_seconds=15.0)
    none_timed = people.assign(median_seconds=[None, None, None])
    assert ProgressTotals.of(none_timed).median_seconds is None


def test_an_admin_cannot_disable_their_own_account(sqlite_store):
    auth.add_account(sqlite_store, "lead", "long enough", "admin")
    auth.add_account(sqlite_store, "alice", "long enough")
    with pytest.raises(MmrbError, match="cannot disable your own account"):
        auth.set_active(sqlite_store, "lead", False, by="lead")
    assert sqlite_store.get_annotator("lead").active
    auth.set_active(sqlite_store, "alice", False, by="lead")
    assert not sqlite_store.get_annotator("alice").active
    auth.set_active(sqlite_store, "alice", True, by="alice")  # enabling is never refused


def test_why_an_organisation_identity_did_not_sign_in(sqlite_store):
    auth.add_account(sqlite_store, "ann@example.org", "long enough")
    assert auth.identity_refusal(sqlite_store, None) is None and auth.identity_refusal(sqlite_store, "") is None
    assert auth.identity_refusal(sqlite_store, "ann@example.org") == "ended"
    assert auth.identity_refusal(sqlite_store, "ben@example.org") == "no_account"
    auth.set_active(sqlite_store, "ann@example.org", False)
    assert auth.identity_refusal(sqlite_store, "ann@example.org") == "no_account"


def test_a_table_refuses_to_shorten_a_header_it_does_not_have():
    """A renamed column would otherwise lose its short header silently (the Quality table)."""
    from annotate.tables import Table
    from annotate.widgets import show_table

    with pytest.raises(KeyError, match="Dawid-Skene reliability"):
        show_table(Table(pd.DataFrame({"Model": [0.5]})), short={"Dawid-Skene reliability": ("DS", "Dawid-Skene")})
