"""A real browser for the end-to-end test: headless Chromium driven by Selenium (Debian's chromium,
chromium-driver and python3-selenium; run with /usr/bin/python3).

Started by signin as `$BROWSER`, it returns at once and works in a detached child, like a browser launcher. The
child opens the URL, types the user name into the provider's consent page, presses Authorize, waits until the
page signin serves after the redirect, quits Chromium, and appends {"url", "title", "text"} (or {"error"}) to
$STANDIN_LOG.
"""
import json
import os

from harness import launch_detached, start_chromium


def log(entry):
    with open(os.environ["STANDIN_LOG"], "a") as f:
        f.write(json.dumps(entry) + "\n")


def work(url):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = start_chromium()
    try:
        driver.set_page_load_timeout(30)
        driver.get(url)
        field = driver.find_element(By.NAME, "sub")
        field.send_keys(os.environ.get("STANDIN_SUB", "alice"))
        driver.find_element(By.XPATH, "//button[normalize-space()='Authorize']").click()
        WebDriverWait(driver, 30).until(lambda d: "-result" in d.current_url and d.find_elements(By.ID, "message"))
        entry = {"url": driver.current_url, "title": driver.title, "text": driver.find_element(By.TAG_NAME, "body").text}
        # The result page in both colour schemes: its background as rendered, and a screenshot kept as an artifact.
        shots = os.environ.get("STANDIN_SCREENSHOTS")
        for scheme in ("light", "dark"):
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
            entry[f"background_{scheme}"] = driver.execute_script("return getComputedStyle(document.body).backgroundColor")
            entry[f"headline_{scheme}"] = driver.execute_script("return getComputedStyle(document.getElementById('headline')).color")
            if shots:
                os.makedirs(shots, exist_ok=True)
                driver.save_screenshot(os.path.join(shots, f"result-page-{scheme}.png"))
    except Exception as e:  # noqa: BLE001
        entry = {"error": repr(e), "url": driver.current_url}
    finally:
        # Chromium is gone (and its profile folder with it) before the test reads the outcome and ends.
        try:
            driver.quit()
        except Exception:  # noqa: BLE001
            pass
    log(entry)


def main() -> None:
    launch_detached(work)


if __name__ == "__main__":
    main()
