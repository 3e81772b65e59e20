"""A loopback pairwise judge with scripted accuracy for Best-of-N on stores whose responses
carry no marks of their own (the bundled sample): it reads the two answers out of the prompt
of Multimodal RewardBench's judge template (``template = "mmrb"``, data/sample/judge.toml's),
knows each one's correctness by its text, and is right with probability p on a pair that
differs in correctness (seeded on what it is shown), a seeded coin between two alike: the
judge of tests/test_bestofn_run.py's ``p_judge`` for unmarked texts."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from curate.seeding import unit
from tests.support.fake_openai import Request

SECTION = "\\[The Start of Assistant {0}'s Answer\\]\n(.*?)\n\\[The End of Assistant {0}'s Answer\\]"
SECTIONS = re.compile(SECTION.format("A") + ".*?" + SECTION.format("B"), re.S)


def shown_answers(prompt: str) -> tuple[str, str]:
    """The texts shown as A and B."""
    m = SECTIONS.search(prompt)
    if m is None:
        raise AssertionError(f"not the mmrb judge prompt: {prompt[:200]!r}")
    return m.group(1), m.group(2)


def scripted_judge(correct: Mapping[str, bool], p: float) -> Callable[[Request], str]:
    """The answers of a judge right with probability ``p``; ``correct``: response text -> correct."""

    def answer(req: Request) -> str:
        a, b = shown_answers(req.prompt_text)
        u = unit("scripted judge", p, a, b)
        better_a = correct[a] if correct[a] != correct[b] else u < 0.5
        right = u < p if correct[a] != correct[b] else True
        return "[[A]]" if better_a == right else "[[B]]"

    return answer
