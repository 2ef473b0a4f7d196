"""The access report in a real browser (``make test-ship``): Debian's ``chromium`` driven by
selenium through Debian's ``chromedriver`` (given by path: selenium never downloads one).
The page is loaded from a file:// URL with no network; the test reads the DOM, changes a
filter by clicking it, and takes the screenshot the docs show (``TOOLC_SCREENSHOT=PATH`` also
writes it there; docs/images/access-report.png was made that way). A report of names that are
markup renders as any other and runs none of it (the adversarial tests of the page's JSON
without a browser: tests/test_adversarial_review.py)."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait
from toolc.api import build, report
from toolc.audit.access_md import access_sets
from toolc.builds import read_tables
from toolc.review.report import report_data
from toolc.semantics.access import ClassSpace, TablesView

from tests.helpers import ROOT
from tests.test_adversarial_review import HOSTILE, TITLE, hostile_builds

pytestmark = pytest.mark.ship

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def _require_browser() -> None:
    missing = [p for p in (CHROMIUM, DRIVER) if not os.access(p, os.X_OK)]
    if not missing:
        return
    why = (f"{', '.join(missing)} missing: Debian's chromium and chromium-driver "
           "(.ci/setup-ship installs them as root)")
    if os.environ.get("CI") == "true":
        pytest.fail(why)
    pytest.skip(why)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    _require_browser()
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1760,900", "--force-device-scale-factor=1"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped build's report against a base where main may see canvas but not gateway:
    the shipped head gains gateway for main and loses canvas (or what the target makes of
    it)."""
    root = tmp_path_factory.mktemp("report")
    base_defs = root / "base-defs"
    shutil.copytree(ROOT / "definitions", base_defs)
    agents = base_defs / "deployment" / "agents.yaml"
    text = agents.read_text()
    # the shipped agent main: alsoAllow [..., whatsapp_login] and deny [canvas]
    assert "whatsapp_login]\n        deny: [canvas]" in text
    agents.write_text(text.replace("whatsapp_login]\n        deny: [canvas]",
                                   "whatsapp_login, canvas]\n        deny: [gateway]"))
    head_defs = ROOT / "definitions"
    build(base_defs, root / "base")
    build(head_defs, root / "head", package_name="toolc_report_head")
    out = root / "access.html"
    title = "toolc access report: build (against build-old)"
    out.write_text(report(str(root / "head"), str(root / "base"), title=title).html,
                   encoding="utf-8")
    return out


def _expected(head: Path, channel: str | None) -> dict[tuple[str, str], str]:
    """Every cell's status for the default request, from the access analysis ACCESS.md and
    ``toolc diff`` use (``access_sets``), over every (provider, channel) class (``channel``:
    only the classes of that filter value)."""
    tables = read_tables(head)
    space = ClassSpace([TablesView(tables, list(tables["tools"]))])
    fields = report_data(tables)["channels"]
    keep = sum(1 << c for c, f in enumerate(fields) if channel is None or f[1] == channel)
    sets = access_sets(space)
    out = {}
    for a, agent in enumerate(space.agents):
        always, ever = -1, 0
        for bits, cubes in sets[a][(0, 0, 0)].items():
            if any(cbits & keep for _, cbits in cubes):
                always &= bits
                ever |= bits
        for i, tool in enumerate(tables["tools"]):
            out[(agent.label, tool)] = ("always" if always >> i & 1 else
                                        "some" if ever >> i & 1 else "never")
    return out


def _cells(driver: Any) -> list[Any]:
    return driver.find_elements(By.CSS_SELECTOR, "td.cell")


def _statuses(driver: Any) -> dict[tuple[str, str], str]:
    rows = driver.execute_script(
        "return [...document.querySelectorAll('td.cell')].map(td => "
        "[D.agents[td.dataset.a], D.tools[td.dataset.t], td.dataset.status, td.className, "
        "td.title])")
    return {(a, t): status for a, t, status, _cls, _title in rows}


