"""Headless Debian Chromium driven by Playwright for the Space tests: local requests only, page state helpers.

Never a downloaded browser: /usr/bin/chromium (Debian's package) through `executable_path`.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import space_site

from tools import CHROMIUM, require_chromium

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
READY_TIMEOUT_MS = 60_000  # a loaded machine can take many times the few seconds an idle one needs
ARTIFACTS = Path(os.environ.get("SPACE_ARTIFACTS", Path(__file__).resolve().parent.parent / "build" / "space"))


@dataclass
class Traffic:
    """Every request the page made, and those stopped because they would have left 127.0.0.1."""

    requests: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)


@contextlib.contextmanager
def launch() -> Iterator[object]:
    """Debian's headless Chromium (checked to be the one that runs), driven by Playwright."""
    from playwright.sync_api import sync_playwright

    require_chromium()
    installed = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout.split()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        assert browser.version in installed, (browser.version, installed)
        yield browser
        browser.close()


def open_page(
    browser: object,
    url: str,
    *,
    answer: dict[str, Callable[[Any], None]] | None = None,
    init_script: str | None = None,
    **context_options: object,
) -> tuple[Any, Traffic]:
    """A fresh context and page at `url`. Requests off 127.0.0.1 are aborted and recorded; a request whose URL
    ends with a key of `answer` is answered by that function (given Playwright's route) instead of the server.
    `init_script` runs in every page of the context before the page's own scripts.

    Routing turns off the browser's HTTP cache: what a page loaded again does not request came from the
    page's own Cache Storage."""
    context = browser.new_context(**context_options)  # type: ignore[attr-defined]
    if init_script:
        context.add_init_script(init_script)
    traffic = Traffic()

    def route(route: Any) -> None:
        request_url = route.request.url
        traffic.requests.append(request_url)
        if urlsplit(request_url).hostname != "127.0.0.1":
            traffic.blocked.append(request_url)
            route.abort()
            return
        for suffix, handler in (answer or {}).items():
            if request_url.endswith(suffix):
                handler(route)
                return
        route.continue_()

    context.route("**/*", route)
    page = context.new_page()
    page.goto(url)
    return page, traffic


@pytest.fixture(scope="module", name="chromium")
def chromium_fixture() -> Iterator[Any]:
    """One headless Chromium for a test module (import this fixture as `chromium_fixture`)."""
    with launch() as browser:
        yield browser


@pytest.fixture(scope="module", name="served")
def served_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict]]:
    """The site, built and served by `build.py --serve` for a test module: (its URL, build.py's report)."""
    with space_site.build_server(tmp_path_factory.mktemp("space") / "site") as (url, report):
        yield url, report


def wait_until_settled(page: Any) -> str:
    """Wait until the page is ready or has failed; its data-state."""
    page.wait_for_function("document.body.dataset.state !== 'loading'", timeout=READY_TIMEOUT_MS)
    return page.evaluate("document.body.dataset.state")


def fill_form(page: Any, values: dict[str, object]) -> str:
    """Fill the form through its visible labels ({label: value}); the commands shown under "Setup commands"."""
    for label, value in values.items():
        control = page.get_by_label(label, exact=True)
        if isinstance(value, bool):
            control.set_checked(value)
        elif control.evaluate("e => e.tagName") == "SELECT":
            control.select_option(label=str(value))
        else:
            control.fill(str(value))
    return page.get_by_label("Setup commands", exact=True).inner_text()


def contrast(page: Any, selectors: list[str]) -> dict[str, float]:
    """The WCAG contrast of the first element of each of `selectors` against the background it is drawn on (the
    browser's canvas, light or dark as the page is shown, where no element paints one)."""
    return page.evaluate(CONTRAST, selectors)


CONTRAST = """(selectors) => {
  const rgb = (color) => color.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const luminance = ([r, g, b]) => [r, g, b]
    .map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const background = (element) => {
    for (let e = element; e; e = e.parentElement) {
      const color = getComputedStyle(e).backgroundColor;
      if (!color.startsWith("rgba(0, 0, 0, 0)") && color !== "transparent") return color;
    }
    // Chromium's canvas under `color-scheme: light dark`
    return matchMedia("(prefers-color-scheme: dark)").matches ? "rgb(18, 18, 18)" : "rgb(255, 255, 255)";
  };
  const ratio = (element) => {
    const [a, b] = [luminance(rgb(getComputedStyle(element).color)), luminance(rgb(background(element)))];
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  };
  return Object.fromEntries(selectors.map((s) => [s, ratio(document.querySelector(s))]));
}"""
