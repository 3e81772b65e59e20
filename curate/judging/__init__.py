"""Judging pairs with a VLM or a reward model, both behind one protocol (``Judge``,
curate/judging/judge.py): prompt templates, verdict parsing, order policies, the judge
configuration reader and one resumable runner that stores every judgment.

It lives in ``curate`` because ``mmrb select`` judges pairs too; ``mmrb evaluate`` judges
with it and ``mmrb_eval`` scores the stored judgments. Verdicts are stored in canonical
terms (``first``/``second``/``tie`` of the pair's own order), never as the A/B the judge
saw: the ``order`` column says which response was shown as A, and curate/sides.py maps
between the two.
"""

from .judge import Judge, Plan
from .order import ORDER_POLICIES, plan
from .parsing import PARSERS, ParsedVerdict, parse_verdict
from .records import OUTCOMES, JudgeTask, Judgment
from .templates import BUILTIN_TEMPLATES, Template, get_template, load_template

__all__ = [
    "Judge",
    "Plan",
    "JudgeTask",
    "Judgment",
    "OUTCOMES",
    "ParsedVerdict",
    "parse_verdict",
    "PARSERS",
    "Template",
    "BUILTIN_TEMPLATES",
    "get_template",
    "load_template",
    "ORDER_POLICIES",
    "plan",
]
