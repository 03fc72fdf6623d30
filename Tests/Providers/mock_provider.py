"""Run oidc-provider-mock (PyPI) on 127.0.0.1 with an OS-chosen port.

Prints `READY <port>` on stdout once it accepts connections, and exits when its standard input closes
(so a test that dies never leaves it behind).
"""
import json
import logging
import os
import warnings

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)

import werkzeug.serving  # noqa: E402
from oidc_provider_mock import app as make_app  # noqa: E402
from oidc_provider_mock._storage import User  # noqa: E402
from datetime import timedelta  # noqa: E402

from harness import serve_until_stdin_closes  # noqa: E402


def main() -> None:
    claims = json.loads(os.environ.get("MOCK_USER_CLAIMS", '{"sub":"alice","name":"Alice Example","email":"alice@example.org"}'))
    max_age = int(os.environ.get("MOCK_TOKEN_MAX_AGE", "3600"))
    user = User(sub=claims.pop("sub"), claims=claims)
    application = make_app(user_claims=[user], access_token_max_age=timedelta(seconds=max_age),
                           issue_refresh_token=not os.environ.get("MOCK_NO_REFRESH"))
    server = werkzeug.serving.make_server("127.0.0.1", int(os.environ.get("MOCK_PORT", "0")), application, threaded=True)
    serve_until_stdin_closes(server)


if __name__ == "__main__":
    main()
