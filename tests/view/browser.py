"""Debian's chromium, driven headless through selenium and Debian's chromedriver.

No browser build is downloaded: the binaries come from the machine's packages
(``apt-get install chromium chromium-driver``, which ``.ci/run`` does where it can). Where
either is missing, or selenium is not installed, :func:`missing` says so and the browser
tests skip with that reason.
"""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
)


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if importlib.util.find_spec("selenium") is None:
        return "selenium is not installed (pip install -e '.[dev]')"
    for name, path in (("chromium", CHROMIUM), ("chromium-driver", CHROMEDRIVER)):
        if not Path(path).exists():
            return f"Debian's {name} is not installed ({path}): apt-get install -y chromium chromium-driver"
    return None


def launch(width: int = 1400, height: int = 1000) -> Any:
    """A headless chromium with a fresh profile; the caller quits it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--window-size={width},{height}")
    options.add_argument(f"--user-data-dir={tempfile.mkdtemp(prefix='harness-view-chromium-')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))


def wait_for(driver: Any, css: str, timeout: float = 30) -> Any:
    """The first element matching ``css`` once it is there (and the page is not loading)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, timeout).until(lambda d: d.find_elements(By.CSS_SELECTOR, css))
    return driver.find_element(By.CSS_SELECTOR, css)


def errors(driver: Any) -> list[str]:
    """The page's console errors since the last call."""
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
