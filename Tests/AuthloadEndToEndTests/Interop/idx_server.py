"""An Okta IDX org written apart from authload's staging service, for the walker's interop tests.

It answers as real orgs with several authenticators do (the shapes of the Okta SDKs' public test responses):
identify asks for the username only; one select-authenticator-authenticate offers Email, Password and Phone,
the phone as {id, enrollmentId} with its method asked for by authenticator-verification-data; whichever of
the password and the factor comes first, the other is asked for next; hrefs name another origin. It is strict:
wrong content types, unknown state handles, a field it did not offer, or a PKCE mismatch are refused.

Python's standard library only. Listens on 127.0.0.1 on a port the system picks, prints `port N`, and stops by
itself after LIFETIME seconds so a test that dies cannot leave it running. On SIGTERM or at the end it prints
`tokens N` (access tokens issued) and `refused N` (requests refused).
"""
import base64
import hashlib
import json
import secrets
import signal
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LIFETIME = 60
ORIGIN = "https://independent-org.example.com"
ION = "application/ion+json; okta-version=1.0.0"
# IDX takes JSON; the SDKs send introspect as ION and the remediations as the form's `accepts` type.
JSON_IN = ("application/json", "application/ion+json")
PASSCODE = "246810"
PASSWORD = "interop-pw"

lock = threading.Lock()
interactions = {}  # interaction handle -> code challenge
transactions = {}  # state handle -> dict
codes = {}  # interaction code -> code challenge
counts = {"tokens": 0, "refused": 0}

AUTHENTICATORS = [
    {"type": "email", "key": "okta_email", "id": "autEmail1", "displayName": "Email", "methods": [{"type": "email"}]},
    {"type": "password", "key": "okta_password", "id": "autPassword1", "displayName": "Password",
     "methods": [{"type": "password"}]},
    {"type": "phone", "key": "phone_number", "id": "autPhone1", "displayName": "Phone",
     "methods": [{"type": "sms"}, {"type": "voice"}]},
]
ENROLLMENTS = [
    {"type": "email", "key": "okta_email", "id": "eaeEnroll1", "displayName": "Email", "methods": [{"type": "email"}],
     "profile": {"email": "u***r@example.com"}},
    {"type": "password", "key": "okta_password", "id": "laeEnroll1", "displayName": "Password",
     "methods": [{"type": "password"}]},
    {"type": "phone", "key": "phone_number", "id": "paeEnroll1", "displayName": "Phone",
     "methods": [{"type": "sms"}, {"type": "voice"}], "profile": {"phoneNumber": "+1 XXX-XXX-0100"}},
]


def say(*parts):
    sys.stdout.write(" ".join(str(part) for part in parts) + "\n")
    sys.stdout.flush()


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def state_field(handle):
    return {"name": "stateHandle", "required": True, "value": handle, "visible": False, "mutable": False}


def form(name, path, fields, **extra):
    remediation = {"rel": ["create-form"], "name": name, "href": ORIGIN + path, "method": "POST",
                   "produces": ION, "value": fields, "accepts": "application/json; okta-version=1.0.0"}
    remediation.update(extra)
    return remediation


def passcode_form(handle, label):
    return [{"name": "credentials", "type": "object", "required": True,
             "form": {"value": [{"name": "passcode", "label": label, "secret": True}]}}, state_field(handle)]


def document(handle, remediations, **members):
    body = {"version": "1.0.0", "stateHandle": handle, "expiresAt": "2030-01-01T00:00:00.000Z", "intent": "LOGIN",
            "remediation": {"type": "array", "value": remediations},
            "cancel": form("cancel", "/idp/idx/cancel", [state_field(handle)]),
            "app": {"type": "object", "value": {"id": "0oaInterop", "label": "interop", "name": "oidc_client"}}}
    body.update(members)
    return body


