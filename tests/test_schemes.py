"""Annotation schemes (curate/schemes.py): the built-ins, reading a scheme file, keys, required
fields and how a pair's preference follows from a label, on tiny literal schemes and on
MMRB2's real ratings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from curate import schemes
from curate.errors import InputError
from curate.schemes import BUILT_IN, label_preference, load, missing, pair_preference, stored_scale
from tests.support.data import shared


def _scheme(tmp_path: Path, text: str):
    p = tmp_path / "scheme.toml"
    p.write_text(text, encoding="utf-8")
    return load(p)


def _problems(tmp_path: Path, text: str) -> list[tuple[int | None, str | None, str]]:
    with pytest.raises(InputError) as e:
        _scheme(tmp_path, text)
    assert all(p.file.endswith("scheme.toml") for p in e.value.problems)
    return [(p.line, p.field, p.message) for p in e.value.problems]


def test_the_built_ins_load_and_mmrb_keeps_the_label_pages_keys():
    from annotate.keys import KEYS

    assert list(BUILT_IN) == ["mmrb", "mmrb2-pairwise", "mmrb2-reasoning", "aspects", "verify"]
    assert load("mmrb") is BUILT_IN["mmrb"] and schemes.DEFAULT == "mmrb"
    mmrb = BUILT_IN["mmrb"]
    roles = {"correctness": ("q_left", "q_right"), "preference": ("q_pref",)}
    for key, (name, i) in mmrb.keys.items():
        n = len(mmrb.field(name).options)
        assert KEYS[key] == (roles[name][i // n], i % n)  # today's form: 1 2 3, 8 9 0, A T D
    for s in BUILT_IN.values():
        assert not set(s.keys) & schemes.RESERVED_KEYS
        assert len(s.fields) <= 6 or s.name == "aspects"
    assert BUILT_IN["verify"].shows_proposal and not BUILT_IN["mmrb"].shows_proposal
    assert BUILT_IN["mmrb2-pairwise"].field("score").level == "ordinal"
    assert BUILT_IN["mmrb"].field("preference").level == "nominal"


def test_a_scheme_file_is_read_with_its_keys_assigned(tmp_path):
    s = _scheme(
        tmp_path,
        """
