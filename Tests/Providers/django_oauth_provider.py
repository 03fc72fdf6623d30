"""A plain OAuth 2.0 server no one here wrote: Django OAuth Toolkit (from PyPI) with OpenID Connect off, on 127.0.0.1
at a free port. It publishes RFC 8414 metadata only (no OpenID document, no JWKS), takes scopes `read` and `write`,
and requires PKCE. Django's own sign-in page is stood in for by a middleware that signs every request in as the user
"erin" (as idpyoidc_provider.py's NoAuthn does), and the client skips the consent page.

Prints `READY <port>`; runs until its standard input closes, then removes its folder (the database). `POST /_client`
with {"client_id", "redirect_uri"} registers a public client. `GET /_stats` counts the metadata and token requests.
"""
import json
import os
import shutil
import tempfile
import threading
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from harness import LoopbackServer, serve_until_stdin_closes

WORK = tempfile.mkdtemp(prefix="signin-django-")
STATS = {"metadata": 0, "tokens": 0}
LOCK = threading.Lock()
PORT = None


def settings():
    from django.conf import settings as s
    s.configure(
        DEBUG=False,
        SECRET_KEY="signin-tests-only",
        ALLOWED_HOSTS=["127.0.0.1", "localhost"],
        ROOT_URLCONF=__name__,
        INSTALLED_APPS=["django.contrib.auth", "django.contrib.contenttypes", "django.contrib.sessions", "oauth2_provider"],
        MIDDLEWARE=["django.contrib.sessions.middleware.SessionMiddleware",
                    "django.contrib.auth.middleware.AuthenticationMiddleware",
                    __name__ + ".SignedInAsErin", __name__ + ".Counted"],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.path.join(WORK, "db.sqlite3")}},
        USE_TZ=True,
        OAUTH2_PROVIDER={"OIDC_ENABLED": False, "PKCE_REQUIRED": True, "SCOPES": {"read": "Read", "write": "Write"},
                         "DEFAULT_SCOPES": ["read"], "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https"]},
    )
    import django
    django.setup()


class SignedInAsErin:
    """Every request is signed in as erin: the toolkit's authorization page then goes straight to the redirect."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        from django.contrib.auth.models import User
        request.user = User.objects.get(username="erin")
        return self.get_response(request)


class Counted:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        key = "metadata" if request.path.startswith("/.well-known/") else "tokens" if request.path == "/o/token/" else None
        if key:
            with LOCK:
                STATS[key] += 1
        return self.get_response(request)


def client(request):
    from django.http import HttpResponse
    from oauth2_provider.models import Application
    c = json.loads(request.body)
    Application.objects.create(client_id=c["client_id"], name=c["client_id"], client_type=Application.CLIENT_PUBLIC,
                               authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
                               redirect_uris=c["redirect_uri"], skip_authorization=True, algorithm="")
    return HttpResponse("{}", content_type="application/json")


def stats(request):
    from django.http import HttpResponse
    with LOCK:
        return HttpResponse(json.dumps(STATS), content_type="application/json")


class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


class Threaded(ThreadingMixIn, WSGIServer):
    """One thread per request (a browser and signin's token request may overlap), with the backlog of the other test
    providers (harness.LoopbackServer)."""
    daemon_threads = True
    request_queue_size = LoopbackServer.request_queue_size


urlpatterns = []


def main():
    global urlpatterns
    settings()
    from django.core.management import call_command
    from django.urls import include, path
    from django.views.decorators.csrf import csrf_exempt
    from oauth2_provider import urls as oauth2_urls
    call_command("migrate", verbosity=0)
    from django.contrib.auth.models import User
    User.objects.create_user("erin", "erin@example.org", "unused")
    # The toolkit at /o/ (its own prefix), and its RFC 8414 document at the root with the issuer's path appended
    # (the toolkit's documentation: mount metadata_urlpatterns at the server root for strict RFC 8414 clients).
    urlpatterns = [path("o/", include((oauth2_urls.base_urlpatterns, "oauth2_provider"))),
                   path("", include((oauth2_urls.metadata_urlpatterns, "oauth2_metadata"))),
                   path("_client", csrf_exempt(client)), path("_stats", stats)]
    from django.core.wsgi import get_wsgi_application
    httpd = make_server("127.0.0.1", 0, get_wsgi_application(), server_class=Threaded, handler_class=Quiet)
    serve_until_stdin_closes(httpd, cleanup=lambda: shutil.rmtree(WORK, ignore_errors=True))


if __name__ == "__main__":
    main()
