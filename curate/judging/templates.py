"""Judge prompt templates: the published benchmarks' own prompts and user files.

Placeholders are ``{question}``, ``{answer_a}`` and ``{answer_b}`` (the responses in the
order shown). They are substituted literally, so a template may contain other braces.

A pair whose responses are plain text is rendered as one text (``Template.render``), with
the prompt's images before or after it (``image_first``). A pair where a response has
images is rendered as a sequence of parts (``Template.render_parts``), the user turn of an
OpenAI-compatible multi-image message: the template's text is split at the three
placeholders, each piece of literal text between them (blank space at its ends trimmed)
becomes a text part, and each placeholder is replaced by its parts in order: ``{question}``
by the prompt's text and then its images (or the images go first in the message with
``image_first``), ``{answer_a}`` / ``{answer_b}`` by the parts of the response shown as A /
B, text and images in their own order. So the template's own words around a placeholder say
which images belong to which response: with ``mmrb``, "[The Start of Assistant A's Answer]",
A's parts, "[The End of Assistant A's Answer]", and so on.

A form feed (``\f``, ``PART_BREAK``) in a template's text cuts a piece of literal text into
two text parts there (MMRB2 sends its judge prompt and the first header as two); in a text
rendering it reads as a newline.

A template may hold one text per task (``by_category``, e.g. MMRB2's four judge prompts);
a pair of another category gets ``text``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..configfile import read_table
from ..errors import InputError, InputProblem
from ..model import Part
from ..wording import plural
from .parsing import get_parser

PLACEHOLDERS = ("{question}", "{answer_a}", "{answer_b}")
PART_BREAK = "\f"  # cuts literal text into two parts (a newline in a text rendering)


@dataclass(frozen=True)
class Template:
    name: str
    text: str
    parser: str  # a name of parsing.PARSERS or "regex:PATTERN"
    system: str | None = None
    image_first: bool = False  # put the images before the text in the user turn
    by_category: tuple[tuple[str, str], ...] = ()  # (category, text): a text per task

    def text_for(self, category: str = "") -> str:
        return dict(self.by_category).get(category, self.text)

    def render(self, question: str, answer_a: str, answer_b: str, category: str = "") -> str:
        out = self.text_for(category)
        out = out.replace(PART_BREAK, "\n")
        for ph, value in zip(PLACEHOLDERS, (question, answer_a, answer_b), strict=True):
            out = out.replace(ph, value)
        return out

    def render_parts(
        self,
        question: str,
        images: Sequence[Part],
        answer_a: Sequence[Part],
        answer_b: Sequence[Part],
        category: str = "",
    ) -> list[Part]:
        """The user turn as parts (see the module's docstring): literal text between the
        placeholders, the prompt's text and images at ``{question}`` (the images first in the
        turn with ``image_first``), each response's parts at its placeholder. Empty texts
        are left out. ``images`` may hold text parts too: a prompt interleaved as written
        goes there whole, with an empty ``question``."""
        slots: dict[str, list[Part]] = {
            "{question}": [Part.of_text(question), *([] if self.image_first else images)],
            "{answer_a}": list(answer_a),
            "{answer_b}": list(answer_b),
        }
        out: list[Part] = list(images) if self.image_first else []
        for piece in _split(self.text_for(category)):
            out += slots[piece] if piece in slots else [Part.of_text(x.strip()) for x in piece.split(PART_BREAK)]
        return [p for p in out if p.kind == "image" or p.value.strip()]

    @property
    def digest_text(self) -> str:
        """What a run's identity hashes: the system prompt and every text (the texts per
        category only when there are some, so older runs keep their ids)."""
        out = (self.system or "") + "\0" + self.text
        for cat, text in self.by_category:
            out += "\0" + cat + "\0" + text
        return out


_AT_PLACEHOLDERS = re.compile("(" + "|".join(map(re.escape, PLACEHOLDERS)) + ")")


def _split(text: str) -> list[str]:
    """The text cut at each placeholder, the placeholders kept as pieces of their own."""
    return [x for x in _AT_PLACEHOLDERS.split(text) if x]


# Multimodal RewardBench (scripts/1_run_model_as_judge_gpt4o.py): MT-Bench pair-v2 without
# the tie option; the image goes after the text in the same user turn.
MMRB_TEXT = (
    "Please act as an impartial judge and evaluate the quality of the responses provided by two AI "
    "assistants to the user question displayed below. You should choose the assistant that follows the "
    "user's instructions and answers the user's question better. Your evaluation should consider factors "
    "such as the helpfulness, relevance, accuracy, depth, creativity, and level of detail of their "
    "responses. Begin your evaluation by comparing the two responses and provide a short explanation. "
    "Avoid any position biases and ensure that the order in which the responses were presented does not "
    "influence your decision. Do not allow the length of the responses to influence your evaluation. Do "
    "not favor certain names of the assistants. Be as objective as possible. After providing your "
    'explanation, output your final verdict by strictly following this format: "[[A]]" if assistant A '
    'is better, "[[B]]" if assistant B is better.\n\n'
    "[User Question]\n{question}\n\n"
    "[The Start of Assistant A's Answer]\n{answer_a}\n[The End of Assistant A's Answer]\n\n"
    "[The Start of Assistant B's Answer]\n{answer_b}\n[The End of Assistant B's Answer]"
)

# VL-RewardBench (prompt.py): "Answer 1" / "Answer 2", ends "Overall Judgment: Answer X is better".
VLRB_TEXT = (
    " You are a highly capable multimodal AI assistant tasked with evaluating answers to visual questions. "
    "Please analyze the following image and question, then determine which of the two provided answers is "
    "better.\n\n"
    "Question: {question}\n\n"
    "Answer 1: {answer_a}\n\n"
    "Answer 2: {answer_b}\n\n"
    "Please evaluate both answers based on the following criteria:\n"
    "1. Accuracy: How well does the answer align with the visual information in the image?\n"
    "2. Completeness: Does the answer fully address all aspects of the question?\n"
    "3. Clarity: Is the answer easy to understand and well-articulated?\n"
    "4. Relevance: Does the answer directly relate to the question and the image?\n\n"
    "After your evaluation, please:\n"
    "1. Explain your reasoning for each criterion.\n"
    "2. Provide an overall judgment on which answer is better (Answer 1 or Answer 2). For example: "
    "Overall Judgment: Answer X is better.\n\n"
    "Your response should be structured and detailed, demonstrating your understanding of both the visual "
    "and textual elements of the task."
)

# R1-Reward (inference/*/r1_reward.py): think, then <answer>1</answer> or <answer>2</answer>.
R1_TEXT = (
    "You are a highly skilled and impartial evaluator tasked with comparing two responses generated by a "
    "Large Multimodal Model for a given question. - Start with a thorough, side-by-side comparative "
    "analysis enclosed within <think> and </think> tags. A tie is not permitted; you must choose a better "
    "option.\n\n"
    "- Conclude with a single numeric choice enclosed within <answer> and </answer> tags:\n"
    '  - Output "1" if Response 1 is better.\n'
    '  - Output "2" if Response 2 is better.\n\n'
    "###### **Input:**  \n"
    "###### [Question]:\n{question}  \n\n"
    "###### [Response 1]:\n{answer_a}  \n\n"
    "###### [Response 2]:\n{answer_b}  \n\n"
    "###### **Output Format (strictly follow):**  \n"
    "<think>Your detailed comparative analysis goes here</think><answer>1/2</answer>"
)

# Ratings mode: each response gets its own 1-10 score; the higher wins, equal is a tie.
RATINGS_TEXT = (
    "Please act as an impartial judge and rate the quality of each of the two responses provided by AI "
    "assistants to the user question and image below. Rate each response on its own merits for "
    "correctness with respect to the image, helpfulness, relevance and level of detail, on a scale of 1 "
    "(very poor) to 10 (excellent). Do not let the order or the length of the responses influence you. "
    "Explain briefly, then give both ratings strictly in this format on the last two lines:\n"
    "Rating A: [[n]]\nRating B: [[n]]\n\n"
    "[User Question]\n{question}\n\n"
    "[The Start of Assistant A's Answer]\n{answer_a}\n[The End of Assistant A's Answer]\n\n"
    "[The Start of Assistant B's Answer]\n{answer_b}\n[The End of Assistant B's Answer]"
)

# MMRB2 (facebookresearch/MMRB2 @ 7ff0552cf298441af5ebbabea634b682ef04afee,
# evaluate/generate_judgements/evaluator_apis/llm_judges/evaluation_prompts.py): one judge
# prompt per task, chosen there by the task type (image for t2i, edit, interleaved, and
# reasoning, also used for text). api_pairwise_evaluator.py sends one user turn of parts:
# the prompt, "[ORIGINAL PROMPT TO MODEL:]", the prompt's text and images, "[RESPONSE A:]",
# A's parts, "[RESPONSE B:]", B's parts; the template below gives the same parts (each
# literal piece trimmed, see the module's docstring; the prompt's parts as its file writes
# them, JudgeTask.prompt_parts). The answer is JSON with "better_response"
# (parsing.parse_mmrb2).
#
# The scoring rubric, the confidence scale and the request for JSON, the same words in
# MMRB2's three prompts for image outputs
MMRB2_SCORING = (
    "**Scoring Rubric:**\n"
    "- Score 6 (A is significantly better): Response A is significantly superior across most criteria\n"
    "- Score 5 (A is marginally better): Response A is noticeably better across several criteria\n"
    "- Score 4 (Unsure or A is negligibly better): Response A is slightly better or roughly equivalent\n"
    "- Score 3 (Unsure or B is negligibly better): Response B is slightly better or roughly equivalent\n"
    "- Score 2 (B is marginally better): Response B is noticeably better across several criteria\n"
    "- Score 1 (B is significantly better): Response B is significantly superior across most criteria\n"
    "\n"
    "**Confidence Assessment:**\n"
    "After your evaluation, assess your confidence in this judgment on a scale of 0.0 to 1.0:\n"
    "\n"
    "**CRITICAL**: Be EXTREMELY conservative with confidence scores. Most comparisons should be in "
    "the 0.2-0.5 range.\n"
    "\n"
    "- **Very High Confidence (0.8-1.0)**: ONLY for absolutely obvious cases where one response is "
    "dramatically better across ALL criteria with zero ambiguity. Use this extremely rarely (less "
    "than 10% of cases).\n"
    "- **High Confidence (0.6-0.7)**: Clear differences but some uncertainty remains. Use sparingly "
    "(less than 20% of cases).\n"
    "- **Medium Confidence (0.4-0.5)**: Noticeable differences but significant uncertainty. This "
    "should be your DEFAULT range.\n"
    "- **Low Confidence (0.2-0.3)**: Very close comparison, difficult to distinguish. Responses are "
    "roughly equivalent or have conflicting strengths.\n"
    "- **Very Low Confidence (0.0-0.1)**: Essentially indistinguishable responses or major "
    "conflicting strengths.\n"
    "\n"
    "**IMPORTANT GUIDELINES**:\n"
    "- DEFAULT to 0.3-0.5 range for most comparisons\n"
    "- Only use 0.6+ when you are absolutely certain\n"
    "- Consider: Could reasonable people disagree on this comparison?\n"
    '- Consider: Are there any strengths in the "worse" response?\n'
    "- Consider: How obvious would this be to a human evaluator?\n"
    "- Remember: Quality assessment is inherently subjective\n"
    "\n"
    "After your reasoning, you will provide a final numerical score, indicate which response is "
    "better, and assess your confidence. You must always output your response in the following "
    "structured JSON format:\n"
    "\n"
)

MMRB2_IMAGE_TEXT = (
    (
        "You are an expert in multimodal quality analysis and generative AI evaluation. Your role is to "
        "act as an objective judge for comparing two AI-generated responses to the same prompt. You "
        "will evaluate which response is better based on a comprehensive rubric.\n"
        "\n"
        "**Important Guidelines:**\n"
        "- Be completely impartial and avoid any position biases\n"
        "- Ensure that the order in which the responses were presented does not influence your decision\n"
        "- Do not allow the length of the responses to influence your evaluation\n"
        "- Do not favor certain model names or types\n"
        "- Be as objective as possible in your assessment\n"
        "- Consider factors such as helpfulness, relevance, accuracy, depth, creativity, and level of detail\n"
        "\n"
        "**Understanding the Content Structure:**\n"
        "- **[ORIGINAL PROMPT TO MODEL:]**: This is the instruction given to both AI models\n"
        "- **[INPUT IMAGE FROM PROMPT:]**: This is the source image provided to both models (if any)\n"
        "- **[RESPONSE A:]**: The first model's generated response (text and/or images)\n"
        "- **[RESPONSE B:]**: The second model's generated response (text and/or images)\n"
        "\n"
        "Your evaluation must be based on a fine-grained rubric that covers the following criteria. For "
        "each criterion, you must provide detailed step-by-step reasoning comparing both responses. You "
        "will use a 1-6 scoring scale.\n"
        "\n"
        "**Evaluation Criteria:**\n"
        "1. **faithfulness_to_prompt:** Which response better adheres to the composition, objects, "
        "attributes, and spatial relationships described in the text prompt?\n"
        "\n"
        "2. **text_rendering:** If either response contains rendered text, which one has better text "
        'quality (spelling, legibility, integration)? If no text is rendered, state "Not Applicable."\n'
        "\n"
        "3. **input_faithfulness:** If an input image is provided, which response better respects and "
        "incorporates the key elements and style of that source image? If no input image is provided, "
        'state "Not Applicable."\n'
        "\n"
        "4. **image_consistency:** If multiple images are generated, which response has better visual "
        "consistency between images (character appearance, scene details)? If no multiple images are "
        'provided, state "Not Applicable."\n'
        "\n"
        "5. **text_image_alignment:** Which response has better alignment between text descriptions and "
        "visual content?\n"
        "\n"
        "6. **text_quality:** If text was generated, which response has better linguistic quality "
        "(correctness, coherence, grammar, tone)?\n"
        "\n"
        "7. **overall_quality:** Which response has better general technical and aesthetic quality, "
        "realism, coherence, and fewer visual artifacts or distortions?\n"
        "\n"
    )
    + MMRB2_SCORING
    + (
        "{\n"
        '    "reasoning": {\n'
        '        "faithfulness_to_prompt": "YOUR REASONING HERE",\n'
        '        "text_rendering": "YOUR REASONING HERE", \n'
        '        "input_faithfulness": "YOUR REASONING HERE",\n'
        '        "image_consistency": "YOUR REASONING HERE",\n'
        '        "text_image_alignment": "YOUR REASONING HERE",\n'
        '        "text_quality": "YOUR REASONING HERE",\n'
        '        "overall_quality": "YOUR REASONING HERE",\n'
        '        "comparison_summary": "YOUR OVERALL COMPARISON SUMMARY HERE"\n'
        "    },\n"
        '    "score": <int 1-6>,\n'
        '    "better_response": "A" or "B",\n'
        '    "confidence": <float 0.0-1.0>,\n'
        '    "confidence_rationale": "YOUR CONFIDENCE ASSESSMENT REASONING HERE"\n'
        "}"
    )
)

MMRB2_EDIT_TEXT = (
    (
        "You are an expert in image editing quality analysis and AI evaluation. Your role is to act as "
        "an objective judge for comparing two AI-generated image editing responses to the same prompt. "
        "You will evaluate which response is better based on a comprehensive rubric specifically "
        "designed for image editing tasks.\n"
        "\n"
        "**Important Guidelines:**\n"
        "- Be completely impartial and avoid any position biases\n"
        "- Ensure that the order in which the responses were presented does not influence your decision\n"
        "- Do not allow the length of the responses to influence your evaluation\n"
        "- Do not favor certain model names or types\n"
        "- Be as objective as possible in your assessment\n"
        "- Focus on image editing specific factors: faithfulness to editing instructions, preservation "
        "of input image elements, and overall editing quality\n"
        "\n"
        "**Understanding the Content Structure:**\n"
        "- **[ORIGINAL PROMPT TO MODEL:]**: This is the image editing instruction given to both AI models\n"
        "- **[INPUT IMAGE FROM PROMPT:]**: This is the source image provided to both models for editing\n"
        "- **[RESPONSE A:]**: The first model's edited image response\n"
        "- **[RESPONSE B:]**: The second model's edited image response\n"
        "\n"
        "Your evaluation must be based on a fine-grained rubric that covers the following criteria. For "
        "each criterion, you must provide detailed step-by-step reasoning comparing both responses. You "
        "will use a 1-6 scoring scale.\n"
        "\n"
        "**Evaluation Criteria:**\n"
        "1. **text_faithfulness:** Which response better adheres to the text editing instruction? "
        "Consider how well each response follows the specific editing instructions (e.g., adding "
        "objects, changing colors, modifying scenes).\n"
        "\n"
        "2. **image_faithfulness:** Which response better respects and incorporates the key elements of "
        "the input image? Consider how well each response preserves important aspects of the original "
        "image (composition, lighting, style, background elements) while making the requested changes.\n"
        "\n"
        "3. **overall_image_quality:** Which response has better general technical and aesthetic "
        "quality, with fewer visual artifacts, distortions, or inconsistencies introduced during the "
        "editing process?\n"
        "\n"
        "4. **text_rendering:** If either response contains rendered text, which one has better text "
        'quality (spelling, legibility, integration with the image)? If no text is rendered, state "Not '
        'Applicable."\n'
        "\n"
    )
    + MMRB2_SCORING
    + (
        "{\n"
        '    "reasoning": {\n'
        '        "text_faithfulness": "YOUR REASONING HERE",\n'
        '        "image_faithfulness": "YOUR REASONING HERE", \n'
        '        "overall_image_quality": "YOUR REASONING HERE",\n'
        '        "text_rendering": "YOUR REASONING HERE",\n'
        '        "comparison_summary": "YOUR OVERALL COMPARISON SUMMARY HERE"\n'
        "    },\n"
        '    "score": <int 1-6>,\n'
        '    "better_response": "A" or "B",\n'
        '    "confidence": <float 0.0-1.0>,\n'
        '    "confidence_rationale": "YOUR CONFIDENCE ASSESSMENT REASONING HERE"\n'
        "}"
    )
)

MMRB2_INTERLEAVED_TEXT = (
    (
        "You are an expert in multimodal interleaved generation quality analysis and AI evaluation. "
        "Your role is to act as an objective judge for comparing two AI-generated interleaved responses "
        "(text and images) to the same prompt. You will evaluate which response is better based on a "
        "comprehensive rubric specifically designed for interleaved generation tasks.\n"
        "\n"
        "**Important Guidelines:**\n"
        "- Be completely impartial and avoid any position biases\n"
        "- Ensure that the order in which the responses were presented does not influence your decision\n"
        "- Do not allow the length of the responses to influence your evaluation\n"
        "- Do not favor certain model names or types\n"
        "- Be as objective as possible in your assessment\n"
        "- Focus on interleaved generation specific factors: faithfulness to instructions, quality of "
        "both text and images, and coherence between modalities\n"
        "\n"
        "**Understanding the Content Structure:**\n"
        "- **[ORIGINAL PROMPT TO MODEL:]**: This is the interleaved generation instruction given to "
        "both AI models\n"
        "- **[INPUT IMAGE FROM PROMPT:]**: This is the source image provided to both models (if any)\n"
        "- **[RESPONSE A:]**: The first model's interleaved response (text and/or images)\n"
        "- **[RESPONSE B:]**: The second model's interleaved response (text and/or images)\n"
        "\n"
        "Your evaluation must be based on a fine-grained rubric that covers the following criteria. For "
        "each criterion, you must provide detailed step-by-step reasoning comparing both responses. You "
        "will use a 1-6 scoring scale.\n"
        "\n"
        "**Evaluation Criteria:**\n"
        "1. **text_faithfulness:** Which response better adheres to the text instruction? Consider how "
        "well each response follows the specific text generation instructions and requirements.\n"
        "\n"
        "2. **image_faithfulness:** Which response better respects and incorporates the key elements of "
        "the input image? Consider how well each response preserves important aspects of the original "
        "image (composition, lighting, style, background elements) while making the requested changes. "
        'If no input image is provided, state "Not Applicable."\n'
        "\n"
        "3. **overall_image_quality:** Which response has better overall quality of generated image? "
        "Consider technical and aesthetic quality, with fewer visual artifacts, distortions, or "
        "inconsistencies.\n"
        "\n"
        "4. **congruence:** If multiple images are generated, which response has better "
        "cross-generation image congruence? Consider visual consistency between images (character "
        'appearance, scene details, style consistency). If no multiple images are provided, state "Not '
        'Applicable."\n'
        "\n"
        "5. **text_image_alignment:** Which response has better generated text-image alignment? "
        "Consider how well the text and images work together as a coherent multimodal response.\n"
        "\n"
        "6. **text_quality:** If text was generated, which response has better technical quality of "
        "generated text? Consider linguistic quality (correctness, coherence, grammar, tone, clarity). "
        'If no text is generated, state "Not Applicable."\n'
        "\n"
        "7. **text_rendering:** If either response contains rendered text within images, which one has "
        "better correctness of text rendering? Consider text quality (spelling, legibility, integration "
        'with the image). If no text is rendered in images, state "Not Applicable."\n'
        "\n"
    )
    + MMRB2_SCORING
    + (
        "{\n"
        '    "reasoning": {\n'
        '        "text_faithfulness": "YOUR REASONING HERE",\n'
        '        "image_faithfulness": "YOUR REASONING HERE",\n'
        '        "overall_image_quality": "YOUR REASONING HERE",\n'
        '        "congruence": "YOUR REASONING HERE",\n'
        '        "text_image_alignment": "YOUR REASONING HERE",\n'
        '        "text_quality": "YOUR REASONING HERE",\n'
        '        "text_rendering": "YOUR REASONING HERE",\n'
        '        "comparison_summary": "YOUR OVERALL COMPARISON SUMMARY HERE"\n'
        "    },\n"
        '    "score": <int 1-6>,\n'
        '    "better_response": "A" or "B",\n'
        '    "confidence": <float 0.0-1.0>,\n'
        '    "confidence_rationale": "YOUR CONFIDENCE ASSESSMENT REASONING HERE"\n'
        "}"
    )
)

MMRB2_REASONING_TEXT = (
    "Please act as an impartial judge and evaluate the quality of the responses provided by two AI "
    "assistants to the user question displayed below. \n"
    "    You should choose the assistant that follows the user's instructions and answers the "
    "user's question better. \n"
    "    Your evaluation should consider factors such as the helpfulness, relevance, accuracy, "
    "depth, and level of detail of their responses.\n"
    "    Begin your evaluation by comparing the two responses and provide a short explanation.\n"
    "    Avoid any position biases and ensure that the order in which the responses were presented "
    "does not influence your decision.\n"
    "    Do not allow the length of the responses to influence your evaluation. Do not favor "
    "certain names of the assistants. Be as objective as possible.\n"
    "\n"
    "After your reasoning, you will provide a final judgement, indicate which response is better. "
    "You must always output your response in the following structured JSON format:\n"
    "\n"
    "{\n"
    '    "reasoning": "YOUR REASONING HERE",\n'
    '    "better_response": "A" or "B"\n'
    "}"
)

MMRB2_LAYOUT = (
    PART_BREAK + "[ORIGINAL PROMPT TO MODEL:]\n{question}\n[RESPONSE A:]\n{answer_a}\n[RESPONSE B:]\n{answer_b}"
)
MMRB2_TEXTS = {
    "t2i": MMRB2_IMAGE_TEXT,
    "edit": MMRB2_EDIT_TEXT,
    "interleaved": MMRB2_INTERLEAVED_TEXT,
    "reasoning": MMRB2_REASONING_TEXT,
}

BUILTIN_TEMPLATES: dict[str, Template] = {
    "mmrb": Template("mmrb", MMRB_TEXT, "brackets"),
    "vlrewardbench": Template("vlrewardbench", VLRB_TEXT, "vlrewardbench"),
    "r1": Template("r1", R1_TEXT, "r1", image_first=True),
    "ratings": Template("ratings", RATINGS_TEXT, "ratings"),
    # a pair of another category (a text answer) gets the reasoning prompt, as MMRB2's "text"
    "mmrb2": Template(
        "mmrb2",
        MMRB2_REASONING_TEXT + MMRB2_LAYOUT,
        "mmrb2",
        by_category=tuple((task, text + MMRB2_LAYOUT) for task, text in MMRB2_TEXTS.items()),
    ),
}


def load_template(path: str | Path, parser: str | None = None) -> Template:
    """A user template: a text file with the placeholders, or a TOML file with ``text``,
    ``parser``, optional ``system``, ``image_first`` and ``by_category`` (a table of texts
    by category: ``[by_category]`` ``t2i = "..."``)."""
    p = Path(path)
    if not p.exists():
        raise InputError([InputProblem(str(p), None, None, "template file not found")])
    if p.suffix == ".toml":
        d = read_table(p, what="template file")
        text = d.get("text")
        if not isinstance(text, str):
            raise InputError([InputProblem(str(p), None, "text", "a template file needs a text string")])
        texts = d.get("by_category", {})
        if not isinstance(texts, dict) or not all(isinstance(v, str) for v in texts.values()):
            raise InputError([InputProblem(str(p), None, "by_category", "expected a table of texts by category")])
        t = Template(
            p.stem,
            text,
            parser or d.get("parser", "brackets"),
            d.get("system"),
            bool(d.get("image_first", False)),
            tuple(texts.items()),
        )
    else:
        t = Template(p.stem, p.read_text(encoding="utf-8"), parser or "brackets")
    for field, body in (("text", t.text), *((f"by_category.{c}", x) for c, x in t.by_category)):
        missing = [ph for ph in PLACEHOLDERS if ph not in body]
        if missing:
            raise InputError(
                [
                    InputProblem(
                        str(p),
                        None,
                        field,
                        f"template lacks {plural(len(missing), 'placeholder')}: {', '.join(missing)}",
                    )
                ]
            )
    try:
        get_parser(t.parser)
    except ValueError as e:
        raise InputError([InputProblem(str(p), None, "parser", str(e))]) from None
    return t


def get_template(name_or_path: str, parser: str | None = None) -> Template:
    if name_or_path in BUILTIN_TEMPLATES:
        t = BUILTIN_TEMPLATES[name_or_path]
        if parser:
            get_parser(parser)
            t = Template(t.name, t.text, parser, t.system, t.image_first, t.by_category)
        return t
    return load_template(name_or_path, parser)
