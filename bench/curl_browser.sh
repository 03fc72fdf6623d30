#!/bin/sh
# The benchmark's browser stand-in: one curl that submits the provider's consent form and follows the
# redirects back to the tool's loopback listener, as a browser would. It returns at once (curl runs in the
# background), as a browser launcher does. Lighter than the tests' Python stand-in, so that the round trip
# measures the tools, not the stand-in.
curl -s -L -o /dev/null --max-time 30 --data sub=alice "$1" </dev/null >/dev/null 2>&1 &
