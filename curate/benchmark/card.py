"""The dataset card (README.md) and its plots, both byte-stable for the same inputs."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from string import Template

import yaml

from ..agreement.report import AgreementReport
from ..agreement.summary import (
    RELIABLE,
    THRESHOLDS,
    UNDEFINED,
    alpha_rows,
    estimate_cell,
    field_title,
    ordered_fields,
    undefined_notes,
)
from ..formats import croissant
from ..formats.labels import COLUMN_DESCRIPTIONS as LABEL_COLUMN_DESCRIPTIONS
from ..formats.triplets import COLUMN_DESCRIPTIONS
from ..model import EXAMPLE_SOURCE, Triplet
from ..quality.aggregate import Aggregated
from ..schemes import Scheme, describe, stored_key
from ..wording import percent, plural
from .export import ANNOTATIONS, PARQUET, SPLIT
from .filter import FilterResult
from .rules import Rules

# the card's YAML dataset_info: one config's mapping, or a list of them each naming its config
CardInfo = dict | list[dict]

PLOT_AGREEMENT = "plots/agreement_per_category.png"
PLOT_LABELS = "plots/label_distribution.png"


def _plot_setup():
    # deferred: matplotlib takes 0.6 s to import, and only the card's plots need it
    import matplotlib

    matplotlib.use("Agg", force=True)
    # deferred, as matplotlib above
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "mmrb", "font.size": 11})
    return plt


def _save(fig, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # no Software/date chunks: the same figure gives the same bytes
    fig.savefig(path, format="png", dpi=100, metadata={"Software": None}, bbox_inches="tight")


FIGSIZE = (13, 5.5)  # inches at 100 dpi: about 1300 x 550 pixels before the tight crop


def plot_agreement(report: AgreementReport, path: Path) -> None:
    """Alpha per field over every pair and per category, 95% intervals as error bars; a bar
    without an interval is hatched, an undefined alpha is written, never drawn as 0."""
    plt = _plot_setup()
    # deferred, as matplotlib in _plot_setup
    from matplotlib.patches import Patch

    rows = alpha_rows(report)
    groups = list(dict.fromkeys(r.category for r in rows))
    fields = ordered_fields(report.fields)
    at = {(r.category, r.field): r for r in rows}
    fig, ax = plt.subplots(figsize=FIGSIZE)
    width = 0.8 / max(1, len(fields))
    for k, name in enumerate(fields):
        color = plt.cm.tab10(k % 10)
        for i, g in enumerate(groups):
            r = at.get((g, name))
            x = i + k * width
            if r is None:
                continue
            if r.alpha is None:
                ax.text(x, 0.02, UNDEFINED, rotation=90, ha="center", va="bottom", color=color)
                continue
            yerr = None if r.low is None or r.high is None else [[r.alpha - r.low], [r.high - r.alpha]]
            (bar,) = ax.bar([x], [r.alpha], width, yerr=yerr, capsize=3, color=color)
            if r.low is None:  # no interval: not a certain value
                bar.set_hatch("//")
                bar.set_edgecolor("white")  # the hatch is drawn in the edge colour
    for y, text in THRESHOLDS:
        ax.axhline(y, color="grey", lw=0.9, ls="--" if y == RELIABLE else ":")
        ax.annotate(text, (1.005, y), xycoords=("axes fraction", "data"), va="center", color="dimgrey")
    ax.axhline(0, color="black", lw=0.6)
    ax.set_xticks([i + width * (len(fields) - 1) / 2 for i in range(len(groups))], groups, rotation=15, ha="right")
    ax.set_ylabel("Krippendorff's alpha (95% CI)")
    ax.set_ylim(min(0, ax.get_ylim()[0]), 1.05)
    ax.set_title("Agreement per field and category (hatched: too few pairs for an interval)", pad=34)
    # every field in the legend, also one whose alpha is undefined everywhere
    handles = [Patch(color=plt.cm.tab10(k % 10), label=field_title(f)) for k, f in enumerate(fields)]
    ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=max(1, len(fields)), frameon=False)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


def plot_labels(report: AgreementReport, path: Path) -> None:
    """Submitted labels per value: preference and each response's correctness, side by side."""
    plt = _plot_setup()
    # deferred, as matplotlib in _plot_setup
    from matplotlib.ticker import MaxNLocator

    fields = ordered_fields(report.fields)
    fig, axes = plt.subplots(1, max(1, len(fields)), figsize=FIGSIZE, squeeze=False)
    for ax, name in zip(axes[0], fields, strict=False):  # no field: one empty axis still makes a figure
        vc = report.fields[name].value_counts
        bars = ax.bar(list(vc), list(vc.values()), color="#4c72b0")
        ax.bar_label(bars)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(field_title(name))
        ax.margins(y=0.12)
    axes[0][0].set_ylabel("submitted labels")
    fig.suptitle("Label distribution")
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


