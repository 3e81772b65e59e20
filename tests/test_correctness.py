from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from curate.correctness import decide, extract_letter, normalise


@pytest.mark.parametrize(
    "response,ref,verdict,got",
    [
        ("Answer: C", "C", "correct", "C"),
        ("The answer is (C).", "C", "correct", "C"),
        ("the answer is C", "(C)", "correct", "C"),
        ("(B) A red car", "C", "incorrect", "B"),
        ("C. The cat is black", "Answer: C", "correct", "C"),
        ("B", "C", "incorrect", "B"),
        ("Looking at the image... so \\boxed{D}", "D", "correct", "D"),
        ("Final answer: **A**", "A", "correct", "A"),
        ("A cat sits on a mat.", "C", "unsure", None),  # 'A' is an article, not an option
        ("Answer: A. Actually the answer is B", "A", "unsure", None),  # two answers
        ("It could be (A) or (B)", "A", "unsure", None),
        ("The answer is a dog", "B", "unsure", None),
    ],
)
def test_choice(response, ref, verdict, got):
    d = decide(response, ref)
    assert (d.verdict, d.method, d.extracted) == (verdict, "choice", got)


@pytest.mark.parametrize(
    "response,ref,verdict",
    [
        ("Yes, there is a dog.", "yes", "correct"),
        ("No.", "Yes", "incorrect"),
        ("There is no dog in the picture, so the answer is no", "no", "correct"),
        ("Answer: yes", "No", "incorrect"),
        ("I cannot tell", "yes", "unsure"),
        ("Yes and no, it depends", "no", "unsure"),  # hedged
        ("No. Yes, I was wrong before", "no", "correct"),  # leading word of its own sentence
        ("Maybe yes, maybe no", "no", "unsure"),
        ("True", "yes", "correct"),
    ],
)
def test_yes_no(response, ref, verdict):
    d = decide(response, ref)
    assert (d.verdict, d.method) == (verdict, "yes_no")


@pytest.mark.parametrize(
    "response,ref,verdict",
    [
        ("42", "42", "correct"),
        ("The total is 1,200 apples.", "1200", "correct"),
        ("So x = 3 and y = 4, answer: 12", "12", "correct"),
        ("The answer is 12.00001", "12", "correct"),  # within relative tolerance
        ("The answer is 12.1", "12", "incorrect"),
        ("It is 150 cm tall", "1.5 m", "correct"),  # unit conversion
        ("It is 150 kg", "1.5 m", "unsure"),  # incomparable units
        ("Answer: 0.75", "3/4", "correct"),
        ("45%", "45%", "correct"),
        ("\\boxed{7}", "7", "correct"),
        ("3 apples plus 4 pears", "7", "unsure"),  # several numbers, no marker
        ("I don't know", "7", "unsure"),
        ("-2", "-2", "correct"),
        ("Subtract 7: 3x = 15. Divide by 3: x = 5.  **x = 5**", "5", "correct"),  # bold final answer
        ("3x + 7 = 22 → 3x = 29 → x ≈ 9.67", "5", "incorrect"),  # after the last ≈
        ("x = 6 + 8 = 14 cm, since the hypotenuse is the longest side.", "10 cm", "incorrect"),
        ("3 notebooks cost $7.50 and 2 pens cost $3.00; altogether $10.50.", "$10.50", "correct"),  # last clause
        ("The loop goes from 1 to 9, so the total is 45. It prints 45.", "55", "incorrect"),
    ],
)
def test_number(response, ref, verdict):
    d = decide(response, ref)
    assert (d.verdict, d.method) == (verdict, "number"), d


@pytest.mark.parametrize(
    "response,ref,verdict",
    [
        ("Paris.", "Paris", "correct"),
        ("The Eiffel Tower", "eiffel tower", "correct"),
        ("London", "Paris", "incorrect"),
        ("It is Paris", "Paris", "unsure"),
        ("Answer: the red one", "red one", "correct"),
        ("A = πr² gives the **area of a circle** of radius r.", "the area of a circle", "correct"),
        ("Thursday, at 23 °C.", "Thursday", "correct"),  # opens with the reference
        ("Friday was the warmest day at 23 °C.", "Thursday", "unsure"),
        ("This long answer describes the scene in detail without saying the name of the city.", "Paris", "unsure"),
    ],
)
def test_exact(response, ref, verdict):
    d = decide(response, ref)
    assert (d.verdict, d.method) == (verdict, "exact"), d


def test_no_reference():
    d = decide("anything", None)
    assert d.verdict == "unsure" and d.method == "none"
    assert decide("x", "  ").method == "none"


def test_normalise():
    assert normalise("  The  Cat, sat!  ") == "cat sat"


@given(st.sampled_from("ABCDEFGHIJ"), st.sampled_from(["Answer: {}", "The answer is ({})", "({}) because", "{}"]))
def test_choice_roundtrip(letter, form):
    assert extract_letter(form.format(letter))[0] == letter
    d = decide(form.format(letter), letter)
    assert d.verdict == "correct"


@given(st.integers(-10**6, 10**6))
def test_number_roundtrip(n):
    assert decide(f"The answer is {n}", str(n)).verdict == "correct"
    assert decide(f"The answer is {n + 1}", str(n)).verdict == "incorrect"
