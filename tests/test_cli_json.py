"""`--json` of the commands docs/json.md lists: each prints one JSON document whose top-level keys
are exactly those docs/json.md lists for the command."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from curate.cli import main
from tests.support.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"


def documented() -> dict[str, set[str]]:
    """command (e.g. "select", "gold import") -> the keys of its section of docs/json.md."""
    text = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    out: dict[str, set[str]] = {}
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        m = re.match(r"`mmrb (.+) --json`", section)
        assert m, section[:60]
        # a section may name another's keys, alone ("The keys of `mmrb X --json`.") or with its own (", and:")
        same = re.search(r"^The keys of `mmrb (.+) --json`(?:\.|, and:)$", section, flags=re.M)
        own = set(re.findall(r"^\| `(\w+)` \|", section, flags=re.M))
        out[m.group(1)] = (out[same.group(1)] if same else set()) | own
    return out


def printed(argv: list[str], capsys) -> tuple[int, dict]:
    rc = main(argv)
    out = capsys.readouterr().out
    return rc, json.loads(out)  # one document, nothing else on stdout


@pytest.fixture(scope="module")
def docs() -> dict[str, set[str]]:
    return documented()


def test_every_documented_command_is_tested_here(docs):
    assert set(docs) == {
        *("status", "evaluate", "score", "quality", "agreement", "gold list", "gold stats", "audit", "scheme"),
        *("bestofn", "validity"),
        *("select", "select --duplicates-only", "sample", "gold import", "gold derive", "build"),
        *("ingest items", "ingest pairs", "pair", "assign", "leaderboard"),
        *("labels import", "export labels", "publish", "gold qualify", "gold resume", "annotators list"),
        *("labelstudio push", "labelstudio pull"),  # tested in tests/test_labelstudio.py (a real server)
        "guidelines list",
    }
    assert all(len(keys) >= 1 for keys in docs.values())


def test_sample_select_gold_and_build_print_their_documented_keys(docs, tmp_path, capsys):
    db = ["--db", str(tmp_path / "s.db")]
    assert main(["ingest", "items", str(SAMPLE / "items.jsonl"), "--allow-missing-images", *db]) == 0
    capsys.readouterr()
    with FakeOpenAI(lambda req: "Overall Judgment: Answer 1 is better.") as srv:
        models = tmp_path / "models.toml"
        models.write_text(f'[[models]]\nname = "m"\nbase_url = "{srv.url}"\nmodel = "m"\n')
        rc, sampled = printed(["sample", "--models", str(models), "--json", *db], capsys)
        assert rc == 0 and set(sampled) == docs["sample"]
        assert sampled["complete"] and sampled["done"] == sampled["models"]["m"]["done"] > 0
        assert main(["pair", "--strategy", "correct_incorrect", *db]) == 0
        judges = tmp_path / "judges.toml"
        judges.write_text(
            "".join(f'[[models]]\nname = "{j}"\nbase_url = "{srv.url}"\nmodel = "{j}"\n' for j in ("a", "b"))
        )
        capsys.readouterr()
        rc, selected = printed(["select", "--judges", str(judges), "--json", "--allow-missing-images", *db], capsys)
        assert rc == 0 and set(selected) == docs["select"]
        assert selected["complete"] and selected["n"] == 2 and set(selected["judge_runs"]) == {"a", "b"}

    rc, derived = printed(["gold", "derive", "--from", "reference", "--json", *db], capsys)
    assert rc == 0 and set(derived) == docs["gold derive"]
    assert [r["source"] for r in derived["reports"]] == ["reference"] and derived["reports"][0]["written"] > 0
    gold = tmp_path / "gold.csv"
    pair_id = _a_pair(tmp_path / "s.db")
    gold.write_text(f"pair_id,preference\n{pair_id},first\n")
    rc, imported = printed(["gold", "import", str(gold), "--json", *db], capsys)
    assert rc == 0 and set(imported) == docs["gold import"] and imported["written"] == 1
    assert set(derived["reports"][0]) == docs["gold import"]

    _label_one(tmp_path / "s.db", pair_id)  # a build of no triplet is an error (NoTriplets)
    lenient = tmp_path / "rules.toml"
    lenient.write_text("[filter]\nmin_labels = 1\ncorrectness_task = false\nadjudication = false\n")
    rules = ["--rules", str(lenient)]
    rc, dry = printed(["build", *rules, "--dry-run", "--json", *db], capsys)
    assert rc == 0 and dry["dry_run"] is True
    assert set(dry) == {"dry_run", "rules", "considered", "removed", "kept"} < docs["build"]
    rc, built = printed(["build", *rules, "--out", str(tmp_path / "out"), "--json", *db], capsys)
    assert rc == 0 and set(built) == docs["build"] and built["dry_run"] is False and built["triplets"] == 1
    assert {k: built[k] for k in dry if k != "dry_run"} == {k: dry[k] for k in dry if k != "dry_run"}
    assert sum(built["considered"].values()) == sum(built["kept"].values()) + sum(
        n for per in built["removed"].values() for n in per.values()
    )


def test_select_duplicates_only_prints_its_documented_keys_and_the_text_s_groups(docs, tmp_path, capsys):
    db = ["--db", str(tmp_path / "s.db")]
    assert main(["ingest", "items", str(SAMPLE / "items.jsonl"), "--allow-missing-images", *db]) == 0
    capsys.readouterr()
    assert main(["select", "--duplicates-only", *db]) == 0
    text = capsys.readouterr().out.splitlines()
    rc, dups = printed(["select", "--duplicates-only", "--json", "--phash-distance", "4", *db], capsys)
    assert rc == 0 and set(dups) == docs["select --duplicates-only"]
    n_items = sum(1 for line in (SAMPLE / "items.jsonl").read_text(encoding="utf-8").splitlines() if line.strip())
    assert dups["items"] == n_items and dups["max_distance"] == 4
    # the same groups as the text's lines ("  image: a, b duplicate c"), nothing judged
    groups = {(g["kind"], g["keep"], tuple(g["duplicates"])) for g in dups["duplicates"]}
    listed = {(k, keep, tuple(ids.split(", "))) for k, ids, keep in (_group(line) for line in text[1:])}
    assert groups == listed and dups["duplicate_items"] == sum(len(g[2]) for g in groups) > 0
    from curate.store import Store

    with Store(str(tmp_path / "s.db")) as s:
        assert not s.judge_runs()  # nothing judged


def _group(line: str) -> tuple[str, str, str]:
    m = re.fullmatch(r"  (\w+): (.+) duplicate (\S+)", line)
    assert m, line
    return m.group(1), m.group(2), m.group(3)


def test_ingest_pair_and_assign_print_their_documented_keys(docs, tmp_path, capsys):
    db = ["--db", str(tmp_path / "s.db")]
    ingest = ["ingest", "items", str(SAMPLE / "items.jsonl"), "--allow-missing-images", "--json"]
    rc, items = printed([*ingest, *db], capsys)
    assert rc == 0 and set(items) == docs["ingest items"] and items["format"] == "items" and items["items"] > 0
    assert items["images_missing"] >= len(items["missing_examples"]) > 0  # the sample has an image missing
    pairs_file = ROOT / "tests" / "fixtures" / "ingest" / "vlrewardbench_text.jsonl"
    rc, pairs = printed(["ingest", "pairs", str(pairs_file), "--format", "vlrewardbench-text", "--json", *db], capsys)
    assert rc == 0 and set(pairs) == docs["ingest pairs"] and pairs["pairs"] > 0

    rc, paired = printed(["pair", "--json", *db], capsys)
    assert rc == 0 and set(paired) == docs["pair"] and paired["created"] > 0
    assert paired["created"] == sum(c["pairs"] for c in paired["categories"].values())
    for c in paired["categories"].values():  # undefined without a decided pair, not 0
        decided = c["chosen_longer"] + c["chosen_shorter"]
        assert c["longer_wins"] == (c["chosen_longer"] / decided if decided else None)

    rc, assigned = printed(["assign", "-k", "2", "--annotators", "a,b", "--json", *db], capsys)
    assert rc == 0 and set(assigned) == docs["assign"] and assigned["annotators"] == ["a", "b"]
    assert assigned["created"] == sum(assigned["load"].values()) == 2 * assigned["pairs"] > 0
    rc, again = printed(["assign", "-k", "2", "--annotators", "a,b", "--json", *db], capsys)
    assert rc == 0 and again["created"] == 0 and again["load"] == assigned["load"]


def test_leaderboard_prints_its_documented_keys_and_the_csv_figures(docs, tmp_path, capsys):
    import csv

    from mmrb_eval.leaderboard import render
    from tests.test_leaderboard import reports

    files = []
    for r in reports():  # judges "steady", "biased", "silent" (no verdict) and "hasty" (incomplete)
        files.append(tmp_path / f"{r['judge']}.json")
        files[-1].write_text(json.dumps(r))
    rc, board = printed(["leaderboard", *map(str, files), "--json"], capsys)
    assert rc == 0 and set(board) == docs["leaderboard"] and board["incomplete"] == ["hasty"]
    rows = list(csv.DictReader(render(reports(), "csv").splitlines()))
    assert [r["judge"] for r in board["rows"]] == [r["judge"] for r in rows]
    for row, line in zip(board["rows"], rows, strict=True):
        assert str(row["rank"] or "") == line["rank"]
        for g in ("overall", *board["categories"]):
            fig = row[g] if g == "overall" else row["categories"][g]
            assert str(fig["accuracy"] if fig["accuracy"] is not None else "") == line[f"{g}_acc"]
            assert str(fig["ci"][0] if fig["ci"] else "") == line[f"{g}_ci_low"]
    silent = next(r for r in board["rows"] if r["judge"] == "silent")
    assert silent["overall"]["accuracy"] is None and silent["overall"]["ci"] is None  # undefined, not 0
    out = tmp_path / "board.json"
    assert main(["leaderboard", *map(str, files), "--format", "json", "--output", str(out)]) == 0
    assert json.loads(out.read_text()) == board


def test_labels_gold_qualification_and_accounts_print_their_documented_keys(docs, tmp_path, capsys):
    db = ["--db", str(tmp_path / "s.db")]
    assert main(["ingest", "items", str(SAMPLE / "items.jsonl"), "--allow-missing-images", *db]) == 0
    assert main(["pair", "--strategy", "correct_incorrect", *db]) == 0
    capsys.readouterr()
    pair_id = _a_pair(tmp_path / "s.db")
    labels = tmp_path / "labels.csv"
    labels.write_text(f"pair_id,annotator,preference\n{pair_id},ann,first\n")
    rc, imported = printed(["labels", "import", str(labels), "--json", *db], capsys)
    assert rc == 0 and set(imported) == docs["labels import"] and imported == {"labels": 1, "annotators": 1, "pairs": 1}
    out = tmp_path / "out.jsonl"
    rc, exported = printed(["export", "labels", "--out", str(out), "--json", *db], capsys)
    assert rc == 0 and set(exported) == docs["export labels"] and exported["out"] == str(out)
    assert exported["labels"] == len(out.read_text().splitlines()) == 1 and exported["real_names"] is False

    gold = tmp_path / "gold.csv"
    gold.write_text(f"pair_id,preference\n{pair_id},first\n")
    assert main(["gold", "import", str(gold), *db]) == 0
    ids = tmp_path / "qualify.txt"
    ids.write_text(f"{pair_id}\n{pair_id}\n")  # a repeated id counts once
    capsys.readouterr()
    rc, qualify = printed(["gold", "qualify", str(ids), "--min-score", "0.5", "--json", *db], capsys)
    assert rc == 0 and set(qualify) == docs["gold qualify"] and qualify == {"pairs": 1, "min_score": 0.5}

    from curate.store import Store

    with Store(str(tmp_path / "s.db")) as s:
        s.update_annotator("ann", paused="too many control tasks failed", qualification="failed")
    rc, resumed = printed(["gold", "resume", "ann", "--json", *db], capsys)
    assert rc == 0 and set(resumed) == docs["gold resume"]
    assert resumed == {"annotator": "ann", "was_paused": "too many control tasks failed", "qualification": "passed"}

    rc, assigned = printed(["assign", "-k", "1", "--annotators", "ann", "--json", *db], capsys)
    rc, accounts = printed(["annotators", "list", "--json", *db], capsys)
    assert rc == 0 and set(accounts) == docs["annotators list"]
    [ann] = accounts["annotators"]
    assert ann["name"] == "ann" and ann["active"] is True and ann["has_password"] is False
    assert ann["assigned"] == assigned["load"]["ann"] > ann["labelled"] >= 0
    assert main(["annotators", "list", *db]) == 0  # the text shows the same figures
    text = capsys.readouterr().out
    assert f"{ann['labelled']}/{ann['assigned']} labelled  (no password: cannot sign in)" in text


def test_guidelines_list_prints_its_documented_keys(docs, tmp_path, capsys):
    db = ["--db", str(tmp_path / "s.db")]
    assert main(["ingest", "items", str(SAMPLE / "items.jsonl"), "--allow-missing-images", *db]) == 0
    capsys.readouterr()
    rc, listed = printed(["guidelines", "list", "--json", *db], capsys)
    assert rc == 0 and listed == {"versions": []}  # none yet: an empty list, not a sentence
    texts = ("# One\n", "# Two, longer\n")
    for text in texts:
        (tmp_path / "g.md").write_text(text)
        assert main(["guidelines", "set", str(tmp_path / "g.md"), *db]) == 0
    capsys.readouterr()
    rc, listed = printed(["guidelines", "list", "--json", *db], capsys)
    assert rc == 0 and set(listed) == docs["guidelines list"]
    assert [(v["version"], v["characters"]) for v in listed["versions"]] == [(2, len(texts[1])), (1, len(texts[0]))]
    assert all(v["author"].startswith("cli") and v["created_at"] for v in listed["versions"])


def test_status_prints_its_documented_keys_and_the_text_s_figures(docs, tmp_path, capsys):
    db = ["--db", str(tmp_path / "s.db")]
    assert main(["ingest", "items", str(SAMPLE / "items.jsonl"), "--allow-missing-images", *db]) == 0
    assert main(["pair", "--strategy", "correct_incorrect", *db]) == 0
    _label_one(tmp_path / "s.db", _a_pair(tmp_path / "s.db"))
    capsys.readouterr()
    rc, st = printed(["status", "--json", *db], capsys)
    assert rc == 0 and set(st) == docs["status"] and st["backend"] == "sqlite"
    assert st["stages"]["labels"] == sum(c["labels"] for c in st["categories"].values()) == 1
    assert st["labels_per_pair"]["1"] == 1 and st["label_sources"] == {"app": 1}
    assert st["stages"]["pairs"] == sum(st["pairs_by_status"].values()) == sum(st["labels_per_pair"].values()) > 0
    assert st["images"]["missing"] == len(st["missing_examples"]) > 0 and st["broken_files"] == 0
    assert main(["status", *db]) == 0
    text = capsys.readouterr().out
    assert re.search(rf"^  pairs +{st['stages']['pairs']}  \(", text, flags=re.M)


def test_evaluate_and_score_print_their_documented_keys(docs, tmp_path, capsys):
    ds = tmp_path / "d.jsonl"
    rows = [{"id": f"t{i}", "prompt": "p", "chosen": "a", "rejected": "b", "category": "c"} for i in range(4)]
    ds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = ["--db", str(tmp_path / "s.db")]
    once = {"scaling"}  # only a run of several samples per pair has it
    with FakeOpenAI(lambda req: "Overall Judgment: Answer 1 is better.") as srv:
        judge = tmp_path / "judge.toml"
        judge.write_text(f'name = "j"\nbase_url = "{srv.url}"\nmodel = "m"\ntemplate = "mmrb"\n')
        exported = tmp_path / "judgments.jsonl"
        argv = ["evaluate", "--dataset", str(ds), "--judge", str(judge), "--bootstrap", "20", "--quiet", "--json", *db]
        rc, report = printed([*argv, "--run", "one", "--export", str(exported)], capsys)
        assert rc == 0 and set(report) == docs["evaluate"] - once and report["run"] == "one"
        assert report["run_info"]["sent"] == report["run_info"]["planned"] == report["judgments"] == len(rows)
        assert report["run_health"]["complete"] is report["complete"] is True
        rc, sampled = printed([*argv, "--run", "two", "--samples", "2", "--order", "random"], capsys)
        assert rc == 0 and set(sampled) == docs["evaluate"] and [p["k"] for p in sampled["scaling"]] == [1, 2]

    rc, scored = printed(["score", "--run", "one", "--bootstrap", "20", "--json", *db], capsys)
    assert rc == 0 and set(scored) == docs["score"] - once == set(report) - {"run", "run_info"}
    assert {k: scored[k] for k in ("overall", "categories", "run_health")} == {
        k: report[k] for k in ("overall", "categories", "run_health")
    }
    from_file = ["score", "--judgments", str(exported), "--format", "mmrb-studio", "--dataset", str(ds)]
    rc, filed = printed([*from_file, "--bootstrap", "20", "--json"], capsys)
    assert rc == 0 and set(filed) == docs["score"] - once - {"run_health"}  # no stored run, no health
    assert filed["overall"] == report["overall"]


@pytest.fixture(scope="module")
def labelled(tmp_path_factory) -> list[str]:
    """The sample labelled by its annotators, with gold and one careless annotator, as
    `--db`/`--images` options (tests/support/quality_sample.py); the tests only read it."""
    from tests.support.quality_sample import quality_sample

    info = quality_sample(tmp_path_factory.mktemp("labelled") / "sample.db")
    return ["--db", info.db, "--images", info.images]


def test_quality_prints_its_documented_keys_and_the_text_s_alerts(docs, labelled, capsys):
    rc, report = printed(["quality", "--json", "--quiet", *labelled], capsys)
    assert rc == 0 and set(report) == docs["quality"] - {"aggregation"}  # only with --aggregate
    assert report["alerts"] and {a["annotator"] for a in report["alerts"]} <= set(report["annotators"])
    assert all(set(per) <= set(report["annotators"]) for per in report["fields"].values())
    assert set(report["bias"]) == {"annotators", "alerts", "limits", "fast_rule"}
    assert main(["quality", "--quiet", *labelled]) == 0
    assert f"Alerts: {len(report['alerts'])}" in capsys.readouterr().out
    rc, aggregated = printed(["quality", "--json", "--quiet", "--aggregate", "dawid-skene", *labelled], capsys)
    assert rc == 0 and set(aggregated) == docs["quality"] and aggregated["aggregation"]["method"] == "dawid-skene"
    assert set(aggregated["aggregation"]["fields"]) == set(report["fields"])


def test_agreement_prints_its_documented_keys(docs, labelled, capsys):
    argv = ["agreement", "--json", "--resamples", "20", *labelled]
    rc, report = printed(argv, capsys)
    assert rc == 0 and set(report) == docs["agreement"] - {"categories", "reliability"}  # each only when asked
    assert report["n_labels"] == sum(f["n_labels"] for f in report["fields"].values()) > 0
    for name, f in report["fields"].items():  # the per-pair rows add up to the field's counts
        rows = [r for r in report["pairs"] if r["field"] == name]
        assert len(rows) == f["n_pairs"] == sum(f["labels_per_pair"].values())
        assert sum(r["n_labels"] for r in rows) == f["n_labels"]
    rc, full = printed([*argv, "--category", "--reliability"], capsys)
    assert rc == 0 and set(full) == docs["agreement"]
    assert set(full["reliability"]) == docs["quality"] - {"bias", "aggregation"}
    assert {k: full[k] for k in report} == report  # the same figures, the same seed


def test_gold_list_prints_a_documented_object_per_line_and_gold_stats_its_keys(docs, labelled, capsys):
    assert main(["gold", "list", "--json", *labelled]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]  # one object per line
    assert rows and all(set(r) == docs["gold list"] for r in rows)
    assert [r["pair_id"] for r in rows] == sorted({r["pair_id"] for r in rows})  # one per pair, in id order
    rc, stats = printed(["gold", "stats", "--json", *labelled], capsys)
    assert rc == 0 and set(stats) == docs["gold stats"]
    assert stats["pairs"] == len(rows) == sum(stats["by_source"].values()) == sum(stats["by_category"].values())
    assert stats["by_source"] == dict(Counter(r["source"] for r in rows))
    assert stats["by_field"] == {f: n for f in stats["per_field_values"] if (n := sum(1 for r in rows if r[f]))}
    assert stats["per_field_values"] == {
        f: dict(Counter(r[f] for r in rows if r[f])) for f in ("preference", "correctness_first", "correctness_second")
    }


def test_audit_prints_a_documented_object_per_line(docs, tmp_path, capsys):
    db = ["--db", str(tmp_path / "s.db")]
    assert main(["ingest", "items", str(SAMPLE / "items.jsonl"), "--allow-missing-images", *db]) == 0
    assert main(["pair", "--strategy", "correct_incorrect", *db]) == 0
    for text in ("# One\n", "# Two\n"):
        (tmp_path / "g.md").write_text(text)
        assert main(["guidelines", "set", str(tmp_path / "g.md"), *db]) == 0
    assert main(["assign", "-k", "1", "--annotators", "ann", *db]) == 0
    capsys.readouterr()
    assert main(["audit", "--json", *db]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]  # one object per line
    assert rows and all(set(r) == docs["audit"] for r in rows)
    assert [r["id"] for r in rows] == sorted((r["id"] for r in rows), reverse=True)  # newest first
    assert [r["what"] for r in rows if r["what"] in ("assign", "guidelines.set")] == ["assign", *2 * ["guidelines.set"]]
    assert main(["audit", *db]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(rows)  # the text has a line per entry too
    assert main(["audit", "--json", "--what", "guidelines", *db]) == 0  # a family: the same lines, filtered
    filtered = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert filtered == [r for r in rows if r["what"] == "guidelines.set"] and len(filtered) == 2


def test_scheme_prints_the_built_in_names_or_a_scheme_s_documented_keys(docs, tmp_path, capsys):
    from curate.schemes import BUILT_IN

    rc, listed = printed(["scheme", "--json"], capsys)  # without a scheme: name -> title
    assert rc == 0 and listed == {name: s.title for name, s in BUILT_IN.items()}
    for name in BUILT_IN:
        rc, described = printed(["scheme", name, "--json"], capsys)
        assert rc == 0 and set(described) == docs["scheme"] and described["name"] == name
        assert [f["name"] for f in described["fields"]] == [f.name for f in BUILT_IN[name].fields]
    own = tmp_path / "mine.toml"  # a file's scheme prints the same keys
    own.write_text(
        'name = "mine"\ntitle = "Mine"\n[[field]]\nname = "preference"\nkind = "choice"\n'
        'title = "Better?"\nvalues = ["first", "second", "tie"]\nsides = true\n'
        '[preference]\nrule = "field"\nfield = "preference"\n'
    )
    rc, described = printed(["scheme", str(own), "--json"], capsys)
    assert rc == 0 and set(described) == docs["scheme"]
    assert described["fields"][0]["values"] == ["first", "second", "tie"]


def test_bestofn_prints_its_documented_keys(docs, tmp_path, capsys):
    from curate.store import Store
    from tests.test_bestofn_run import fill, judge_file, p_judge

    db = ["--db", str(tmp_path / "s.db"), "--images", str(tmp_path / "images")]
    with Store(str(tmp_path / "s.db"), images=tmp_path / "images") as store:
        truth = fill(store, 4)
    with FakeOpenAI(p_judge(truth, 1.0)) as srv:
        argv = ["bestofn", "--judge", judge_file(tmp_path, srv.url), "--resamples", "20", "--quiet", "--json", *db]
        rc, report = printed(argv, capsys)
        assert rc == 0 and set(report) == docs["bestofn"] - {"curve"}  # only with --curve
        rc, curved = printed([*argv, "--curve"], capsys)
    assert rc == 0 and set(curved) == docs["bestofn"] and curved["curve"][-1]["overall"] == curved["overall"]
    assert report["complete"] and report["correctness"]["items"] == {"reference": report["overall"]["items"]} == {
        "reference": 4
    }
    assert [g["group"] for g in report["categories"]] == ["count", "math"]
    assert set(report["overall"]["baselines"]) == {"random", "first", "majority", "oracle"}
    assert {k: curved[k] for k in ("overall", "categories")} == {k: report[k] for k in ("overall", "categories")}


def test_validity_prints_its_documented_keys(docs, tmp_path, capsys):
    from curate.store import Store
    from tests.test_validity import benchmark, fill, judged, p_answers

    db = str(tmp_path / "s.db")
    with Store(db, images=tmp_path / "images") as store:
        truth = fill(store, 8)
    judged(tmp_path, db, truth, benchmark(tmp_path / "bench", 8), {f"p{p}": p_answers(truth, p) for p in (0.6, 0.8, 1)})
    capsys.readouterr()
    argv = ["validity", "--resamples", "50", "--json", "--db", db, "--images", str(tmp_path / "images")]
    rc, report = printed(argv, capsys)
    assert rc == (0 if report["complete"] else 1) and set(report) == docs["validity"]
    assert [j["judge"] for j in report["judges"]] == ["p0.6", "p0.8", "p1"] and all(j["used"] for j in report["judges"])
    assert [g["group"] for g in report["validity"]] == ["overall", "count", "math"]
    assert report["validity"][0]["judges"] == 3 and report["left_out"] == []
    out = tmp_path / "v.json"
    assert main([*argv, "--output", str(out)]) == rc and json.loads(out.read_text()) == report


@pytest.fixture
def hub(monkeypatch):
    from tests.support.fake_hub import FakeHub

    with FakeHub(token="hf_secret") as fake:
        monkeypatch.setenv("HF_ENDPOINT", fake.url)
        monkeypatch.setenv("HF_TOKEN", "hf_secret")
        yield fake


def test_publish_and_its_dry_run_print_their_documented_keys(docs, hub, tmp_path, capsys):
    from tests.test_publish import built

    folder = built(tmp_path / "b")
    on_disk = {p.relative_to(folder).as_posix(): p.stat().st_size for p in folder.rglob("*") if p.is_file()}
    rc, dry = printed(["publish", str(folder), "team/bench", "--dry-run", "--json"], capsys)
    assert rc == 0 and hub.requests == [] and dry["dry_run"] is True
    assert set(dry) == {"dry_run", "repo_id", "revision", "files", "bytes"} < docs["publish"]
    assert {f["path"]: f["size"] for f in dry["files"]} == on_disk and dry["bytes"] == sum(on_disk.values())
    rc, sent = printed(["publish", str(folder), "team/bench", "--revision", "v1", "--json"], capsys)
    assert rc == 0 and set(sent) == docs["publish"] and sent["dry_run"] is False and sent["revision"] == "v1"
    assert {k: sent[k] for k in ("files", "bytes")} == {k: dry[k] for k in ("files", "bytes")}
    [commit] = hub.commits
    assert set(commit.files) == set(on_disk) and "team/bench" in sent["repo_url"]


def _label_one(db: Path, pair_id: str) -> None:
    from curate import schemes
    from curate.model import Annotator
    from curate.store import Store

    scheme = schemes.BUILT_IN[schemes.DEFAULT]
    values = {"correctness_first": "correct", "correctness_second": "incorrect", "preference": "first"}
    with Store(str(db)) as s:
        s.add_annotator(Annotator("ann"))
        s.save_label(schemes.to_label(scheme, pair_id, "ann", values, scheme_version=scheme.version))


def _a_pair(db: Path) -> str:
    from curate.store import Store

    with Store(str(db)) as s:
        return s.pairs()[0].id