def _table(header: list[str], rows: list[list]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    return out


def hub_example() -> list[str]:
    """Loading the published dataset; OWNER/NAME stands for the repository it was published to."""
    return [
        "```python",
        "from datasets import load_dataset",
        "",
        f'ds = load_dataset("OWNER/NAME", split="{SPLIT}")',
        f'labels = load_dataset("OWNER/NAME", "annotations", split="{SPLIT}")',
        "```",
    ]


def load_example() -> list[str]:
    """The card's loading example, a Python block run by the tests as written."""
    return [
        "```python",
        "from datasets import load_dataset, load_from_disk",
        "",
        f'ds = load_dataset("parquet", data_files={{"{SPLIT}": "{PARQUET}"}}, split="{SPLIT}")',
        'same = load_from_disk("hf")',
        f'labels = load_dataset("parquet", data_files={{"{SPLIT}": "{ANNOTATIONS}"}}, split="{SPLIT}")',
        "```",
    ]


METHOD_TEXT = {
    "majority": "the majority rule: a field's value is the unique modal value of its labels (a tie decides "
    "nothing). Reliability below is each annotator's agreement with that majority (their own label included).",
    "dawid-skene": "Dawid-Skene (crowd-kit), which weighs each annotator by an estimated confusion matrix; "
    "gold answers are known labels while it fits and the final value where present. Reliability below is the "
    "annotator's estimated chance of giving the true value, averaged over the estimated class priors.",
    "mace": "MACE (crowd-kit), which estimates how often each annotator answers at random; gold answers are the "
    "final value where present. Reliability below is the posterior probability that the annotator is not "
    "answering at random.",
}


def kept_differ(aggregated: Aggregated, result: FilterResult) -> int:
    """Kept triplets whose chosen response is not the labels' unique majority preference."""
    fa = aggregated.fields.get("preference")
    if fa is None:
        return 0
    return sum(1 for d in result.kept if d.pair.id in fa.majority and fa.majority[d.pair.id] != d.chosen)


def aggregation_summary(aggregated: Aggregated | None, result: FilterResult) -> dict:
    """What build.json records of the aggregation."""
    if aggregated is None:
        return {"method": "majority"}
    return {
        "method": aggregated.method,
        "differ_from_majority": {n: fa.differ for n, fa in aggregated.fields.items()},
        "kept_chosen_differ_from_majority": kept_differ(aggregated, result),
    }


def aggregation_lines(aggregated: Aggregated, result: FilterResult) -> list[str]:
    lines = [
        "## Aggregation",
        "",
        f"Labels of each field were aggregated with {METHOD_TEXT[aggregated.method]} An adjudication, where "
        "there is one, overrides the aggregation. Labels of control tasks (gold pairs mixed into annotators' "
        "queues) count toward no figure here.",
        "",
    ]
    fields = list(aggregated.fields)
    lines += _table(
        ["field", "pairs", "differ from the majority", "decided where the majority was tied", "from gold"],
        [[n, len(fa.final), fa.differ, fa.decided_ties, fa.from_gold] for n, fa in aggregated.fields.items()],
    )
    lines += [
        "",
        "Kept triplets whose chosen response is not the labels' unique majority preference (decided by an "
        f"adjudication, by the correctness task or by the aggregation): {kept_differ(aggregated, result)}.",
        "",
    ]
    people = sorted({a for fa in aggregated.fields.values() for a in fa.reliability})
    if people:
        lines += _table(
            ["annotator"] + [f"{f} reliability" for f in fields],
            [
                [a]
                + [
                    f"{aggregated.fields[f].reliability[a]:.3f}" if a in aggregated.fields[f].reliability else "–"
                    for f in fields
                ]
                for a in people
            ],
        )
    return lines


# The card's fixed text as templates: each $name is a value computed by a small function below
# (a line ending in a backslash goes on in the next: one line of the card); each section that
# depends on the data is a function of its own, card_text joins them and write_card writes.
HEADING = Template(
    """
# $name
"""
)
FILES = Template(
    """$kept (prompt, image, chosen, rejected) triplets kept of $considered considered, built by mmrb-studio.

## Files

- `triplets.jsonl` with `images/`: one triplet a line; image paths are relative to this folder
- `$parquet`: the same rows with images embedded, the `$split` split
- `hf/`: the same rows as a saved Hugging Face dataset
- `multimodal_rewardbench.jsonl`: Multimodal RewardBench layout (`ID, Text, Image, Output1, Output2, Better, Category`)
- `vl_rewardbench.jsonl`: VL-RewardBench layout (`human_ranking` [0, 1] = first response preferred)
- `$croissant`: a Croissant 1.0 description of both configs' Parquet files (fields, types, sha256) and `images/`
- `$annotations`: the raw labels of every considered pair, kept or not (the `annotations` config): one row \
per label with every field of the pair's annotation scheme in the pair's stored order (`ratings`: its other fields \
as JSON), the seconds spent and the guidelines version; annotators are pseudonyms (`annotator-01`, ... in the order \
of their first label); `gold` marks pairs with a gold answer, `control` the labels of control tasks (counted \
nowhere in this card). A pair is in the benchmark when its `pair_id` is a triplet's `id`"""
)
LOADING = Template(
    """
In the $layouts benchmark layouts the chosen response is first for half of the rows and second for the other half \
(seeded, seed $seed; balanced within each category), so position carries no signal.

## Loading

From this folder, with the `datasets` package (each gives the `$split` split; `labels` the raw labels):

$example

From the Hub, once published (`mmrb publish FOLDER OWNER/NAME`; the `configs` above name the split):

$hub_example

## Counts
"""
)
FILTERING = Template(
    """
## Filtering

Pairs considered: $considered (statuses: $statuses). Rules run in order; a pair is counted under the first rule \
that removes it.
"""
)
AGREEMENT = Template(
    """
## Agreement

Over the labels of every considered pair (before filtering), $resamples over pairs (seed $seed), percentile 95% \
intervals; with fewer than $min_pairs that have two or more labels an interval is "[undefined]" (hatched bars in \
the plot). Krippendorff's thresholds: rely on alpha >= .800, .667 to .800 for tentative conclusions only.
"""
)
IMAGES_NOTE = (
    ". Their parts in order are in `chosen_parts` / `rejected_parts` of `triplets.jsonl` "
    '(`{"text": ...}` or `{"image": path}`); `chosen` / `rejected` hold their text with '
    "`[image: images/FILE]` markers naming the build's files (`[image not available: SOURCE]` for an image "
    "missing from the store), as do the benchmark layouts and the Parquet file."
)


def _fill(template: Template, **values: object) -> list[str]:
    """A template's lines with its values in."""
    return template.substitute(values).split("\n")


# the Hub's size buckets (its dataset search filters on them), by their lower bounds
SIZE_CATEGORIES = (
    (0, "n<1K"),
    (1_000, "1K<n<10K"),
    (10_000, "10K<n<100K"),
    (100_000, "100K<n<1M"),
    (1_000_000, "1M<n<10M"),
    (10_000_000, "10M<n<100M"),
    (100_000_000, "100M<n<1B"),
)
TAGS = ("multimodal", "reward-modeling", "preference", "mmrb-studio")


def size_category(n: int) -> str:
    return [label for low, label in SIZE_CATEGORIES if n >= low][-1]


def metadata(rules: Rules, n_triplets: int, dataset_info: CardInfo | None = None) -> dict:
    """The card's YAML as the Hub reads it (huggingface_hub's DatasetCardData keys): a key
    that the rules file does not give (language, source_datasets) is left out, not guessed."""
    meta: dict = {"license": rules.license, "pretty_name": rules.name}
    if rules.language:
        meta["language"] = list(rules.language)
    meta["annotations_creators"] = ["expert-generated"]
    meta["size_categories"] = [size_category(n_triplets)]
    if rules.source_datasets:
        meta["source_datasets"] = list(rules.source_datasets)
    meta["task_categories"] = ["image-text-to-text"]
    meta["tags"] = list(dict.fromkeys([*TAGS, *rules.tags]))
    meta["configs"] = [
        {"config_name": "default", "data_files": [{"split": SPLIT, "path": PARQUET}]},
        {"config_name": "annotations", "data_files": [{"split": SPLIT, "path": ANNOTATIONS}]},
    ]
    if dataset_info:
        meta["dataset_info"] = dataset_info
    return meta


def dataset_info(parquet: Path, annotations: Path | None = None) -> CardInfo | None:
    """The ``dataset_info`` of the card: for each config, the features as ``datasets`` reads
    them from its Parquet file's schema (the export wrote them there), the split's size, the
    file's bytes; one mapping for the ``default`` config alone, else a list naming each
    config. None when there is no Parquet file. No ``num_bytes``: the export does not measure
    it, and a 0 would say a size that is not one."""
    if not parquet.is_file():
        return None
    # deferred: datasets and pyarrow take about 1 s to import; the build has loaded them for its
    # Parquet export already
    import pyarrow.parquet as pq
    from datasets import DatasetInfo, Features, SplitDict, SplitInfo
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCardData

    def info(path: Path) -> DatasetInfo:
        splits = SplitDict()
        splits.add(SplitInfo(name=SPLIT, num_examples=pq.read_metadata(path).num_rows))
        return DatasetInfo(
            features=Features.from_arrow_schema(pq.read_schema(path)),
            splits=splits,
            download_size=path.stat().st_size,
        )

    infos = {"default": info(parquet)}
    if annotations is not None and annotations.is_file():
        infos["annotations"] = info(annotations)
    card = DatasetCardData()
    DatasetInfosDict(infos).to_dataset_card_data(card)
    got = card.to_dict()["dataset_info"]
    configs = [dict(c) for c in (got if isinstance(got, list) else [got])]
    for c in configs:
        c["splits"] = [{k: v for k, v in split.items() if k != "num_bytes"} for split in c["splits"]]
    return configs if isinstance(got, list) else configs[0]


def front_lines(rules: Rules, n_triplets: int = 0, info: CardInfo | None = None) -> list[str]:
    """The YAML block (``metadata``) and the title, then the description."""
    front = yaml.safe_dump(metadata(rules, n_triplets, info), sort_keys=False, allow_unicode=True, width=1000)
    lines = ["---", *front.rstrip("\n").split("\n"), "---", *_fill(HEADING, name=rules.name)]
    return lines + [rules.description, ""] if rules.description else lines


def files_lines(
    triplets: list[Triplet], considered: int, mmrb2_counts: Mapping[str, int] | None, seed: int
) -> list[str]:
    """The count sentence, the files, where the chosen response is placed, how to load."""
    lines = _fill(
        FILES,
        kept=len(triplets),
        considered=plural(considered, "pair"),
        parquet=PARQUET,
        split=SPLIT,
        croissant=croissant.FILE_NAME,
        annotations=ANNOTATIONS,
    )
    if mmrb2_counts:
        n_mmrb2 = sum(mmrb2_counts.values())
        rest = len(triplets) - n_mmrb2
        lines.append(
            "- `mmrb2/`: Multimodal RewardBench 2 layout, one file per task ("
            + ", ".join(f"`{task}.json`: {n}" for task, n in mmrb2_counts.items())
            + "), response images beside them"
            + (
                f"; the other {plural(rest, 'triplet')} (categories that are not MMRB2 tasks) are not in it"
                if rest > 0
                else ""
            )
        )
    layouts = "three" if mmrb2_counts else "two"
    return lines + _fill(
        LOADING,
        layouts=layouts,
        seed=seed,
        split=SPLIT,
        example="\n".join(load_example()),
        hub_example="\n".join(hub_example()),
    )


def mmrb2_refused_lines(refused: Mapping[str, list[str]]) -> list[str]:
    """The MMRB2 tasks left out of its layout, and why (no score is made up from a preference)."""
    if not refused:
        return []
    tasks = ", ".join(f"`{task}` ({plural(len(ids), 'pair')}, e.g. `{ids[0]}`)" for task, ids in refused.items())
    return [
        "",
        f"Not in the MMRB2 layout: {tasks}. Their labels have a preference but no 1-6 score or letter "
        "grade (they were made on another annotation scheme), and MMRB2's file holds each rater's "
        "score: none is made up. The other layouts hold them.",
        "",
    ]


def images_sentence(triplets: list[Triplet]) -> str | None:
    """How many responses hold images, and how many of those images are missing; None: none do."""
    with_images = [parts for t in triplets for parts in (t.chosen_parts, t.rejected_parts) if parts]
    if not with_images:
        return None
    n_images = sum(1 for parts in with_images for p in parts if p.kind == "image")
    gone = sum(1 for parts in with_images for p in parts if p.missing)
    return (
        f"Responses with images: {len(with_images)} of {2 * len(triplets)} (chosen and rejected), "
        f"holding {plural(n_images, 'image')}"
        + (f", {gone} of them missing from the store" if gone else "")
        + IMAGES_NOTE
    )


def counts_lines(
    triplets: list[Triplet],
    n_annotators: int,
    missing_image_triplets: int,
    label_sources: Mapping[str, int] | None = None,
) -> list[str]:
    by_cat = Counter(t.category for t in triplets)
    by_source = Counter(t.source or "(none)" for t in triplets)
    lines = _table(["category", "triplets"], [[c, by_cat[c]] for c in sorted(by_cat)] + [["**all**", len(triplets)]])
    lines += ["", *_table(["source", "triplets"], [[s, n] for s, n in sorted(by_source.items())])]
    lpp = Counter(t.n_labels for t in triplets)
    per_pair = ", ".join(f"{k}: {plural(v, 'pair')}" for k, v in sorted(lpp.items())) or "none"
    lines += ["", f"Annotators: {n_annotators}. Labels per kept pair: {per_pair}."]
    if label_sources:
        made = ", ".join(f"{src} {n}" for src, n in sorted(label_sources.items()))
        lines += ["", f"The kept pairs' labels by where they were made: {made}."]
    if label_sources and label_sources.get(EXAMPLE_SOURCE):
        lines += [
            "",
            f"**Example data:** {plural(label_sources[EXAMPLE_SOURCE], 'label')} of the kept pairs are example "
            f"labels (source `{EXAMPLE_SOURCE}`), made up to show the pipeline, not given by experts: do not "
            "publish or report these triplets as an expert-annotated benchmark.",
        ]
    images = images_sentence(triplets)
    if images:
        lines += ["", images]
    if missing_image_triplets:
        lines += [
            "",
            f"Triplets with an image missing from the store: {missing_image_triplets}; their `images` "
            'list holds only the images that exist (rule `missing_images = "keep"`).',
        ]
    return lines


def rules_sentence(rules: Rules) -> str:
    settings = [f"min_labels = {rules.min_labels}", f"flagged_out = {str(rules.flagged_out).lower()}"]
    settings += [
        f"{f}: {'unanimous' if t.unanimous else f'majority >= {t.share:g}'}" for f, t in sorted(rules.agreement.items())
    ]
    settings += [
        f"correctness_task = {str(rules.correctness_task).lower()}",
        f"adjudication overrides = {str(rules.adjudication).lower()}",
        f"missing_images = {rules.missing_images}",
    ]
    settings[2 + len(rules.agreement) : 2 + len(rules.agreement)] = [
        *(f"{f}: mean at least {d:g} from the midpoint" for f, d in sorted(rules.margin.items())),
        *(f"{f}: alpha in its category >= {a:g}" for f, a in sorted(rules.alpha.items())),
    ]
    return "Rules: " + ", ".join(settings) + "."


PROPOSAL_SHOWN = (
    "Annotators were shown the judges' proposed preference (from `mmrb select`) and asked whether they agree; "
    "a disagreement gives the corrected preference. The chosen response is the proposal where the annotators "
    "agreed, else their correction: it is not independent of the judges."
)


def scheme_lines(schemes: Mapping[str, Scheme], result: FilterResult) -> list[str]:
    """Each annotation scheme the considered pairs were labelled with: its fields (kinds, scale
    point labels, values), how a pair's preference follows (curate.schemes.describe), and for a
    scheme that shows the judges' proposal, that it was shown. Empty when every pair is on the
    default scheme (mmrb), as before schemes."""
    considered = Counter(schemes[d.pair.id] for d in result.decisions if d.pair.id in schemes)
    kept = Counter(schemes[d.pair.id] for d in result.kept if d.pair.id in schemes)
    if all(stored_key(s) == (None, None) for s in considered):
        return []
    lines = ["", "## Annotation schemes", ""]
    for scheme in sorted(considered, key=lambda s: (s.name, s.version)):
        said = describe(scheme)
        lines += [
            f"### {said['title']} (`{scheme.name}`, version {scheme.version})",
            "",
            f"{plural(considered[scheme], 'pair')} considered, {kept[scheme]} kept.",
            "",
        ]
        for f in said["fields"]:
            answers = "; ".join(f["points"]) if "points" in f else ", ".join(f.get("values", []))
            lines.append(
                f"- `{f['name']}` ({f['kind'].replace('_', ' ')}, {f['level']}, {f['required']}): {f['title']}"
                + (f": {answers}" if answers else "")
            )
        lines += ["", f"Preference of a pair: {said['preference']}."]
        if scheme.shows_proposal:
            lines += ["", PROPOSAL_SHOWN]
        lines.append("")
    return lines[:-1]


def filtering_lines(rules: Rules, result: FilterResult) -> list[str]:
    """Pairs removed by each rule per category, the kept ones, the rules' settings."""
    lines = _fill(FILTERING, considered=len(result.decisions), statuses=", ".join(rules.statuses))
    removed = result.removed()
    cats = list(result.considered_per_category())
    rows = [
        [r] + [removed.get(r, {}).get(c, 0) for c in cats] + [sum(removed.get(r, {}).values())] for r in result.rules
    ]
    kept = result.kept_per_category()
    rows.append(["**kept**"] + [kept.get(c, 0) for c in cats] + [sum(kept.values())])
    return lines + _table(["rule"] + cats + ["all"], rows) + ["", rules_sentence(rules)]


def _notes(notes: list[str]) -> list[str]:
    return ["", *(f"- {n}" for n in notes)] if notes else []


def agreement_lines(report: AgreementReport) -> list[str]:
    """The agreement table over every field, and alpha per category, with why a cell is undefined."""
    lines = _fill(
        AGREEMENT,
        resamples=plural(report.resamples, "bootstrap resample"),
        seed=report.seed,
        min_pairs=plural(report.min_pairs, "pair"),
    )
    lines += _table(
        ["field", "level", "pairs", "labels", "alpha [95% CI]", "percent agreement", "Gwet's AC1"],
        [
            [n, f.level, f.n_pairs, f.n_labels] + [estimate_cell(e) for e in (f.alpha, f.percent_agreement, f.ac1)]
            for n, f in report.fields.items()
        ],
    )
    estimates = ((n, e) for n, f in report.fields.items() for e in (f.alpha, f.percent_agreement, f.ac1))
    lines += _notes(undefined_notes(estimates, min_pairs=report.min_pairs))
    if report.categories:
        fields = list(report.fields)
        lines += [
            "",
            *_table(
                ["category"] + [f"{f} alpha" for f in fields],
                [
                    [c] + [estimate_cell(v.fields[f].alpha) if f in v.fields else "no labels" for f in fields]
                    for c, v in report.categories.items()
                ],
            ),
        ]
        alphas = (
            (f"{f} in {c}", v.fields[f].alpha) for c, v in report.categories.items() for f in fields if f in v.fields
        )
        lines += _notes(undefined_notes(alphas, min_pairs=report.min_pairs))
    return lines + ["", f"![agreement per category]({PLOT_AGREEMENT})", "", f"![label distribution]({PLOT_LABELS})", ""]


def length_lines(triplets: list[Triplet]) -> list[str]:
    """Chosen vs rejected length: what a judge preferring length alone would score."""
    lines = ["## Chosen vs rejected length", ""]
    if not triplets:
        return lines + ["No triplets."]
    cl, rl = [len(t.chosen) for t in triplets], [len(t.rejected) for t in triplets]
    longer = sum(c > r for c, r in zip(cl, rl, strict=True))
    lines += _table(
        ["", "mean chars", "median chars", "min", "max"],
        [
            ["chosen", f"{statistics.fmean(cl):.1f}", f"{statistics.median(cl):g}", min(cl), max(cl)],
            ["rejected", f"{statistics.fmean(rl):.1f}", f"{statistics.median(rl):g}", min(rl), max(rl)],
        ],
    )
    return lines + [
        "",
        f"The chosen response is the longer one in {longer} of {plural(len(triplets), 'triplet')} "
        f"({percent(longer / len(triplets))}): a judge that prefers length alone scores that much.",
    ]


def licence_lines(rules: Rules, triplets: list[Triplet]) -> list[str]:
    lines = ["", "## Licence", "", f"License: `{rules.license}`."]
    if rules.license_note:
        lines += ["", rules.license_note]
    sources = sorted({t.source or "(none)" for t in triplets})
    return lines + [
        "Check the licence of every source before redistribution: " + ", ".join(sources) + "." if sources else ""
    ]


def citation_key(name: str) -> str:
    words = "".join(ch if ch.isalnum() else " " for ch in name.lower()).split()
    return "_".join(words) or "benchmark"


def citation_entry(rules: Rules) -> str:
    """The rules file's BibTeX entry (``card.citation``), else an entry naming the dataset and
    the tool, to be replaced by the paper's."""
    return rules.citation.strip() or "\n".join(
        [
            f"@misc{{{citation_key(rules.name)},",
            f"  title = {{{{{rules.name}}}}},",
            "  note = {Expert-annotated benchmark built with mmrb-studio},",
            "}",
        ]
    )


def citation_lines(rules: Rules) -> list[str]:
    """The citation section: ``citation_entry``, said to be a stand-in when none was given."""
    entry = citation_entry(rules)
    lines = ["", "## Citation", ""]
    if not rules.citation.strip():
        lines += ["No citation was given (`card.citation` in the rules file); this entry names the dataset:", ""]
    return lines + ["```bibtex", *entry.split("\n"), "```"]


def card_text(
    *,
    rules: Rules,
    result: FilterResult,
    triplets: list[Triplet],
    report: AgreementReport,
    n_annotators: int,
    missing_image_triplets: int,
    aggregated: Aggregated | None = None,
    mmrb2_counts: Mapping[str, int] | None = None,
    mmrb2_refused: Mapping[str, list[str]] | None = None,
    schemes: Mapping[str, Scheme] | None = None,
    dataset_info: CardInfo | None = None,
    label_sources: Mapping[str, int] | None = None,
) -> str:
    """The card's Markdown. ``mmrb2_counts``: the triplets of each MMRB2 task written in
    MMRB2's layout, ``mmrb2_refused`` its tasks not written (their unscored pairs);
    ``schemes``: each considered pair's annotation scheme; ``dataset_info``: the YAML's
    (``dataset_info(parquet)``), left out when None; ``label_sources``: the kept pairs'
    labels per source (app, labelstudio, import, example)."""
    lines = front_lines(rules, len(triplets), dataset_info)
    lines += files_lines(triplets, len(result.decisions), mmrb2_counts, rules.seed)
    lines += mmrb2_refused_lines(mmrb2_refused or {})
    lines += counts_lines(triplets, n_annotators, missing_image_triplets, label_sources)
    lines += scheme_lines(schemes or {}, result)
    lines += filtering_lines(rules, result)
    if aggregated is not None:
        lines += ["", *aggregation_lines(aggregated, result)]
    lines += agreement_lines(report) + length_lines(triplets) + licence_lines(rules, triplets)
    while lines and not lines[-1]:  # a licence section without sources ends in a blank line
        lines.pop()
    lines += citation_lines(rules)
    return "\n".join(lines).rstrip() + "\n"


def croissant_configs() -> list[croissant.Config]:
    """The configs the Croissant description holds, the card's: the triplets' (``default``) and
    the raw labels' (``annotations``)."""
    return [
        croissant.Config(
            "default",
            PARQUET,
            f"The benchmark's (prompt, images, chosen, rejected) triplets, the {SPLIT} split.",
            COLUMN_DESCRIPTIONS,
            key="id",
        ),
        croissant.Config(
            "annotations",
            ANNOTATIONS,
            "Every label of every pair the build considered, kept or not: one record per label.",
            LABEL_COLUMN_DESCRIPTIONS,
        ),
    ]


def write_croissant(out: Path, rules: Rules, n_triplets: int) -> None:
    """``croissant.json`` beside the card: what the card says of the dataset (name, licence,
    citation, tags, languages) and each config's Parquet file (``croissant_configs``)."""
    about = croissant.About(
        name=rules.name,
        description="\n\n".join(
            x
            for x in (
                rules.description,
                f"{plural(n_triplets, 'expert-annotated (prompt, images, chosen, rejected) triplet')}, built by "
                "mmrb-studio; the dataset card (README.md) says how they were labelled, filtered and agreed on.",
            )
            if x
        ),
        license=rules.license,
        license_note=rules.license_note,
        citation=citation_entry(rules),
        keywords=list(dict.fromkeys([*TAGS, *rules.tags])),
        languages=rules.language,
    )
    croissant.write(out / croissant.FILE_NAME, croissant.describe(out, about, croissant_configs()))


def write_card(out: Path, report: AgreementReport, text: str) -> None:
    """The card (README.md, ``text`` from ``card_text``) and its plots in ``out``."""
    plot_agreement(report, out / PLOT_AGREEMENT)
    plot_labels(report, out / PLOT_LABELS)
    (out / "README.md").write_text(text, encoding="utf-8")
