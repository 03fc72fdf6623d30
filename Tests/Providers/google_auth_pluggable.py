"""google-auth's pluggable (executable-sourced) external account: reads the external_account file argv[1] names,
refreshes (running its executable) and prints the token as one JSON line."""
import json
import sys

import google.auth.pluggable as p
import google.auth.transport.requests as r

c = p.Credentials.from_info(json.load(open(sys.argv[1])))
c.refresh(r.Request())
print(json.dumps({"token": c.token}))
