"""The compile report in a real headless browser (Debian's Chromium, driven by
Playwright): the seeds' MNIST step and the encoder layer each give one page
that loads with no console error and no network request, with every section
present and filled; a screenshot is kept. Also: `--xlapy_dump_report` writes
the page beside the other dumps, and a profiled report shows measured times."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

import xlapy
from xlapy import models
from xlapy.cli import main
from xlapy.flags import flags_set
from xlapy.models import lib

SECTIONS = ("sources", "passes", "fusion", "buffers", "costs", "fallbacks")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SCREENSHOTS = os.environ.get("XLAPY_REPORT_SCREENSHOTS")
"""Where to keep the screenshots (default: the test's temporary directory)."""


def _mnist_step():
    rng = np.random.default_rng(0)
    x, labels = models.data.clusters(rng, 16)
    params = models.softmax_regression.init(rng)
    return models.softmax_regression.train_step, (params, (x / 4, lib.one_hot(labels, 10)))


def _encoder():
    rng = np.random.default_rng(1)
    enc = models.encoder.init(rng, d_model=16, heads=2, ff=32)
    return models.encoder.apply, (enc, rng.standard_normal((2, 4, 16)).astype(np.float32))


def _page(tmp_path, program, name: str, profile: bool = False):
    fn, args = program()
    hlo = tmp_path / f"{name}.hlo"
    hlo.write_text(xlapy.jit(fn).lower(*args).as_text())
    page = tmp_path / f"{name}.html"
    argv = ["report", str(hlo), "-o", str(page)] + (["--profile", "3"] if profile else [])
    assert main(argv) == 0
    return page


@pytest.fixture(scope="module")
def browser():
    sync = pytest.importorskip("playwright.sync_api")
    if CHROMIUM is None:
        pytest.skip("no Chromium (.ci/run installs Debian's chromium)")
    with sync.sync_playwright() as p:
        launched = p.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"])
        yield launched
        launched.close()


@pytest.mark.parametrize("program, name", [(_mnist_step, "mnist_step"), (_encoder, "encoder")])
def test_the_report_loads_offline_with_every_section(tmp_path, browser, program, name):
    path = _page(tmp_path, program, name)
    page = browser.new_page()
    errors, requests = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    assert errors == []
    assert requests == [path.as_uri()]                  # the page itself, nothing else
    for section in SECTIONS:
        text = page.locator(f"section#{section}").inner_text()
        assert len(text.strip()) > 40, (section, text)
    assert page.locator("section#fusion svg rect").count() > 3       # the kernels, drawn
    assert page.locator("section#buffers svg rect").count() > 3      # the live values
    assert "peak" in page.locator("section#buffers").inner_text()
    assert "models/" in page.locator("section#sources").inner_text()   # the model's own lines
    assert page.locator("section#passes details").count() > 3
    shots = SCREENSHOTS or str(tmp_path)
    os.makedirs(shots, exist_ok=True)
    shot = os.path.join(shots, f"report_{name}.png")
    page.screenshot(path=shot, full_page=False)
    assert os.path.getsize(shot) > 10_000
    page.close()


def test_a_profiled_report_shows_measured_times(tmp_path):
    text = _page(tmp_path, _mnist_step, "profiled", profile=True).read_text()
    assert "measured µs" in text and "floor / measured" in text
    assert "Not profiled" not in text
    fn, args = _mnist_step()
    with flags_set(f"--xla_dump_to={tmp_path} --xlapy_dump_report --xla_hlo_profile"):
        xlapy.jit(fn, backend="cpu")(*args)
    (page,) = tmp_path.glob("module_*.jit_train_step.report.html")
    assert "measured µs" in page.read_text()


def test_dump_report_writes_a_page_per_compiled_module(tmp_path):
    fn, args = _encoder()
    with flags_set(f"--xla_dump_to={tmp_path} --xlapy_dump_report"):
        xlapy.jit(fn, backend="cpu")(*args)
    pages = list(tmp_path.glob("module_*.jit_apply.report.html"))
    assert len(pages) == 1
    number = pages[0].name.split(".")[0]
    assert (tmp_path / f"{number}.jit_apply.before_optimizations.txt").exists()
    text = pages[0].read_text()
    assert "<script" not in text and "http://" not in text.replace("http://www.w3.org/2000/svg",
                                                                    "")


def test_a_bad_file_is_a_message(tmp_path, capsys):
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\nENTRY e { p = f32[2] parameter(0)\n ROOT r = f32[3] add(p, p) }")
    assert main(["report", str(bad)]) == 2
    assert "bad.hlo" in capsys.readouterr().err