name = "tiny"
[[field]]
name = "quality"
kind = "scale"
points = ["bad", "ok", "good"]
[[field]]
name = "winner"
kind = "choice"
values = ["first", "tie", "second"]
sides = true
[[field]]
name = "note"
kind = "text"
required_when = { winner = ["tie"] }
[preference]
rule = "field"
field = "winner"
""",
    )
    assert [f.name for f in s.fields] == ["quality", "winner", "note"]
    assert s.field("quality").keys == ("1", "2", "3") and s.field("winner").keys == ("a", "t", "d")
    assert s.field("quality").options == ("1", "2", "3") and s.field("note").keys == ()
    assert missing(s, {"quality": 2, "winner": "first"}) == []
    assert missing(s, {"quality": 2, "winner": "tie"}) == ["note"]
    assert missing(s, {}) == ["quality", "winner"]
    assert label_preference(s, {"winner": "second"}) == "second"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", [(None, "name", "the scheme needs a name"), (None, "field", "declares its fields")]),
        ('name = "x"', [(None, "field", "declares its fields")]),
        (
            'name = "x"\n[[field]]\nname = "a"\nkind = "slider"\n',
            [(2, "a", "kind 'slider'")],
        ),
        (
            'name = "x"\n[[field]]\nname = "a"\nkind = "choice"\nvalues = ["yes"]\n',
            [(2, "a", "at least two values")],
        ),
        (
            'name = "x"\n[[field]]\nname = "a"\nkind = "scale"\npoints = ["only"]\n',
            [(2, "a", "at least two points")],
        ),
        (
            'name = "x"\n[[field]]\nname = "a"\nkind = "choice"\nvalues = ["y", "n"]\n'
            '[[field]]\nname = "a"\nkind = "text"\n',
            [(2, "a", "declared twice")],
        ),
        (
            'name = "x"\n[[field]]\nname = "a"\nkind = "text"\nrequired_when = { b = ["y"] }\n',
            [(2, "a", "names no field")],
        ),
        (
            'name = "x"\n[[field]]\nname = "a"\nkind = "choice"\nvalues = ["y", "n"]\nkeys = ["s", "k"]\n',
            [(2, "a", "key 's' is the page's own")],
        ),
        (
            'name = "x"\n[[field]]\nname = "a"\nkind = "choice"\nvalues = ["y", "n"]\nkeys = ["1", "2"]\n'
            '[[field]]\nname = "b"\nkind = "choice"\nvalues = ["y", "n"]\nkeys = ["2", "3"]\n',
            [(7, "b", "key '2' is field 'a''s too")],
        ),
        (
            'name = "x"\n[[field]]\nname = "a"\nkind = "choice"\nvalues = ["y", "n"]\nkeys = ["1"]\n',
            [(2, "a", "1 keys for 2 answers")],
        ),
        (
            'name = "x"\n[[field]]\nname = "a"\nkind = "choice"\nvalues = ["y", "n"]\ncolour = "red"\n',
            [(2, "a", "unknown setting 'colour'")],
        ),
        (
            'name = "x"\n[[field]]\nname = "a"\nkind = "choice"\nvalues = ["left", "right"]\nsides = true\n',
            [(2, "a", "names sides takes values from first, second, tie")],
        ),
        (
            'name = "x"\n[[field]]\nname = "a"\nkind = "text"\n[preference]\nrule = "scale"\nfield = "a"\n',
            [(None, "preference", "needs a scale field")],
        ),
        (
            'name = "x"\n[[field]]\nname = "a"\nkind = "text"\n[preference]\nrule = "vote"\n',
            [(None, "preference", "rule = one of")],
        ),
        ('name = "x"\n[[field]\n', [(2, None, "not valid TOML")]),
        # wrong types are named, never read as something else
        (
            'name = "x"\ntitle = {a = 1}\nversion = "2"\n[[field]]\nname = "a"\nkind = "text"\ntitle = [1]\n',
            [
                (None, "title", "title is a text"),
                (None, "version", "version is a whole number"),
                (4, "a", "title is a text"),
            ],
        ),
        (
            'name = "x"\n[[field]]\nname = "a"\nkind = "choice"\nvalues = ["first", "second"]\n'
            'sides = "yes"\nrequired = 0\n',
            [(2, "a", "sides is true or false"), (2, "a", "required is true or false")],
        ),
        (
            'name = "x"\n[[field]]\nname = "a"\nkind = "scale"\npoints = ["a", "b"]\nlow = 1.5\n',
            [(2, "a", "low is a whole number")],
        ),
        (
            'name = "x"\n[[field]]\nname = "a"\nkind = "scale"\npoints = ["a", "b"]\n'
            '[preference]\nrule = "scale"\nfield = "a"\nmidpoint = "m"\n',
            [(None, "preference", "midpoint is a number")],
        ),
        (
            'name = "x"\n[[field]]\nname = "a"\nkind = "choice"\nvalues = [[1], [2]]\n',
            [(2, "a", "values is a list of words"), (2, "a", "at least two values")],
        ),
    ],
)
def test_a_bad_scheme_names_the_file_line_and_field(tmp_path, text, expected):
    got = _problems(tmp_path, text)
    assert [(line, name) for line, name, _ in got] == [(line, name) for line, name, _ in expected], got
    for (_, _, message), (_, _, words) in zip(got, expected, strict=True):
        assert words in message


def test_an_unknown_scheme_name_is_refused_with_the_choices(tmp_path):
    with pytest.raises(InputError, match="no such scheme: use mmrb, mmrb2-pairwise"):
        load("mmrb3")
    with pytest.raises(InputError, match="scheme not found"):
        load(tmp_path / "gone.toml")


def test_too_many_answers_for_the_keyboard_asks_for_keys(tmp_path):
    fields = "".join(
        f'[[field]]\nname = "f{i}"\nkind = "scale_per_response"\npoints = ["1", "2", "3", "4", "5"]\n' for i in range(4)
    )
    got = _problems(tmp_path, f'name = "x"\n{fields}')
    # 28 keys: two fields of ten answers take 20
    assert got == [
        (line, f"f{i}", "no keys left for its 10 answers: give keys = [...]") for i, line in ((2, 10), (3, 14))
    ]


def test_mmrb_requires_a_rationale_for_a_tie_or_an_unsure():
    s = BUILT_IN["mmrb"]
    done = {"correctness": ["correct", "incorrect"], "preference": "first"}
    assert missing(s, done) == []
    assert missing(s, {**done, "preference": "tie"}) == ["rationale"]
    assert missing(s, {**done, "correctness": ["unsure", "correct"]}) == ["rationale"]
    assert missing(s, {**done, "correctness": ["correct", None]}) == ["correctness"]
    assert missing(s, {**done, "preference": "tie", "rationale": "both fine"}) == []


def test_verify_takes_the_proposal_unless_the_annotator_disagrees():
    s = BUILT_IN["verify"]
    assert label_preference(s, {"verdict": "agree"}, proposal="second") == "second"
    assert label_preference(s, {"verdict": "disagree", "corrected": "tie"}, proposal="second") == "tie"
    assert label_preference(s, {"verdict": "unsure"}, proposal="second") is None
    assert missing(s, {"verdict": "disagree"}) == ["corrected", "rationale"]
    assert missing(s, {"verdict": "agree"}) == []


def test_grades_prefer_the_better_letter():
    s = BUILT_IN["mmrb2-reasoning"]
    assert label_preference(s, {"grade": ["A", "C"]}) == "first"
    assert label_preference(s, {"grade": ["C", "B"]}) == "second"
    assert label_preference(s, {"grade": ["F", "B"]}) is None  # not one of MMRB2's grades
    assert label_preference(s, {"grade": ["B", "B"]}) == "tie"
    assert label_preference(s, {"grade": ["B"]}) is None  # not a grade of each: no preference


@pytest.mark.parametrize("task", ["t2i", "edit", "interleaved"])
def test_mmrb2s_chosen_is_the_scale_rule_over_its_real_ratings(task):
    """MMRB2: chosen is A exactly when the mean of the three 1-6 scores is above 3.5."""
    s = BUILT_IN["mmrb2-pairwise"]
    pairs = json.loads(shared(f"mmrb2/{task}_response_only.json").read_text())["pairs"]
    got = [pair_preference(s, [{"score": v} for v in p["human_annotations"]]) for p in pairs]
    assert len(pairs) == 1000 and "tie" not in got
    assert got == [{"A": "first", "B": "second"}[p["chosen"]] for p in pairs]


@given(st.integers(1, 6), st.sampled_from(["first", "second"]))
def test_a_pairwise_scale_shown_flipped_is_stored_mirrored(shown, left):
    f = BUILT_IN["mmrb2-pairwise"].field("score")
    stored = stored_scale(f, shown, left)
    assert 1 <= stored <= 6 and stored_scale(f, stored, left) == shown  # its own inverse
    s = BUILT_IN["mmrb2-pairwise"]
    as_if_unflipped = label_preference(s, {"score": shown})
    # the same point on screen: the same side on screen, whichever response that showed
    flipped = {"first": "second", "second": "first", "tie": "tie"}
    assert label_preference(s, {"score": stored}) == (as_if_unflipped if left == "first" else flipped[as_if_unflipped])


@given(st.lists(st.integers(1, 6), min_size=1, max_size=5))
def test_swapping_the_responses_mirrors_the_pair_preference(scores):
    s = BUILT_IN["mmrb2-pairwise"]
    f = s.field("score")
    swapped = [stored_scale(f, v, "second") for v in scores]
    flipped = {"first": "second", "second": "first", "tie": "tie", None: None}
    assert (
        pair_preference(s, [{"score": v} for v in swapped])
        == flipped[pair_preference(s, [{"score": v} for v in scores])]
    )


# -- mmrb scheme -----------------------------------------------------------------------------
def test_mmrb_scheme_lists_the_built_ins_and_shows_one(capsys):
    from curate.cli import main

    assert main(["scheme"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listed] == list(BUILT_IN) and "(the default)" in listed[0]
    assert main(["scheme", "mmrb2-pairwise", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["fields"][0]["points"][0] == "1 right much better" and shown["fields"][0]["level"] == "ordinal"
    assert shown["fields"][0]["keys"] == ["1", "2", "3", "4", "5", "6"]
    assert "above 3.5" in shown["preference"]
    assert main(["scheme", "verify"]) == 0
    assert "corrected (choice, required when verdict is disagree) keys a t d" in capsys.readouterr().out


def test_mmrb_scheme_checks_a_file_and_names_its_problems(tmp_path, capsys):
    from curate.cli import main

    bad = tmp_path / "s.toml"
    bad.write_text('name = "s"\n[[field]]\nname = "a"\nkind = "choice"\nvalues = ["y", "n"]\nkeys = ["Enter", "1"]\n')
    assert main(["scheme", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:2 field 'a': key 'Enter' is the page's own" in err and "Traceback" not in err
    assert main(["scheme", "mmrb3"]) == 1
    assert "no such scheme: use mmrb, mmrb2-pairwise, mmrb2-reasoning, aspects, verify" in capsys.readouterr().err


def test_the_schemes_page_example_loads_and_names_every_built_in(tmp_path):
    import re

    page = (Path(__file__).resolve().parents[1] / "docs" / "schemes.md").read_text()
    (example,) = re.findall(r"```toml\n(.*?)```", page, re.S)
    s = _scheme(tmp_path, example)
    assert [f.name for f in s.fields] == ["helpfulness", "safer", "concerns", "rationale"]
    assert s.field("helpfulness").keys == tuple("1234567890") and s.field("safer").keys == ("a", "t", "d")
    assert missing(s, {"helpfulness": [3, 4], "safer": "first"}) == []
    assert missing(s, {"helpfulness": [3, 4], "safer": "first", "concerns": ["other"]}) == ["rationale"]
    assert label_preference(s, {"safer": "tie"}) == "tie"
    assert re.findall(r"^\| `([a-z0-9-]+)`", page.split("## The built-in schemes")[1].split("\n## ")[0], re.M) == list(
        BUILT_IN
    )


# -- generated schemes ---------------------------------------------------------------------------
_KINDS = st.sampled_from(["choice", "choice_per_response", "scale", "scale_per_response", "grades", "multi", "text"])


@st.composite
def _tables(draw):
    fields = []
    for i in range(draw(st.integers(1, 6))):
        kind = draw(_KINDS)
        f: dict = {"name": f"f{i}", "kind": kind}
        if kind in ("scale", "scale_per_response"):
            f["points"] = [f"p{j}" for j in range(draw(st.integers(2, 4 if kind == "scale_per_response" else 7)))]
        elif kind != "text":
            f["values"] = [f"v{j}" for j in range(draw(st.integers(2, 3)))]
        if i and draw(st.booleans()):
            f["required_when"] = {"f0": ["v0", "1"]}
        fields.append(f)
    return {"name": "gen", "field": fields}


@given(_tables())
def test_every_generated_scheme_gets_distinct_free_keys_or_asks_for_them(table):
    try:
        s = schemes.from_table(table)
    except InputError as e:  # only ever for keys: the form needs more than the keyboard has
        assert all("no keys left" in p.message for p in e.problems), e.problems
        return
    keys = [k for f in s.fields for k in f.keys]
    assert len(keys) == len(set(keys)) and not set(keys) & schemes.RESERVED_KEYS
    for f in s.fields:
        n = 0 if f.kind in ("text", "multi") else len(f.options) * (2 if f.per_response else 1)
        assert len(f.keys) == n
    # every field answered with its first option: nothing missing; nothing answered: only the
    # fields required outright are
    full = {f.name: ([f.options[0]] * 2 if f.per_response else f.options[0]) if f.options else "x" for f in s.fields}
    assert missing(s, full) == []
    assert missing(s, {}) == [f.name for f in s.fields if f.required_when is None]
    assert schemes.describe(s)["fields"][0]["name"] == "f0"


# -- a label's values: screen <-> stored <-> Label -----------------------------------------------
def _answer(f, draw):
    """An answer of field ``f`` in stored terms (a per-response one as (first, second))."""
    if f.kind == "text":
        return draw(st.sampled_from(["", "because", "a b"]))
    if f.kind == "multi":
        return draw(st.lists(st.sampled_from(f.values), unique=True))
    one = st.sampled_from([int(o) for o in f.options] if f.kind in ("scale", "scale_per_response") else f.options)
    return (draw(one), draw(one)) if f.per_response else draw(one)


@st.composite
def _answers(draw):
    scheme = BUILT_IN[draw(st.sampled_from(sorted(BUILT_IN)))]
    values = {f.name: _answer(f, draw) for f in scheme.fields if draw(st.booleans()) or f.required}
    return scheme, {k: v for k, v in values.items() if v not in ("", [])}


@given(_answers(), st.sampled_from(["first", "second"]), st.sampled_from([None, "first", "second", "tie"]))
def test_the_display_order_changes_no_stored_value_and_a_label_keeps_them(answers, left, proposal):
    """Shown either way round (sides swapped, a pairwise scale mirrored), the same answers
    store the same values, the same preference and the same label; read back, the same values."""
    from curate.schemes import label_values, shown_values, stored_values, to_label

    scheme, stored = answers
    shown = shown_values(scheme, stored, left)
    assert stored_values(scheme, shown, left) == stored
    other = {"first": "second", "second": "first"}[left]
    assert stored_values(scheme, shown_values(scheme, stored, other), other) == stored
    label = to_label(scheme, "p", "ann", stored, proposal)
    assert label.preference == label_preference(scheme, stored, proposal)
    assert label_values(scheme, label) == stored


def test_a_six_picked_with_the_second_response_on_the_left_is_stored_as_a_one():
    from curate.schemes import stored_values, to_label

    s = BUILT_IN["mmrb2-pairwise"]
    stored = stored_values(s, {"score": 6, "rationale": "left much better"}, left="second")
    assert stored == {"score": 1, "rationale": "left much better"}
    label = to_label(s, "p", "ann", stored)
    assert (label.preference, label.ratings, label.rationale) == ("second", {"score": 1}, "left much better")
    grades = to_label(
        BUILT_IN["mmrb2-reasoning"],
        "p",
        "ann",
        stored_values(BUILT_IN["mmrb2-reasoning"], {"grade": ("B", "A")}, "second"),
    )
    assert (grades.ratings, grades.preference) == (
        {"grade_first": "A", "grade_second": "B"},
        "first",
    )  # as MMRB2's import
    verified = to_label(BUILT_IN["verify"], "p", "ann", {"verdict": "agree"}, proposal="second")
    assert (verified.preference, verified.ratings) == ("second", {"verdict": "agree", "proposal": "second"})


@given(
    st.sampled_from(["correct", "incorrect", "unsure"]),
    st.sampled_from(["correct", "incorrect", "unsure"]),
    st.sampled_from(["left", "tie", "right"]),
    st.sampled_from(["first", "second"]),
)
def test_the_mmrb_scheme_makes_the_label_the_page_makes_today(cl, cr, pref, left):
    from annotate import form
    from curate.schemes import stored_values, to_label

    today = form.to_label(
        form.FormInput(cl, cr, pref, "why"), pair_id="p", annotator="ann", left_side=left, seconds=None
    )
    s = BUILT_IN["mmrb"]
    shown = {"correctness": (cl, cr), "preference": pref, "rationale": "why"}
    assert to_label(s, "p", "ann", stored_values(s, shown, left)) == today
