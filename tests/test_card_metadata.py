"""The card's YAML as the Hub reads it: huggingface_hub's DatasetCard / DatasetCardData, and
datasets' own reading of its dataset_info and configs."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as hs

from curate.benchmark import build, load_rules
from curate.benchmark.card import SIZE_CATEGORIES, metadata, size_category
from curate.benchmark.rules import Rules
from curate.errors import InputError
from tests.support.build_store import RULES, seed_store

CITATION = "@article{doe2026,\n  title = {A Benchmark},\n  author = {Doe, Jane},\n  year = {2026},\n}"


def test_the_card_yaml_reads_back_through_huggingface_hub_and_datasets(sqlite_store, tmp_path):
    import datasets
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard, DatasetCardData

    rules = dataclasses.replace(
        RULES,
        name='fixture: "quoted" benchmark',
        language=("en", "de"),
        tags=("charts", "preference"),
        source_datasets=("org/source-a",),
        citation=CITATION,
    )
    seed_store(sqlite_store)
    out = tmp_path / "bench"
    res = build(sqlite_store, rules, out)
    card = DatasetCard((out / "README.md").read_text(encoding="utf-8"), ignore_metadata_errors=False)
    data = card.data
    assert isinstance(data, DatasetCardData)
    assert data.pretty_name == rules.name and data.license == rules.license
    assert data.language == ["en", "de"] and data.source_datasets == ["org/source-a"]
    assert data.annotations_creators == ["expert-generated"] and data.size_categories == ["n<1K"]
    assert data.task_categories == ["image-text-to-text"]
    assert data.tags == ["multimodal", "reward-modeling", "preference", "mmrb-studio", "charts"]  # once each
    # dataset_info: the features datasets reads from the Parquet file, the split's size
    infos = DatasetInfosDict.from_dataset_card_data(data)
    assert set(infos) == {"default", "annotations"}
    info = infos["default"]
    parquet = datasets.load_dataset(
        "parquet", data_files=str(out / "data" / "test-00000-of-00001.parquet"), cache_dir=str(tmp_path / "c")
    )["train"]
    assert info.features == parquet.features
    assert info.splits["test"].num_examples == len(res.triplets) == len(parquet)
    assert info.download_size == (out / "data" / "test-00000-of-00001.parquet").stat().st_size
    configs = MetadataConfigs.from_dataset_card_data(data)
    assert configs["default"]["data_files"] == [{"split": "test", "path": "data/test-00000-of-00001.parquet"}]
    # the raw labels: a config of their own, read the same way
    raw = "annotations/test-00000-of-00001.parquet"
    assert configs["annotations"]["data_files"] == [{"split": "test", "path": raw}]
    labels = datasets.load_dataset("parquet", data_files=str(out / raw), cache_dir=str(tmp_path / "c"))["train"]
    assert infos["annotations"].features == labels.features
    assert infos["annotations"].splits["test"].num_examples == len(labels) == 33
    # the citation given, verbatim, in a bibtex block; the Hub loading example names the split
    assert f"```bibtex\n{CITATION}\n```" in card.text
    assert 'load_dataset("OWNER/NAME", split="test")' in card.text


def test_without_language_or_sources_the_yaml_says_none_and_the_citation_names_the_dataset():
    meta = metadata(Rules(name="Tiny Bench"), 0)
    assert "language" not in meta and "source_datasets" not in meta and "dataset_info" not in meta
    from curate.benchmark.card import citation_lines

    text = "\n".join(citation_lines(Rules(name="Tiny Bench 2")))
    assert "@misc{tiny_bench_2," in text and "{{Tiny Bench 2}}" in text and "No citation was given" in text


@given(hs.integers(min_value=0, max_value=10**9))
def test_size_category_is_the_bucket_holding_n(n):
    label = size_category(n)
    lows = [low for low, _ in SIZE_CATEGORIES]
    i = [lab for _, lab in SIZE_CATEGORIES].index(label)
    assert lows[i] <= n and (i + 1 == len(lows) or n < lows[i + 1])


def test_the_rules_file_gives_the_card_metadata_and_refuses_a_bad_list(tmp_path):
    good = tmp_path / "rules.toml"
    good.write_text(
        '[card]\nlanguage = ["en"]\ntags = ["charts"]\nsource_datasets = ["org/a"]\ncitation = "@misc{x}"\n',
        encoding="utf-8",
    )
    rules = load_rules(good)
    assert (rules.language, rules.tags, rules.source_datasets, rules.citation) == (
        ("en",),
        ("charts",),
        ("org/a",),
        "@misc{x}",
    )
    assert rules.as_dict()["card"]["language"] == ["en"]
    assert "language" not in Rules().as_dict()["card"]  # a build without them keeps its manifest
    bad = tmp_path / "bad.toml"
    bad.write_text('[card]\nlanguage = "en"\ntags = ["", "x"]\n', encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_rules(bad)
    assert {p.field for p in e.value.problems} == {"card.language", "card.tags"}