def state_document(handle, tx):
    """The transaction's state as ION."""
    phase = tx["phase"]
    if phase == "identify":
        return document(handle, [form("identify", "/idp/idx/identify", [
            {"name": "identifier", "label": "Username", "required": True},
            {"name": "rememberMe", "type": "boolean", "label": "Remember this device"}, state_field(handle)])])
    if phase == "select":
        offered = [i for i, a in enumerate(AUTHENTICATORS) if not (a["type"] == "password" and tx["password"])]
        options = []
        for index in offered:
            authenticator = AUTHENTICATORS[index]
            fields = [{"name": "id", "required": True, "value": authenticator["id"], "mutable": False}]
            if authenticator["type"] == "phone":
                fields.append({"name": "enrollmentId", "required": True, "value": ENROLLMENTS[index]["id"],
                               "mutable": False})
            else:
                fields.append({"name": "methodType", "required": False, "value": authenticator["type"],
                               "mutable": False})
            options.append({"label": authenticator["displayName"], "value": {"form": {"value": fields}},
                            "relatesTo": "$.authenticatorEnrollments.value[%d]" % index})
        return document(handle, [form("select-authenticator-authenticate", "/idp/idx/challenge", [
            {"name": "authenticator", "type": "object", "options": options}, state_field(handle)])],
            authenticators={"type": "array", "value": AUTHENTICATORS},
            authenticatorEnrollments={"type": "array", "value": ENROLLMENTS})
    if phase == "verification-data":
        return document(handle, [form("authenticator-verification-data", "/idp/idx/challenge", [
            {"name": "authenticator", "label": "Phone", "form": {"value": [
                {"name": "id", "required": True, "value": "autPhone1", "mutable": False},
                {"name": "methodType", "type": "string", "required": False, "options": [
                    {"label": "SMS", "value": "sms"}, {"label": "Voice call", "value": "voice"}]},
                {"name": "enrollmentId", "required": True, "value": "paeEnroll1", "mutable": False}]}},
            state_field(handle)], relatesTo=["$.currentAuthenticatorEnrollment"])],
            currentAuthenticatorEnrollment={"type": "object", "value": ENROLLMENTS[2]})
    # A challenge: the password, or the code by email, SMS or voice.
    enrollment = dict(ENROLLMENTS[{"password": 1, "email": 0}.get(phase, 2)])
    if phase in ("sms", "voice"):
        enrollment["methods"] = [{"type": phase}]
    enrollment["resend"] = form("resend", "/idp/idx/challenge/resend", [state_field(handle)])
    return document(handle, [form("challenge-authenticator", "/idp/idx/challenge/answer",
                                  passcode_form(handle, "Password" if phase == "password" else "Enter code"),
                                  relatesTo=["$.currentAuthenticatorEnrollment"])],
                    currentAuthenticatorEnrollment={"type": "object", "value": enrollment})


def error_document(handle, status, key, message):
    body = {"version": "1.0.0", "messages": {"type": "array", "value": [
        {"message": message, "i18n": {"key": key}, "class": "ERROR"}]}}
    if handle:
        body["stateHandle"] = handle
    return status, body


