"""Responses with images in the app (issue 15): their rendering (tiny literal parts), the
queue's view in display order, and the label, full-size and adjudication pages through
AppTest. The browser's side (sizes, flip, keys) is tests/test_browser_response_images.py."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from annotate import keys, queue, render
from annotate.render import ShownImage
from curate.model import ImageRef, Label, Part
from tests.support.apptest import all_text, sign_in
from tests.support.streamlit_server import seed_image_pairs, seed_store

IMG_L = ShownImage("/media/aa.jpg", "the left response's image 1", key="aa", width=640, height=480)
IMG_R = ShownImage("/media/bb.jpg", "the right response's image 1", key="bb", width=320, height=600)
GONE = ShownImage(None, "the right response's image 1", "The image file was not found.", key="right-0")


def tags(html: str, name: str) -> list[str]:
    return re.findall(rf"<{name}\b[^>]*>", html)


# -- rendering -------------------------------------------------------------------------------
def test_text_and_images_render_in_order_in_boxes_of_one_size_on_both_sides():
    out = render.responses_html("tk", ["Here it is:", IMG_L, "Bars are **sorted**."], [IMG_R])
    left, right = out.split("mmrb-response-right")
    assert left.index("Here it is:") < left.index('data-image="aa"') < left.index("<strong>sorted</strong>")
    assert 'data-image="bb"' in right and 'data-image="aa"' not in right
    boxes = re.findall(r'class="mmrb-rimage"[^>]*style="([^"]*)"', out)
    assert len(boxes) == 2 and {b.split(";background")[0] for b in boxes} == {
        f"height:{render.response_image_height(['a', IMG_L, 'b'], [])};width:100%;margin:.3rem 0;border-radius:6px"
    }
    for img in tags(out, "img"):
        assert "object-fit:contain" in img and "width:100%;height:100%" in img
    assert out.count('data-pair="tk"') == 2


def test_a_plain_text_pair_renders_as_before_and_only_image_pairs_grow_tall():
    from annotate.pair_ui import pair_responses

    plain = render.responses_html("tk", "left **text**", "right")
    assert pair_responses("tk", (), (), "left **text**", "right") == plain
    texts = (Part.of_text("left **text**"),)  # parts without an image are plain text too
    assert pair_responses("tk", texts, (), "left **text**", "right") == plain
    assert f"max-height:{render.RESPONSE_HEIGHT}" in plain and "mmrb-rimage" not in plain
    assert "mmrb-whole" not in plain  # long text scrolls in its box
    tall = render.responses_html("tk", [IMG_L], [IMG_R], tall=True)
    assert f"height:{render.TALL_IMAGE_HEIGHT};" in tall


def test_a_pair_with_images_is_shown_whole_and_its_images_share_one_images_room():
    out = render.responses_html("tk", ["Step 1:", IMG_L, "Step 2:", IMG_R], "I cannot draw.", tall=True)
    assert out.count("mmrb-whole") == 2 and "max-height" not in out and "overflow" not in out  # no scroll box
    h = render.response_image_height(["Step 1:", IMG_L, "Step 2:", IMG_R], "I cannot draw.", tall=True)
    assert h == f"max({render.MIN_IMAGE_HEIGHT}, calc(({render.TALL_IMAGE_HEIGHT} - 2 * {render.TEXT_PART_ROOM}) / 2))"
    assert out.count(f"height:{h};width:100%") == 2
    # both sides' boxes the same: the side with the most images and texts sets it
    assert render.response_image_height([IMG_L], ["a", IMG_R, IMG_L]) == render.response_image_height(
        ["a", IMG_R, IMG_L], [IMG_L]
    )
    assert render.response_image_height([IMG_L], [GONE]) == render.RESPONSE_IMAGE_HEIGHT  # one image, no text
    assert render.response_image_height(["  ", IMG_L], [IMG_R]) == render.RESPONSE_IMAGE_HEIGHT  # blank is no text


def test_a_missing_response_image_is_a_placeholder_of_the_same_size_with_its_reason():
    out = render.responses_html("tk", [IMG_L], ["Before <b>it</b>", GONE])
    right = out.split("mmrb-response-right")[1]
    assert "Image missing" in right and "The image file was not found." in right and "<img" not in right
    assert "&lt;b&gt;it&lt;/b&gt;" in right  # a text part's HTML shows as text
    assert f"height:{render.response_image_height([IMG_L], ['Before', GONE])};width:100%" in right


def test_image_fields_are_escaped():
    evil = ShownImage('x" onerror="alert(1)', '"><script>alert(1)</script>', key='"><b>')
    out = render.responses_html("tk", [evil], [GONE])
    assert "<script" not in out and 'onerror="' not in out and "<b>" not in out
    assert len(tags(out, "img")) == 1


@settings(max_examples=60, deadline=None)
@given(
    hs.lists(
        hs.one_of(
            hs.text(max_size=30),
            hs.builds(
                ShownImage, hs.one_of(hs.none(), hs.text(max_size=20)), hs.text(max_size=20), hs.text(max_size=20)
            ),
        ),
        max_size=5,
    )
)
def test_parts_never_let_a_tag_or_handler_through_and_each_image_gets_one_element(parts):
    out = render.responses_html("tk", parts, "x")
    images = [p for p in parts if isinstance(p, ShownImage)]
    assert len(tags(out, "img")) == sum(p.src is not None for p in images)
    assert out.count("Image missing") == sum(p.src is None for p in images)
    allowed = set("div p img em strong code pre br hr ul ol li h1 h2 h3 h4 h5 h6 blockquote span a".split())
    for tag in re.findall(r"<[a-zA-Z][^>]*>", out):
        assert tag[1:].split()[0].rstrip(">/") in allowed, tag
        assert not re.search(r"\son[a-z]*=", re.sub(r'"[^"]*"', '""', tag)), tag  # values cannot hold a quote


def test_the_full_size_views_show_both_images_in_one_box_of_the_larger_size():
    assert render.zoom_box(IMG_L, IMG_R, 0.5) == (320, 300)
    assert render.zoom_box(IMG_L, None, 2.0) == (1280, 960)
    sbs = render.side_by_side_html(IMG_L, IMG_R, 1.0, ("Left", "Right <i>"))
    assert sbs.count("width:640px;height:600px") == 2 and "Right &lt;i&gt;" in sbs
    fit = render.side_by_side_html(IMG_L, IMG_R, None)  # fit: each image fills its frame, whatever its size
    assert fit.count(f"width:100%;height:{render.ZOOM_FIT_HEIGHT}") == 2 and "640px" not in fit
    assert f"width:100%;height:{render.ZOOM_FIT_HEIGHT}" in render.one_image_html(IMG_R, None)
    assert "width:160px;height:300px" in render.one_image_html(IMG_R, 0.5)
    flip = render.flip_html("tk", IMG_L, GONE, 1.0, ("Left", "Right"))
    assert len(tags(flip, "img")) == 1 and "Image missing" in flip
    assert flip.count("width:640px;height:480px") == 3  # the stage and both images at its size
    assert 'type="checkbox" class="mmrb-flip-toggle"' in flip and flip.count("grid-area:1/1") >= 2
    nothing = render.flip_html("tk", IMG_L, None, 1.0)
    assert "This response has no image at this place." in nothing
    assert "No image" in nothing and "Image missing" not in nothing  # fewer images is not a lost file


def test_v_flips_in_the_full_size_view_opens_it_flipped_from_the_label_page_and_is_in_the_legends():
    assert keys.FLIP == "v" and keys.KEYS[keys.FLIP] == ("act_flip", None) and keys.FLIP not in keys.ADJ_KEYS
    assert "`V` flips" in keys.LEGEND and "`V` flips" in keys.ADJ_LEGEND and "`V` flips" in keys.PAGE_KEYS_LEGEND
    assert ".mmrb-flip-toggle" in keys.script() and "zoom_view" in keys.script()


# -- the queue --------------------------------------------------------------------------------
def test_the_view_carries_each_responses_parts_on_the_side_it_is_shown(store):
    seed_store(store, n_pairs=1, annotators=("alice", "bob"))
    seed_image_pairs(store, ("alice", "bob"))
    first, second = (store.candidates(ids=[c])[0] for c in ("ir0/a", "ir0/b"))
    va, vb = queue.current_view(store, "alice"), queue.current_view(store, "bob")
    assert va.pair_id == vb.pair_id == "pr0" and (va.left_side, vb.left_side) == ("first", "second")
    assert (va.left_parts, va.right_parts) == (first.content, second.content)
    assert (vb.left_parts, vb.right_parts) == (second.content, first.content)
    assert va.has_response_images and [p.kind for p in va.left_parts] == ["text", "image", "text"]
    assert va.left_text == first.text and "[image: out/0_a.png]" in va.left_text
    plain = queue.own_view(store, "alice", "p0")
    assert plain.left_parts == plain.right_parts == () and not plain.has_response_images


def test_zoom_of_opens_the_responses_images_else_the_prompts():
    from annotate.pair_ui import PairZoom, zoom_of

    im = ImageRef("a.png", "aa", "ok", 4, 3)
    gone = ImageRef("b.png", None, "missing")
    z = zoom_of("tk", "pp", (Part.of_text("x"), Part.of_image(im)), (Part.of_image(gone),))
    assert z == PairZoom("tk", (im,), (gone,), "pp")
    assert zoom_of("tk", "pp", (), ()) == "pp" and zoom_of("tk", None, (), ()) is None


# -- the pages (AppTest) ----------------------------------------------------------------------
@pytest.fixture
def image_env(tmp_path, monkeypatch):
    from curate.store import Store

    db = str(tmp_path / "app.db")
    s = Store(db, images=tmp_path / "images")
    seed_store(s, n_pairs=1, annotators=("alice", "bob"))
    seed_image_pairs(s, ("alice", "bob"), missing_at=1)
    monkeypatch.setenv("MMRB_DB", db)
    monkeypatch.setenv("MMRB_IMAGES", str(tmp_path / "images"))
    yield s
    from annotate import ui

    ui.close_stores()
    s.close()


def responses(at) -> str:
    return next(e.proto.body for e in at.get("html") if "mmrb-responses" in e.proto.body)


def test_the_label_page_shows_both_responses_images_and_zoom_opens_them(image_env):
    at = sign_in("alice")
    body = responses(at)
    left, right = body.split("mmrb-response-right")
    a, b = (image_env.candidates(ids=[c])[0].images[0].sha256 for c in ("ir0/a", "ir0/b"))
    assert f'data-image="{a}"' in left and f'data-image="{b}"' in right
    assert "Here is edit 0:" in left and "Image missing" not in body
    assert "This prompt has no image" not in all_text(at)  # text to image: no placeholder for the prompt
    next(x for x in at.button if x.key == "act_zoom").click().run()
    assert not at.exception, at.exception
    view = at.radio(key="zoom_view")
    assert list(view.options) == ["side by side", "flip  (V)"] and view.value == "side by side"
    assert at.selectbox(key="zoom_level").value == "fit"  # as large as the screen allows, first
    text = all_text(at)
    assert "Original size: Left response 640 x 480 pixels · Right response 640 x 480 pixels" in text
    assert "mmrb-side-by-side" in text and f'data-image="{a}"' in text.split("mmrb-side-by-side")[1]
    assert f"height:{render.ZOOM_FIT_HEIGHT}" in text
    # (a widget inside the dialog reruns only the dialog, which AppTest does not: the flip is in the browser test)
    at.button(key="act_flip").click().run()  # V on the page: the view opened on the flip
    assert not at.exception, at.exception
    assert at.radio(key="zoom_view").value == "flip  (V)" and "mmrb-flip-toggle" in all_text(at)
    at.button(key="act_zoom").click().run()  # Z: side by side again
    assert at.radio(key="zoom_view").value == "side by side"


def test_v_on_a_pair_without_response_images_says_so_and_opens_nothing(image_env):
    for pid in ("pr0", "pr1"):
        image_env.save_label(Label(pid, "alice", "correct", "correct", "first"))
    at = sign_in("alice")
    assert "mmrb-rimage" not in responses(at)  # a text pair now
    at.button(key="act_flip").click().run()
    assert not at.exception, at.exception
    assert "This pair's responses have no images to flip." in all_text(at)
    assert "zoom_view" not in at.session_state and "Original size" not in all_text(at)


def test_a_missing_response_image_shows_its_reason_and_the_full_size_view_offers_the_prompts_image(image_env):
    image_env.save_label(Label("pr0", "alice", "correct", "correct", "first"))
    at = sign_in("alice")
    body = responses(at)
    assert "Image missing" in body and "The image file was not found when the data was imported." in body
    next(x for x in at.button if x.key == "act_zoom").click().run()
    view = at.radio(key="zoom_view")
    assert list(view.options) == ["side by side", "flip  (V)", "prompt image"]  # an edit: its input image too
    assert "Right response: no image" in all_text(at) or "Left response: no image" in all_text(at)


def test_adjudication_shows_the_response_images_in_stored_order(image_env):
    image_env.save_label(Label("pr0", "alice", "correct", "incorrect", "first"))
    image_env.save_label(Label("pr0", "bob", "incorrect", "correct", "second"))
    at = sign_in("lead")
    at.switch_page("annotate/views/admin_adjudicate.py").run()
    assert not at.exception, at.exception
    first, second = responses(at).split("mmrb-response-right")
    a, b = (image_env.candidates(ids=[c])[0].images[0].sha256 for c in ("ir0/a", "ir0/b"))
    assert f'data-image="{a}"' in first and f'data-image="{b}"' in second
    assert "model painter-a" in first
    next(x for x in at.button if x.key == "adj_zoom").click().run()
    assert not at.exception, at.exception
    assert "First response 640 x 480 pixels · Second response 640 x 480 pixels" in all_text(at)


def test_my_labels_reopens_a_pair_of_image_responses_with_its_images(image_env):
    at = sign_in("alice")
    image_env.save_label(Label("pr0", "alice", "correct", "incorrect", "first"))
    at.switch_page("annotate/views/my_labels.py").run()
    at.session_state["editing"] = "pr0"
    at.run()
    assert not at.exception, at.exception
    left, right = responses(at).split("mmrb-response-right")
    a, b = (image_env.candidates(ids=[c])[0].images[0].sha256 for c in ("ir0/a", "ir0/b"))
    assert f'data-image="{a}"' in left and f'data-image="{b}"' in right  # alice's sides, as she labelled
    zoom = next(x for x in at.button if x.key == "act_zoom")
    assert not zoom.disabled
    zoom.click().run()
    assert "Original size: Left response 640 x 480 pixels" in all_text(at)


def test_the_next_pairs_images_are_named_and_their_thumbnails_made_ahead(sqlite_store):
    from annotate.images_cache import warm

    s = sqlite_store
    seed_store(s, n_pairs=1, annotators=("alice",), missing_at=None)
    seed_image_pairs(s, ("alice",), missing_at=1)
    pr0 = queue.current_view(s, "alice")
    assert pr0.pair_id == "pr0"
    item, cand = s.get_item("ir1"), s.candidates(ids=["ir1/a"])[0]
    want = [item.images[0].sha256, cand.images[0].sha256]  # the prompt's, then the responses' (ir1/b's is missing)
    assert queue.next_images(s, "alice", pr0.seq) == want
    last = s.get_assignment("p0", "alice")
    assert queue.next_images(s, "alice", last.seq) == []
    thumbs = [s.images.root / "thumbs" / "1024" / f"{sha}.jpg" for sha in want]
    assert not any(t.exists() for t in thumbs)
    warm(s, lambda: queue.next_images(s, "alice", pr0.seq)).result(timeout=30)
    assert all(t.exists() for t in thumbs)
    warm(s, lambda: [][0]).result(timeout=30)  # a failure is only logged
