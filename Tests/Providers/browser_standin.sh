#!/bin/sh
# A browser for tests and the demo: submits the provider's consent form as user $STANDIN_SUB (default alice)
# and follows the redirects back to signin's loopback listener, like a real browser. It returns at once and
# works in the background, as a real browser launcher does. STANDIN_ACTION=deny presses "deny" instead.
url="$1"
log="${STANDIN_LOG:-/dev/null}"
(
  if [ "${STANDIN_ACTION:-allow}" = deny ]; then data="action=deny"; else data="sub=${STANDIN_SUB:-alice}"; fi
  curl -sS -L --max-time 20 -o /dev/null -w '%{http_code} %{url_effective}\n' --data "$data" "$url" >>"$log" 2>&1
) </dev/null >/dev/null 2>&1 &
exit 0
