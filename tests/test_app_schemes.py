"""The label page renders the pair's annotation scheme (AppTest, no browser): mmrb2-pairwise's
six-point scale (mirrored when the first response is on the right), aspects' scores per
response, verify's proposal; required fields refused with the reason, undo and edit."""

from __future__ import annotations

import pytest

from curate.schemes import BUILT_IN, to_table
from tests.support.apptest import all_text, sign_in, submit


@pytest.fixture
def schemes_env(sqlite_env):
    """The seeded store (alice sees p0 with the first response on the left, bob on the right):
    p0, p1 on mmrb2-pairwise, p2 on aspects, p3 on verify (the judges proposed the first), the
    rest on mmrb."""
    s = sqlite_env
    for name, pairs in (("mmrb2-pairwise", ["p0", "p1"]), ("aspects", ["p2"]), ("verify", ["p3"])):
        scheme = BUILT_IN[name]
        s.add_scheme(scheme.name, scheme.version, to_table(scheme))
        s.set_pair_scheme(pairs, scheme.name, scheme.version)
    s.update_pair("p3", metadata={"proposal": "first"})
    return s


def widget(at, prefix: str):
    """The current form's widget whose key starts with ``prefix`` (annotate/keys.field_prefix)."""
    found = [w for w in [*at.radio, *at.text_area, *at.checkbox] if w.key and w.key.startswith(prefix)]
    assert len(found) == 1, (prefix, [w.key for w in found])
    return found[0]


def test_the_six_point_scale_is_stored_as_shown_or_mirrored_and_required(schemes_env):
    s = schemes_env
    at = sign_in("alice")
    score = widget(at, "qs-score-all-")
    points = BUILT_IN["mmrb2-pairwise"].field("score").points
    assert score.options == [f"{p} {w}  ({p})" for p, w in enumerate(points, 1)]
    assert not [w for w in at.radio if w.key and w.key.startswith("q_left")]  # not mmrb's form
    submit(at)
    assert "answer 'Which response is better?'" in all_text(at) and s.get_label("p0", "alice") is None
    widget(at, "qs-score-all-").set_value(6)
    submit(at)
    got = s.get_label("p0", "alice")
    assert (got.ratings, got.preference, got.scheme_version) == ({"score": 6}, "first", 1)
    assert "Question 1" in all_text(at)
    bob = sign_in("bob")  # p0 with the first response on the right: "left much better" is the second
    widget(bob, "qs-score-all-").set_value(6)
    widget(bob, "qs-rationale-all-").input("crisper")
    submit(bob)
    got = s.get_label("p0", "bob")
    assert (got.ratings, got.preference, got.rationale) == ({"score": 1}, "second", "crisper")


def test_the_legend_follows_the_scheme_of_the_pair_shown(schemes_env):
    at = sign_in("alice")
    captions = " ".join(c.value for c in at.caption)
    assert "`1` `2` `3` `4` `5` `6` which response is better?: 1 right much better" in captions
    assert "`1` `2` `3` left correct" not in captions


def test_aspects_scores_per_response_and_its_required_rationale(schemes_env):
    s = schemes_env
    at = sign_in("bob")
    for _ in range(2):
        next(b for b in at.button if b.key == "act_skip").click().run()
    assert "Question 2" in all_text(at)
    for n, aspect in enumerate(("helpfulness", "faithfulness", "ethics")):
        widget(at, f"qs-{aspect}-left-").set_value(4 - n)
        widget(at, f"qs-{aspect}-right-").set_value(1 + n)
    widget(at, "qs-preference-all-").set_value("tie")
    submit(at)
    assert "Not saved yet: write the rationale." in all_text(at)
    assert s.get_label("p2", "bob") is None
    assert widget(at, "qs-helpfulness-left-").value == 4  # the answers are back in the form
    widget(at, "qs-rationale-all-").input("equal overall")
    submit(at)
    got = s.get_label("p2", "bob")
    assert s.get_assignment("p2", "bob").left == "second"
    assert dict(got.ratings) == {
        "helpfulness_first": 1,
        "helpfulness_second": 4,
        "faithfulness_first": 2,
        "faithfulness_second": 3,
        "ethics_first": 3,
        "ethics_second": 2,
        "preference": "tie",
    }
    assert (got.preference, got.rationale) == ("tie", "equal overall")


def test_verify_shows_the_proposal_on_the_annotators_sides_and_keeps_it(schemes_env):
    s = schemes_env
    at = sign_in("bob")
    for _ in range(3):
        next(b for b in at.button if b.key == "act_skip").click().run()
    assert s.get_assignment("p3", "bob").left == "first"
    assert "The judges propose: left is better." in all_text(at)
    widget(at, "qs-verdict-all-").set_value("disagree")
    submit(at)
    assert "answer 'Which response is better, then?' (required when verdict is disagree)" in all_text(at)
    widget(at, "qs-corrected-all-").set_value("right")
    widget(at, "qs-rationale-all-").input("the right one reads the chart")
    submit(at)
    got = s.get_label("p3", "bob")
    assert got.preference == "second"
    assert got.ratings == {"verdict": "disagree", "corrected": "second", "proposal": "first"}


def test_a_flag_on_a_scheme_needs_its_note(schemes_env):
    s = schemes_env
    at = sign_in("alice")
    next(r for r in at.radio if r.key.startswith("q_flag")).set_value("unsafe_content")
    submit(at)
    assert "a flag needs a short note" in all_text(at) and s.get_label("p0", "alice") is None
    widget(at, "qs-rationale-all-").input("a weapon")
    submit(at)
    got = s.get_label("p0", "alice")
    assert (got.flag, got.flag_note, got.ratings) == ("unsafe_content", "a weapon", {})


def test_undo_and_edit_of_a_scheme_label(schemes_env):
    s = schemes_env
    at = sign_in("bob")
    widget(at, "qs-score-all-").set_value(5)
    submit(at)
    assert s.get_label("p0", "bob").ratings == {"score": 2}
    next(b for b in at.button if b.key == "act_undo").click().run()
    assert s.get_label("p0", "bob") is None
    assert widget(at, "qs-score-all-").value == 5  # as bob answered it, on his screen
    submit(at)
    at.switch_page("annotate/views/my_labels.py").run()
    assert not at.exception, at.exception
    # the label's preference on bob's sides: 5 is "left better" on his screen, the second response
    row = at.dataframe[0].value.iloc[0]
    assert (row["Better"], row["Answers"]) == ("left", "Which response is better: 5 left better")
    at.session_state["editing"] = "p0"
    at.run()
    assert widget(at, "qs-score-all-").value == 5
    widget(at, "qs-score-all-").set_value(1)
    submit(at)
    got = s.get_label("p0", "bob")
    assert (got.ratings, got.preference, got.revision) == ({"score": 6}, "first", 2)
    assert [h.snapshot.ratings for h in s.label_history("p0", "bob")] == [{"score": 2}, {"score": 2}]