def next_phase(tx):
    if tx["password"] and tx["factor"]:
        return None
    if tx["factor"]:
        return "password"  # The password after the code, as orgs ask for it when it was not chosen first.
    return "select"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, content_type=ION):
        data = json.dumps(body).encode()
        if status >= 400:
            with lock:
                counts["refused"] += 1
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        path = urllib.parse.urlsplit(self.path).path
        content_type = self.headers.get("Content-Type", "")
        if path in ("/oauth2/default/v1/interact", "/oauth2/default/v1/token"):
            if not content_type.startswith("application/x-www-form-urlencoded"):
                return self.reply(415, {"error": "invalid_request"}, "application/json")
            fields = dict(urllib.parse.parse_qsl(raw.decode()))
            return (self.interact if path.endswith("interact") else self.token)(fields)
        if not content_type.startswith(JSON_IN) or ION not in self.headers.get("Accept", ""):
            return self.reply(*error_document(None, 415, "E0000000", "Unsupported media type"))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return self.reply(*error_document(None, 400, "E0000003", "The request body was not well-formed."))
        if path == "/idp/idx/introspect":
            return self.introspect(body)
        handle = body.get("stateHandle", "")
        with lock:
            tx = transactions.get(handle)
        if tx is None:
            return self.reply(*error_document(None, 401, "idx.session.expired", "The session has expired."))
        status, document_or_error = self.remediate(path, body, handle, tx)
        self.reply(status, document_or_error)

    def interact(self, fields):
        if fields.get("code_challenge_method") != "S256" or not fields.get("code_challenge"):
            return self.reply(400, {"error": "invalid_request"}, "application/json")
        handle = secrets.token_hex(16)
        with lock:
            interactions[handle] = fields["code_challenge"]
        self.reply(200, {"interaction_handle": handle}, "application/json")

    def token(self, fields):
        with lock:
            challenge = codes.pop(fields.get("interaction_code", ""), None)
        verifier = fields.get("code_verifier", "")
        if fields.get("grant_type") != "interaction_code" or challenge is None or \
                b64url(hashlib.sha256(verifier.encode()).digest()) != challenge:
            return self.reply(400, {"error": "invalid_grant"}, "application/json")
        with lock:
            counts["tokens"] += 1
        self.reply(200, {"token_type": "Bearer", "expires_in": 3600, "access_token": secrets.token_hex(32),
                         "scope": "openid profile"}, "application/json")

    def introspect(self, body):
        with lock:
            challenge = interactions.pop(body.get("interactionHandle", ""), None)
            if challenge is None:
                return self.reply(*error_document(None, 401, "idx.session.expired", "The session has expired."))
            handle = "02" + secrets.token_urlsafe(30)
            tx = {"phase": "identify", "challenge": challenge, "password": False, "factor": False}
            transactions[handle] = tx
        self.reply(200, state_document(handle, tx))

    def remediate(self, path, body, handle, tx):
        phase = tx["phase"]
        invalid = error_document(handle, 400, "api.idx.invalid.request", "The request is not valid in this state.")
        if path == "/idp/idx/identify" and phase == "identify":
            if not body.get("identifier") or set(body) - {"identifier", "rememberMe", "stateHandle"}:
                return invalid
            tx["phase"] = "select"
        elif path == "/idp/idx/challenge" and phase == "select":
            chosen = body.get("authenticator") or {}
            offered = {"autEmail1": "email", "autPhone1": "phone", "autPassword1": "password"}
            kind = offered.get(chosen.get("id"))
            if kind is None or (kind == "password" and tx["password"]) or (kind != "password" and tx["factor"]):
                return invalid
            if kind == "phone":
                if chosen.get("enrollmentId") != "paeEnroll1" or "methodType" in chosen:
                    return invalid  # The phone's method is asked for next; it was not on offer here.
                tx["phase"] = "verification-data"
            else:
                tx["phase"] = kind
        elif path == "/idp/idx/challenge" and phase == "verification-data":
            chosen = body.get("authenticator") or {}
            if chosen.get("id") != "autPhone1" or chosen.get("methodType") not in ("sms", "voice"):
                return invalid
            tx["phase"] = chosen["methodType"]
        elif path == "/idp/idx/challenge/answer" and phase in ("password", "email", "sms", "voice"):
            given = (body.get("credentials") or {}).get("passcode")
            if phase == "password":
                if given != PASSWORD:
                    return error_document(handle, 401, "incorrectPassword", "Password is incorrect")
                tx["password"] = True
            else:
                if given != PASSCODE:
                    return error_document(handle, 400, "api.authn.error.PASSCODE_INVALID", "Invalid code.")
                tx["factor"] = True
            following = next_phase(tx)
            if following is None:
                code = secrets.token_urlsafe(32)
                with lock:
                    transactions.pop(handle, None)
                    codes[code] = tx["challenge"]
                return 200, {"version": "1.0.0", "intent": "LOGIN", "successWithInteractionCode": {
                    "rel": ["create-form"], "name": "issue", "href": ORIGIN + "/oauth2/default/v1/token",
                    "method": "POST", "accepts": "application/x-www-form-urlencoded", "value": [
                        {"name": "grant_type", "required": True, "value": "interaction_code"},
                        {"name": "interaction_code", "required": True, "value": code},
                        {"name": "client_id", "required": True, "value": "0oaInterop"},
                        {"name": "client_secret", "required": True},
                        {"name": "code_verifier", "required": True}]}}
            tx["phase"] = following
        else:
            return invalid
        return 200, state_document(handle, tx)


def report_and_exit(*_):
    say("tokens", counts["tokens"])
    say("refused", counts["refused"])
    sys.exit(0)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    say("port", server.server_address[1])
    # A parent that handles SIGTERM itself may have it blocked, and a child inherits the mask.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    signal.signal(signal.SIGTERM, report_and_exit)
    timer = threading.Timer(LIFETIME, server.shutdown)
    timer.daemon = True
    timer.start()
    server.serve_forever()
    report_and_exit()


if __name__ == "__main__":
    main()
