"""curate/seeding.py must give every call site the exact value it hashed before the helper
existed: built benchmark files, Label Studio sides, stored judge orders, ingested pair
orientation and published intervals depend on them. Each expected value below is the
inline expression that site used."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from curate import seeding

part = st.one_of(st.text(max_size=12), st.integers(min_value=-(10**6), max_value=10**6))
parts = st.lists(part, min_size=1, max_size=4)
text = st.text(max_size=20)


def _sha(s: str) -> bytes:
    return hashlib.sha256(s.encode()).digest()


@given(parts)
def test_unit_and_stable_hash(ps):
    # assign.seeded_unit and agreement.stats.stable_seed
    h = _sha("\x1f".join(map(str, ps)))
    assert seeding.unit(*ps) == int.from_bytes(h[:8], "big") / 2**64
    assert seeding.stable_hash(*ps) == int.from_bytes(h[:8], "big")
    assert 0 <= seeding.unit(*ps) < 1


@given(parts)
def test_colon_coin(ps):
    # judging.order.coin, labelstudio.push.left_side, mmrb_eval.datasets canonical order (all but
    # the first now in curate/sides.py)
    assert int(seeding.coin(*ps, sep=":")) == _sha(":".join(map(str, ps)))[0] & 1


@given(st.integers(0, 10**6), text)
def test_bootstrap_seed(seed, name):
    # mmrb_eval.scoring._rng
    want = int.from_bytes(_sha(f"{seed}:{name}")[:8], "big")
    assert seeding.stable_hash(seed, name, sep=":") == want


@given(st.lists(text, min_size=1, max_size=4), st.integers(1, 20))
def test_nul_terminated_id_hash(ps, n):
    # ingest.common.stable_hash (now id_hash) and seeded_swap (now sides.imported_chosen_first)
    h = hashlib.sha256()
    for p in ps:
        h.update(p.encode("utf-8"))
        h.update(b"\x00")
    assert seeding.hex_hash(*ps, "", sep="\x00", n=n) == h.hexdigest()[:n]
    assert seeding.coin(*ps, "", sep="\x00", nbytes=4) == (int(h.hexdigest()[:8], 16) % 2 == 1)


@given(st.integers(0, 99), text, text)
def test_sort_key_and_ids(seed, a, b):
    # build.export.chosen_first (now sides.export_chosen_first) sorts by the hex digest; pairing/sampling ids
    def old_key(t: str) -> str:
        return hashlib.sha256(f"{seed}\x1f{t}".encode()).hexdigest()

    assert (seeding.digest(seed, a) < seeding.digest(seed, b)) == (old_key(a) < old_key(b))
    assert seeding.hex_hash("i", a, b, n=20) == hashlib.sha256(f"i\x1f{a}\x1f{b}".encode()).hexdigest()[:20]


def test_ingest_and_labelstudio_call_sites():
    from annotate.labelstudio.push import left_side
    from curate.ingest.common import id_hash
    from curate.sides import imported_chosen_first

    h = hashlib.sha256(b"labelstudio:3:pair-9").digest()
    assert left_side("pair-9", 3) == ("first" if h[0] & 1 == 0 else "second")
    assert id_hash("a", "b", n=8) == hashlib.sha256(b"a\x00b\x00").hexdigest()[:8]
    flips = [not imported_chosen_first(f"k{i}") for i in range(200)]
    assert flips == [
        int(hashlib.sha256(f"order\x00k{i}\x00".encode()).hexdigest()[:8], 16) % 2 == 1 for i in range(200)
    ]
    assert 60 < sum(flips) < 140


@given(st.dictionaries(st.sampled_from(["temperature", "max_tokens", "seed", "stop"]), part), text, text)
def test_stored_ids_are_the_old_sha256_prefixes(params, name, dataset):
    # judge run ids and candidates' params_key are stored: they must not change
    from curate.judging.records import RunDataset
    from curate.judging.runner import default_run_id
    from curate.store import dumps
    from curate.store.engine import dumps_mapping
    from curate.store.items import params_key

    old = hashlib.sha256((dumps_mapping(params) if params else "{}").encode()).hexdigest()[:16]
    assert params_key(params) == old
    identity = {"kind": "vlm", "model": name, "params": params}
    ds = RunDataset((dataset,))
    old_h = hashlib.sha256(dumps({"identity": identity, "dataset": ds.label}).encode()).hexdigest()[:10]
    assert default_run_id(name, identity, ds).endswith("-" + old_h)


def test_stored_ids_as_written_before():
    # literal ids computed by the code before it used this module
    from curate.judging.records import RunDataset
    from curate.judging.reward_model import _short
    from curate.judging.runner import default_run_id
    from curate.store.items import params_key

    identity = {"kind": "vlm", "model": "gpt-4o", "params": {"temperature": 0.0}}
    assert default_run_id("gpt-4o", identity, RunDataset(("data/mmrb.jsonl",))) == "gpt-4o-3bf93a17f9"
    assert default_run_id("my judge/é", {"kind": "reward_model"}, RunDataset(("a.jsonl", "b.jsonl"))) == (
        "my-judge-é-a49a844e50"
    )
    assert params_key({"temperature": 0.7, "max_tokens": 512}) == "750840bae40e3f1d"
    assert params_key({}) == "44136fa355b3678a"
    assert params_key({"seed": 3, "stop": ["\n", "é"]}) == "f32957f54103d281"
    assert _short({"image": "data:image/png;base64,AAAA"}) == {"image": "<image sha256=bde6da8e9d3902a8>"}


def test_short_hashed_ids_come_from_this_module():
    """No module cuts a hex digest down to a short id by itself (``hexdigest()[:n]``): ids
    go through ``seeding.hex_hash``. Full digests (content addresses) are not ids."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    files = [p for d in ("curate", "annotate", "mmrb_eval") for p in (root / d).rglob("*.py")]
    found = [
        f"{path.relative_to(root)}:{node.lineno}"
        for path in [*files, root / "app.py"]
        if path.name != "seeding.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Slice)
        and isinstance(node.value, ast.Call)
        and getattr(node.value.func, "attr", None) == "hexdigest"
    ]
    assert found == []
