"""The desktop portal's OpenURI (org.freedesktop.portal.Desktop, as xdg-desktop-portal serves it) on the session bus
named by $DBUS_SESSION_BUS_ADDRESS, for tests: each OpenURI(parent_window, uri, options) is appended to
$PORTAL_LOG as one JSON line {"uri"} and opened with $PORTAL_BROWSER (the browser stand-in) in the portal's own
environment, as the real portal opens the session's browser. Prints `READY` once it owns the name; runs until it is
killed.
"""
import asyncio
import json
import os
import subprocess
import sys

from dbus_next.aio import MessageBus
from dbus_next.service import ServiceInterface, method


class OpenURI(ServiceInterface):
    def __init__(self):
        super().__init__("org.freedesktop.portal.OpenURI")

    @method(name="OpenURI")
    def open_uri(self, parent_window: "s", uri: "s", options: "a{sv}") -> "o":  # noqa: F821 - D-Bus signatures
        with open(os.environ["PORTAL_LOG"], "a") as f:
            f.write(json.dumps({"uri": uri}) + "\n")
        subprocess.Popen([sys.executable, os.environ["PORTAL_BROWSER"], uri], stdin=subprocess.DEVNULL)
        return "/org/freedesktop/portal/desktop/request/1_1/t"


async def main():
    bus = await MessageBus().connect()
    bus.export("/org/freedesktop/portal/desktop", OpenURI())
    await bus.request_name("org.freedesktop.portal.Desktop")
    print("READY", flush=True)
    await asyncio.Event().wait()


asyncio.run(main())
