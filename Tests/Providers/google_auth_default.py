"""google-auth's Application Default Credentials, as a Python program would use them: prints the token, the project
and the service account's e-mail as one JSON line."""
import json

import google.auth
import google.auth.transport.requests as r

c, project = google.auth.default()
c.refresh(r.Request())
print(json.dumps({"token": c.token, "project": project, "email": getattr(c, "service_account_email", None)}))