def test_the_report_in_chromium(browser: Any, page: Path, tmp_path: Path) -> None:
    browser.get(page.as_uri())
    WebDriverWait(browser, 20).until(
        lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    agents = browser.execute_script("return D.agents.length")
    tools = browser.execute_script("return D.tools.length")
    assert agents >= 6 and tools >= 30
    assert len(_cells(browser)) == agents * tools  # every cell fits the window
    before = _statuses(browser)
    assert before == _expected(page.parent / "head", None)  # the page's evaluation is exact
    assert before[("agent viewer", "exec")] == "never"
    # the diff: main gained cron (a green cell) and lost canvas (a red one)
    gained = browser.find_elements(By.CSS_SELECTOR, "td.gain")
    lost = browser.find_elements(By.CSS_SELECTOR, "td.loss")
    marked = browser.execute_script("return D.diff.map(d => [D.tools[d[1]], d[2]])")
    assert sorted(browser.execute_script("return D.tools[arguments[0].dataset.t]", c)
                  for c in gained) == sorted(t for t, sign in marked if sign == "+")
    assert sorted(browser.execute_script("return D.tools[arguments[0].dataset.t]", c)
                  for c in lost) == sorted(t for t, sign in marked if sign == "-")
    assert gained and lost
    ActionChains(browser).move_to_element(gained[0]).perform()  # the condition, on hover
    assert "gained by agent main" in gained[0].get_attribute("title")
    # a filter, by a click: each channel value in turn (with 2026.9's rules the group a request
    # reaches is the one its session key names, so a channel value alone may change no cell;
    # at least one value must)
    values = [o.get_attribute("value") for o in
              browser.find_elements(By.CSS_SELECTOR, "#f-channel option")]
    changed: set[tuple[str, str]] = set()
    for value in [v for v in values if v not in ("", "*")]:
        browser.find_element(By.ID, "f-channel").click()
        browser.find_element(By.CSS_SELECTOR, f"#f-channel option[value='{value}']").click()
        after = _statuses(browser)
        assert after == _expected(page.parent / "head", value)
        # fewer classes, fewer conditions: cells that were "some" become "always" or "never"
        changed = {k for k in before if before[k] != after[k]}
        assert all(before[k] == "some" for k in changed)
        if changed:
            assert Counter(after.values())["always"] + Counter(after.values())["never"] > \
                Counter(before.values())["always"] + Counter(before.values())["never"]
            break
    assert changed, values
    hover = browser.find_element(By.CSS_SELECTOR, "td.some")
    ActionChains(browser).move_to_element(hover).perform()
    assert "seen with providers" in hover.get_attribute("title")
    # "changes only": the one changed row (main) and its changed columns
    browser.find_element(By.ID, "f-changes").click()
    assert len(_cells(browser)) == len({t for t, _ in marked})
    browser.find_element(By.ID, "f-changes").click()
    browser.find_element(By.CSS_SELECTOR, "#f-channel option[value='*']").click()
    shot = tmp_path / "access-report.png"
    assert browser.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    target = os.environ.get("TOOLC_SCREENSHOT")
    if target:
        shutil.copyfile(shot, target)


# -- names that are markup (tests/test_adversarial_review.py says how each would break out) ----
@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    head, base = hostile_builds(tmp_path_factory.mktemp("hostile"))
    out = head.parent / "access.html"
    out.write_text(report(str(head), str(base), title=TITLE).html, encoding="utf-8")
    return out


def _options(driver: Any, select: str) -> list[str]:
    return list(driver.execute_script(
        "return [...arguments[0].options].map(o => o.text)", driver.find_element(By.ID, select)))


def test_names_that_are_markup_render_as_text(browser: Any, hostile_page: Path) -> None:
    browser.get(hostile_page.as_uri())
    WebDriverWait(browser, 20).until(
        lambda d: d.execute_script("return document.body.dataset.ready") == "1",
        "the page's code never ran (its data element swallowed it?)")
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018 (reading it is the check)
    assert browser.execute_script("return window.pwned") is None
    assert browser.execute_script("return [document.scripts.length, document.images.length]") \
        == [2, 0]  # the data and the page's code; no element from a name
    assert browser.find_element(By.ID, "title").text == TITLE
    heads = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "th.agent")]
    assert heads == ["agent helper", "agent main", "no declared agent"]
    assert [th.get_attribute("title") for th in
            browser.find_elements(By.CSS_SELECTOR, "th.tool")] == ["read", "exec", "write"]
    assert len(_cells(browser)) == 9
    assert f"provider {HOSTILE['provider']}" in _options(browser, "f-provider")
    assert HOSTILE["group"] in _options(browser, "f-group")
    assert HOSTILE["sender"] in _options(browser, "f-sender")
    # the diff's words name the group and the sender, verbatim, in the hover text
    where = f"channel whatsapp, group {HOSTILE['group']}, sender {HOSTILE['sender']}"
    lost = browser.find_elements(By.CSS_SELECTOR, "td.loss")
    assert len(lost) == 3 and len(browser.find_elements(By.CSS_SELECTOR, "td.gain")) == 3
    ActionChains(browser).move_to_element(lost[0]).perform()
    assert f"lost by {where}" in lost[0].get_attribute("title")
    # a filter whose value is a name: the hostile sender's requests never see write
    assert _statuses(browser)[("agent main", "write")] == "some"
    Select(browser.find_element(By.ID, "f-sender")).select_by_visible_text(HOSTILE["sender"])
    after = _statuses(browser)
    assert after[("agent main", "write")] == "never" and after[("agent main", "read")] == "always"
    assert browser.execute_script("return window.pwned") is None
    # the routing table and the agent's heading: the binding's group as text
    rows = [[td.get_attribute("textContent") for td in tr.find_elements(By.TAG_NAME, "td")]
            for tr in browser.find_elements(By.CSS_SELECTOR, "#routes-table tr")[1:]]
    words = f"channel whatsapp, account default, group {HOSTILE['group']}"
    assert rows[0][:2] == ["helper", words] and rows[0][2].startswith("d.yaml:")
    helper = browser.find_element(By.CSS_SELECTOR, "th.agent").get_attribute("title")
    assert helper.startswith(f"agent helper\nrouted here: {words} (d.yaml:")
    assert browser.execute_script("return [document.scripts.length, document.images.length]") \
        == [2, 0]
