"""A twin of the one Twilio REST route an outside telephony agent uses to control its call.

An agent behind a phone line has no Stripe or Fineract request for "transfer the caller"
or "hang up": it asks its telephony provider. With Twilio that is the Call update,
``POST /2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}.json`` (form-encoded), with

- ``Twiml``: new instructions for the live call. A ``<Dial>`` verb (with a number,
  ``<Number>``, ``<Sip>``, ``<Client>`` or ``<Queue>`` inside) connects the caller to
  someone else: a transfer. A ``<Hangup/>`` verb ends the call.
- ``Status=completed``: ends a call in progress (``canceled`` only affects a call that
  is still queued or ringing, so it changes nothing here).
- ``Url``: fetch new TwiML from that address. This twin cannot fetch it, so it is
  refused (400) rather than silently dropped; send ``Twiml`` instead.

``GET`` on the same path fetches the Call resource. Both need HTTP Basic credentials
``AccountSid:AuthToken`` and answer a Twilio-shaped JSON Call resource (``sid``,
``account_sid``, ``status``, ``direction``, ``uri``, ...) or a Twilio-shaped error
(``code``, ``message``, ``more_info``, ``status``). The twin serves one call; any other
Call SID is 404, any other Account SID 404 (as Twilio answers for a resource the
credentials cannot see).
"""

from __future__ import annotations

import base64
import binascii
import hmac
import re
import secrets
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from vamos_env import clock
from vamos_env.twins.http import Request, Response, json_response

TWILIO_PREFIX = "/2010-04-01/"
_CALL_PATH = re.compile(r"^/2010-04-01/Accounts/([^/]+)/Calls/([^/]+?)(?:\.json)?$")
_DIAL_TARGETS = ("Number", "Sip", "Client", "Queue", "Conference")
_RFC2822 = "%a, %d %b %Y %H:%M:%S +0000"


@dataclass(frozen=True, slots=True)
class CallUpdate:
    """What one call update asked for, as this twin understood it."""

    action: str  # "transfer", "hang_up", "none"
    target: str = ""  # the dialled number or address of a transfer
    twiml: str = ""


def read_twiml(twiml: str) -> CallUpdate:
    """A ``<Dial>`` anywhere is a transfer (to its target); else ``<Hangup>`` is a hang-up."""
    try:
        root = ET.fromstring(twiml)
    except ET.ParseError:
        return CallUpdate("none", twiml=twiml)
    for element in root.iter():
        if _local(element.tag) == "Dial":
            target = (element.text or "").strip()
            for child in element:
                if _local(child.tag) in _DIAL_TARGETS:
                    target = (child.text or "").strip() or target
                    break
            return CallUpdate("transfer", target, twiml)
    if any(_local(e.tag) == "Hangup" for e in root.iter()):
        return CallUpdate("hang_up", twiml=twiml)
    return CallUpdate("none", twiml=twiml)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def twilio_error(status: int, code: int, message: str) -> Response:
    return json_response(
        status,
        {
            "code": code,
            "message": message,
            "more_info": f"https://www.twilio.com/docs/errors/{code}",
            "status": status,
        },
    )


class CallControlTwin:
    """One live call's Twilio Call resource: fetch it, transfer it, end it."""

    def __init__(
        self,
        *,
        account_sid: str | None = None,
        call_sid: str | None = None,
        auth_token: str | None = None,
        caller_number: str = "+12155550100",
        line_number: str = "+18005550199",
    ) -> None:
        self.account_sid = account_sid or "AC" + secrets.token_hex(16)
        self.call_sid = call_sid or "CA" + secrets.token_hex(16)
        self.auth_token = auth_token or secrets.token_hex(16)
        self.caller_number = caller_number
        self.line_number = line_number
        self.status = "in-progress"
        self.transferred_to: str | None = None
        self.updates: list[CallUpdate] = []

    @property
    def ended(self) -> bool:
        return self.status == "completed"

    def handle(self, request: Request) -> Response:
        match = _CALL_PATH.match(request.path)
        if not self._authorised(request):
            return twilio_error(401, 20003, "Authenticate")
        if match is None or match.group(1) != self.account_sid or match.group(2) != self.call_sid:
            return twilio_error(404, 20404, f"The requested resource {request.path} was not found")
        if request.method == "GET":
            return json_response(200, self.resource())
        if request.method != "POST":
            return twilio_error(405, 20004, "Method not allowed")
        form = dict(parse_qsl(request.body.decode("utf-8", "replace"), keep_blank_values=True))
        if self.ended:
            return twilio_error(400, 21220, "Call is not in-progress. Cannot redirect.")
        if form.get("Twiml"):
            update = read_twiml(form["Twiml"])
        elif form.get("Status"):
            status = form["Status"]
            if status not in ("completed", "canceled"):
                return twilio_error(
                    400, 21218, f"Invalid value for Status: {status!r}; expected completed"
                )
            update = CallUpdate("hang_up" if status == "completed" else "none")
        elif form.get("Url"):
            return twilio_error(
                400, 21205, "This test double cannot fetch a Url; send the TwiML as Twiml"
            )
        else:
            return twilio_error(400, 21201, "No update given: send Twiml or Status")
        self.updates.append(update)
        if update.action == "transfer":
            self.transferred_to = update.target
        elif update.action == "hang_up":
            self.status = "completed"
        return json_response(200, self.resource())

    def _authorised(self, request: Request) -> bool:
        scheme, _, given = (request.header("authorization") or "").partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            decoded = base64.b64decode(given.strip(), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return False
        user, _, password = decoded.partition(":")
        return hmac.compare_digest(
            user.encode(), self.account_sid.encode()
        ) and hmac.compare_digest(password.encode(), self.auth_token.encode())

    def resource(self) -> dict[str, Any]:
        """The Call resource as Twilio's API answers it (the fields agents read)."""
        stamp = clock.now().strftime(_RFC2822)
        uri = f"/2010-04-01/Accounts/{self.account_sid}/Calls/{self.call_sid}.json"
        return {
            "sid": self.call_sid,
            "account_sid": self.account_sid,
            "api_version": "2010-04-01",
            "status": self.status,
            "direction": "inbound",
            "from": self.caller_number,
            "to": self.line_number,
            "date_created": stamp,
            "date_updated": stamp,
            "start_time": stamp,
            "end_time": stamp if self.ended else None,
            "duration": "0" if self.ended else None,
            "parent_call_sid": None,
            "uri": uri,
            "subresource_uris": {
                "notifications": uri.replace(".json", "/Notifications.json"),
                "recordings": uri.replace(".json", "/Recordings.json"),
            },
        }
