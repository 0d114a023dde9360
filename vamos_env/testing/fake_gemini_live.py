"""A local Gemini Live server: the local voice stack behind the ``BidiGenerateContent`` wire.

``FakeGeminiLiveServer`` listens on loopback at the path google-genai builds for the
Gemini API (``/ws/google.ai.generativelanguage.{version}.GenerativeService.
BidiGenerateContent``; the doubled slash the SDK's default base URL produces is taken
too) and speaks the Live protocol as google-genai 3.x reads it. Point the SDK at it
unpatched with ``genai.Client(api_key=server.api_key, http_options=server.http_options())``.

**TLS.** With an API key the SDK always turns the base URL into ``wss://``
(``BaseApiClient._websocket_base_url``), so this server speaks TLS: at start it makes a
throwaway CA and a certificate for 127.0.0.1 / localhost signed by it (``cryptography``),
and writes the CA to ``server.ca_file``. A client trusts it through the SSL context that
``http_options()`` passes as ``async_client_args={"ssl": ctx}`` (the SDK hands the
``ssl`` entry of ``async_client_args`` to ``websockets.connect``:
``_ensure_websocket_ssl_ctx``), or through ``SSL_CERT_FILE=server.ca_file``, which the
SDK reads when no context is given.

**A session** (one WebSocket connection):

- the key is required: the ``x-goog-api-key`` header (what the SDK sends) or a ``key``
  query parameter; none closes with 1008, a wrong one with 1007;
- the first message must be ``setup``; it is validated (unknown fields, tool
  declarations as the REST fake checks them, ``realtimeInputConfig``) and answered with
  ``setupComplete {sessionId}``. Field names are taken in either spelling, as proto3
  JSON does: the SDK sends ``realtime_input`` with a ``mime_type`` inside;
- a **frame agent** per session (``agent_factory(setup)``; by default the local voice
  stack, ``CascadeAgent``: its detector, Whisper, the reference's decisions, Piper) gets
  the ``systemInstruction`` at reset and the ``realtimeInput`` audio in 20 ms frames as
  it arrives (any ``audio/pcm;rate=N``, resampled to 16 kHz). A ``realtimeInput.text``
  (the opening trigger agents send) is a turn the agent hears as words. The automatic
  activity detection's ``silenceDurationMs`` becomes the cascade's end-of-turn silence;
- the agent's speech goes out as ``serverContent.modelTurn`` parts of
  ``inlineData audio/pcm;rate=24000`` (resampled), each utterance whole and at once, as
  the real service generates faster than real time (with a cascade; another frame agent
  has its voiced frames sent as they come), with ``outputTranscription {text}`` when
  the setup asked for it (``inputTranscription`` of what the agent heard likewise);
- when the agent stops because the caller talked over it, ``serverContent.interrupted``
  follows, then ``turnComplete``; a turn it finishes ends with ``generationComplete``
  then ``turnComplete``; ``usageMetadata`` rides on each ``turnComplete`` (32 tokens a
  second of audio, text at four characters a token: the fake's estimate, the whole
  context counted as prompt on every turn, as the service bills a turn);
- the agent's tool calls go out as ``toolCall.functionCalls`` with ids
  (``function-call-<n>``); ``toolResponse.functionResponses`` (``response.output`` or
  ``response.error``) come back to the agent as its tool results. A function the setup
  did not declare is still sent and recorded in ``undeclared_calls``. When the setup
  declares ``end_call``, the agent's end of the call becomes a call to it.

**Refusals** close the socket as the service does (code 1007 "invalid frame payload
data" with the reason, truncated to the 123 bytes a close frame carries): a message
that is not JSON, an unknown field anywhere it is checked, a second ``setup``, a first
message that is not ``setup``, a function response without an ``id`` or with one that
answers no open call, activity signals while automatic detection is on, audio that is
not ``audio/pcm``. An unknown model (when ``models`` is given) closes with 1008.

**Resumption and goAway.** A setup with ``sessionResumption`` asks for handles: one
``sessionResumptionUpdate {newHandle, resumable: true}`` follows ``setupComplete``, and
another each completed turn; a ``toolCall`` is followed by ``{resumable: false}`` (no
handle), as the service marks a session it cannot resume while the model waits on its
function calls (python-genai ``LiveServerSessionResumptionUpdate``). Each handle names
its session, which lives on the server beyond its connection: a new connection whose
setup carries ``sessionResumption.handle`` gets ``setupComplete`` (a new ``sessionId``)
and the same agent, conversation, usage context and open function calls, so a
``toolResponse`` on it answers a call made on the connection before. The fake cannot
roll its agent back to the instant a handle was issued: any handle of a session resumes
it as it is now, and what the agent said or called after its connection went is sent
on the resumed one. A handle the server never issued is refused with 1008 (the close
the service sends for what it does not find, as for an unknown model; the service's
own code for a bad handle is not documented). A handle whose session another
connection still holds open is refused with 1011 "The service is currently
unavailable." (reported of the service by clients that resumed before closing the old
socket). A resumed connection keeps the setup of the session's first connection; the
new one is recorded. ``go_away_after_s`` sends ``goAway {timeLeft}`` (a proto3
Duration, ``"1s"``) that long after each ``setupComplete``, and closes the connection
``go_away_time_left_s`` later with 1011 "The operation was aborted." (the SDK documents
the end as ABORTED; the close code is the fake's choice). The service does so about ten
minutes into every connection.

``misbehave`` turns the server into a broken one for fault tests: ``"no_setup"`` (never
answers the setup), ``"silent"`` (completes the setup, then never sends anything),
``"close"`` (closes with 1011 after the setup), ``"garbage"`` (sends bytes that are not
JSON after the setup). ``script`` replaces the agent with a coroutine
``script(connection, setup)`` that plays the server's side itself.

Every connection is recorded in ``sessions`` (``LiveSessionRecord``, with the handle it
resumed, the handles it sent and its goAway); ``handles`` maps each issued handle to its
session (drop one to model an expired handle). Not modelled: transparent resumption
(``lastConsumedClientMessageIndex``; the SDK allows it on Vertex only), handle expiry
in time, context compression, video, the service's own voice activity events,
``clientContent`` beyond being recorded.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime
import ipaddress
import itertools
import json
import re
import secrets
import ssl
import tempfile
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

import numpy as np

from vamos_env.bridges.audio import Resampler, pcm_audio, pcm_bytes, resample_whole
from vamos_env.channel.audio.dsp import RATE
from vamos_env.testing.fake_gemini import _validate_tools, camel

LIVE_PATH = re.compile(
    r"^/+ws/google\.ai\.generativelanguage\.(?P<version>v1[a-z0-9]*)\.GenerativeService\."
    r"(?P<method>BidiGenerateContent(?:Constrained)?)$"
)
OUTPUT_RATE = 24_000
FRAME = 320  # 20 ms at 16 kHz
TOKENS_PER_AUDIO_S = 32
CHUNK_S = 0.2  # audio of one modelTurn message
INVALID = 1007  # "invalid frame payload data": what the service closes with for a bad request
POLICY = 1008
INTERNAL = 1011
END_CALL = "end_call"
UNAVAILABLE = "The service is currently unavailable."
ABORTED = "The operation was aborted."

SETUP_FIELDS = frozenset(
    {
        "model",
        "generationConfig",
        "systemInstruction",
        "tools",
        "realtimeInputConfig",
        "sessionResumption",
        "contextWindowCompression",
        "inputAudioTranscription",
        "outputAudioTranscription",
        "proactivity",
        "historyConfig",
        "avatarConfig",
        "safetySettings",
    }
)
CLIENT_MESSAGES = frozenset(
    {"setup", "clientContent", "realtimeInput", "toolResponse", "contextUpdate"}
)
REALTIME_FIELDS = frozenset(
    {"mediaChunks", "audio", "video", "text", "audioStreamEnd", "activityStart", "activityEnd"}
)
REALTIME_CONFIG_FIELDS = frozenset(
    {"automaticActivityDetection", "activityHandling", "turnCoverage"}
)
ACTIVITY_FIELDS = frozenset(
    {
        "disabled",
        "startOfSpeechSensitivity",
        "endOfSpeechSensitivity",
        "prefixPaddingMs",
        "silenceDurationMs",
    }
)
FUNCTION_RESPONSE_FIELDS = frozenset(
    {"id", "name", "response", "parts", "willContinue", "scheduling"}
)
RESUMPTION_FIELDS = frozenset({"handle", "transparent"})

Script = Callable[[Any, dict[str, Any]], Awaitable[None]]


class Refused(Exception):
    """A client message the service refuses: the session closes with ``code``."""

    def __init__(self, message: str, code: int = INVALID) -> None:
        super().__init__(message)
        self.code = code


# -- TLS on loopback ---------------------------------------------------------------------------
@dataclass(frozen=True)
class LoopbackTls:
    """A throwaway CA and a server certificate for 127.0.0.1 and localhost, as PEM files."""

    folder: Path
    ca_file: Path
    cert_file: Path
    key_file: Path

    @classmethod
    def create(cls, folder: Path | None = None) -> LoopbackTls:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        where = Path(folder or tempfile.mkdtemp(prefix="vamos-live-tls-"))
        # TLS checks validity against the machine's real clock, which the env never reads;
        # a wide fixed window covers any machine this runs on, and the key is made per start.
        lifetime = (
            datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC),
            datetime.datetime(2099, 12, 31, tzinfo=datetime.UTC),
        )
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "vamos loopback test CA")])
        ca = (
            x509.CertificateBuilder()
            .subject_name(ca_name)
            .issuer_name(ca_name)
            .public_key(ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(lifetime[0])
            .not_valid_after(lifetime[1])
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=False,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
            )
            .sign(ca_key, hashes.SHA256())
        )
        key = ec.generate_private_key(ec.SECP256R1())
        leaf = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(lifetime[0])
            .not_valid_after(lifetime[1])
            .add_extension(
                x509.SubjectAlternativeName(
                    [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
                ),
                critical=False,
            )
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                critical=False,
            )
            .sign(ca_key, hashes.SHA256())
        )
        pem = serialization.Encoding.PEM
        files = cls(where, where / "ca.pem", where / "cert.pem", where / "key.pem")
        files.ca_file.write_bytes(ca.public_bytes(pem))
        files.cert_file.write_bytes(leaf.public_bytes(pem))
        files.key_file.write_bytes(
            key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        )
        return files

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, self.key_file)
        return context

    def client_context(self) -> ssl.SSLContext:
        """An SSL context that trusts this CA only (hostname checked)."""
        return ssl.create_default_context(cafile=str(self.ca_file))


# -- records -----------------------------------------------------------------------------------
@dataclass
class LiveSessionRecord:
    """One session as the server saw it."""

    path: str
    api_key: str | None
    setup: dict[str, Any] | None = None
    messages: list[str] = field(default_factory=list)  # the kind of each client message
    texts: list[str] = field(default_factory=list)  # realtimeInput.text received
    audio_in_s: float = 0.0
    audio_out_s: float = 0.0
    said: list[str] = field(default_factory=list)  # the agent's utterances, as transcribed
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    tool_responses: list[dict[str, Any]] = field(default_factory=list)
    undeclared_calls: list[str] = field(default_factory=list)
    interruptions: int = 0
    turns: int = 0
    closed: tuple[int, str] | None = None  # the close this server sent
    resumed: str | None = None  # the handle its setup resumed (None: a new session)
    handles: list[str] = field(default_factory=list)  # the resumable handles sent on it
    go_away: str | None = None  # the goAway's timeLeft, when one was sent


def _close_reason(message: str) -> str:
    """A close frame carries at most 123 bytes of reason (the service truncates too)."""
    raw = message.encode()
    if len(raw) <= 123:
        return message
    return raw[:123].decode(errors="ignore")


def _pick(mapping: dict[str, Any], name: str) -> Any:
    """A field by its JSON name in either spelling (proto3 JSON takes both)."""
    if name in mapping:
        return mapping[name]
    snake = re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()
    return mapping.get(snake)


def _unknown(mapping: dict[str, Any], known: Iterable[str], where: str) -> None:
    allowed = set(known)
    for key in mapping:
        if camel(key) not in allowed:
            at = f" at '{where}'" if where else ""
            raise Refused(
                f'Invalid JSON payload received. Unknown name "{key}"{at}: Cannot find field.'
            )


def _rate(mime: str) -> int | None:
    """The sample rate of an ``audio/pcm`` mime type (16 kHz when unnamed), None if not PCM."""
    kind, _, params = mime.partition(";")
    if kind.strip().lower() not in ("audio/pcm", "audio/l16"):
        return None
    found = re.search(r"rate\s*=\s*(\d+)", params)
    return int(found.group(1)) if found else RATE


def _tokens(text: str) -> int:
    return (len(text) + 3) // 4


def _duration(seconds: float) -> str:
    """A proto3 JSON Duration, as ``goAway.timeLeft`` carries it: ``"1s"``, ``"0.500s"``."""
    millis = max(0, round(seconds * 1000))
    return f"{millis // 1000}s" if millis % 1000 == 0 else f"{millis / 1000:.3f}s"


def _is_open(ws: Any) -> bool:
    from websockets.protocol import State

    return bool(ws is not None and ws.state is State.OPEN)


def default_agent(setup: dict[str, Any]) -> Any:
    """The local voice stack, its end-of-turn silence from the setup's activity detection."""
    from vamos_env.channel.audio.vad import DetectorSettings
    from vamos_env.duplex.cascade import CascadeAgent

    detection = _pick(_pick(setup, "realtimeInputConfig") or {}, "automaticActivityDetection") or {}
    silence_ms = _pick(detection, "silenceDurationMs")
    settings = DetectorSettings()
    if isinstance(silence_ms, int | float) and silence_ms > 0:
        settings = DetectorSettings(stop_s=float(silence_ms) / 1000.0)
    return CascadeAgent(settings=settings)


# -- one session -------------------------------------------------------------------------------
class _Session:
    """The server's side of one session: its agent and conversation, and the connection
    that holds it now (``attach``). Without resumption a session has one connection; with
    it, each connection that resumes one of its handles takes it over in turn."""

    def __init__(self, server: FakeGeminiLiveServer, ws: Any, record: LiveSessionRecord) -> None:
        self.server = server
        self.ws = ws
        self.record = record
        setup = record.setup or {}
        self.setup = setup
        self.resumable = _pick(setup, "sessionResumption") is not None
        self.declared: set[str] = set()
        for tool in _pick(setup, "tools") or []:
            for declaration in _pick(tool, "functionDeclarations") or []:
                self.declared.add(str(declaration.get("name")))
        detection = (
            _pick(_pick(setup, "realtimeInputConfig") or {}, "automaticActivityDetection") or {}
        )
        self.automatic = not bool(_pick(detection, "disabled"))
        modalities = _pick(_pick(setup, "generationConfig") or {}, "responseModalities") or [
            "AUDIO"
        ]
        self.audio_out = "TEXT" not in [str(m).upper() for m in modalities]
        self.transcribe_out = _pick(setup, "outputAudioTranscription") is not None
        self.transcribe_in = _pick(setup, "inputAudioTranscription") is not None
        instruction = _pick(setup, "systemInstruction") or {}
        if isinstance(instruction, str):
            self.system = instruction
        else:
            parts = _pick(instruction, "parts") or []
            self.system = "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
        self.context_tokens = _tokens(self.system) + _tokens(
            json.dumps(_pick(setup, "tools") or [])
        )
        # The conversation so far, over all its connections: what each turn's usage counts.
        self.heard_s = 0.0
        self.heard_texts: list[str] = []
        # What the agent made that no connection has taken yet (sent in order; what a
        # connection that went could not take waits for the one that resumes the session).
        self.undelivered: list[dict[str, Any]] = []
        self.serving = asyncio.Lock()  # held by the connection serving the session
        self.stopping = False  # the serving connection has ended: its worker stops
        self.agent: Any = None
        self.pending_audio = np.zeros(0)
        self.heard: dict[int, Resampler] = {}  # by the client's rate: its audio to 16 kHz
        self.voice = Resampler(RATE, OUTPUT_RATE)  # a frame agent's voice, as a stream
        self.frames: list[np.ndarray] = []
        self.texts: list[str] = []
        self.results: list[dict[str, Any]] = []
        self.wake = asyncio.Event()
        # id -> name of each function call the agent still waits on: a call stays open until
        # its response reaches the agent (the agent steps in a worker thread, and a turn must
        # not end between the response's arrival and its delivery).
        self.open_calls: dict[str, str] = {}
        self.answered: set[str] = set()  # ids whose response arrived, not yet delivered
        self.ids = itertools.count(1)
        # What of the agent's speech has gone out: id(saying) -> the saying.
        self.sent: dict[int, Any] = {}
        self.turn_open = False
        self.turn_audio_s = 0.0
        self.quiet_frames = 0
        self.log_seen = 0

    # -- the agent, in a worker thread -----------------------------------------------------
    def start_agent(self) -> None:
        factory = self.server.agent_factory or default_agent
        self.agent = factory(self.setup)
        self.agent.reset(
            {
                "system_prompt": self.system,
                "tools": sorted(self.declared),
                "channel": "duplex",
                "sample_rate": RATE,
                "frame_s": 0.02,
            }
        )

    def advance(
        self, frames: list[np.ndarray], texts: list[str], results: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """Step the agent over the frames that arrived; the messages that follow from it."""
        out: list[dict[str, Any]] = []
        agent = self.agent
        for entry in results:  # delivered with the first frame below: no longer waited on
            self.open_calls.pop(entry["tool_call_id"], None)
            self.answered.discard(entry["tool_call_id"])
        for text in texts:
            turns = getattr(agent, "_turns", None)
            if isinstance(turns, list):  # the cascade hears it as a recognised turn, now
                turns.append((int(getattr(agent, "sample", 0)), text))
        for k, frame in enumerate(frames):
            audio, actions = agent.step(frame, results if k == 0 else [])
            self._speech(audio, out)
            self._actions(actions, out)
            self._heard(out)
            self._turn_end(out)
        return out

    def _heard(self, out: list[dict[str, Any]]) -> None:
        log = getattr(self.agent, "log", None)
        if not isinstance(log, list):
            return
        for entry in log[self.log_seen :]:
            if self.transcribe_in and "heard" in entry:
                out.append({"serverContent": {"inputTranscription": {"text": entry["heard"]}}})
        self.log_seen = len(log)

    def _speech(self, frame: np.ndarray, out: list[dict[str, Any]]) -> None:
        queue = getattr(self.agent, "_queue", None)
        if isinstance(queue, list):
            for saying in queue:
                if id(saying) not in self.sent:
                    self.sent[id(saying)] = saying
                    # Whole: the cascade counts its first frame as played already.
                    self._utter(saying.text, saying.audio, out)
            return
        # Any other frame agent: its voiced frames as they come.
        if float(np.max(np.abs(frame), initial=0.0)) > 1e-4:
            self.quiet_frames = 0
            self._utter(None, frame, out)
        else:
            self.quiet_frames += 1

    def _utter(self, text: str | None, audio: np.ndarray, out: list[dict[str, Any]]) -> None:
        self.turn_open = True
        seconds = len(audio) / RATE
        self.turn_audio_s += seconds
        self.record.audio_out_s += seconds
        if text is not None:
            self.record.said.append(text)
        if not self.audio_out:
            if text:
                out.append({"serverContent": {"modelTurn": {"parts": [{"text": text}]}}})
            return
        if text and self.transcribe_out:
            out.append({"serverContent": {"outputTranscription": {"text": text}}})
        # an utterance whole (the filter's delay taken out); a frame agent's frames as a stream
        wide = resample_whole(audio, RATE, OUTPUT_RATE) if text is not None else self.voice(audio)
        step = round(CHUNK_S * OUTPUT_RATE)
        for a in range(0, len(wide), step):
            data = base64.b64encode(pcm_bytes(wide[a : a + step])).decode()
            part = {"inlineData": {"mimeType": f"audio/pcm;rate={OUTPUT_RATE}", "data": data}}
            out.append({"serverContent": {"modelTurn": {"parts": [part]}}})

    def _actions(self, actions: list[Any], out: list[dict[str, Any]]) -> None:
        calls: list[dict[str, Any]] = []
        for action in actions:
            kind = getattr(action, "type", None) or (
                action.get("type") if isinstance(action, dict) else None
            )
            if kind == "tool_call":
                name = str(getattr(action, "name", None) or action.get("name"))
                arguments = getattr(action, "arguments", None)
                if arguments is None and isinstance(action, dict):
                    arguments = action.get("arguments")
                if isinstance(arguments, str):
                    try:
                        arguments = json.loads(arguments)
                    except ValueError:
                        arguments = {}
                call_id = f"function-call-{next(self.ids)}"
                if name not in self.declared:
                    self.record.undeclared_calls.append(name)
                calls.append({"id": call_id, "name": name, "args": dict(arguments or {})})
            elif kind == "end_call" and END_CALL in self.declared:
                calls.append(
                    {"id": f"function-call-{next(self.ids)}", "name": END_CALL, "args": {}}
                )
        if calls:
            for call in calls:
                self.open_calls[call["id"]] = call["name"]
                self.record.tool_calls.append(call)
            self.turn_open = True
            out.append({"toolCall": {"functionCalls": calls}})
            if self.resumable:  # waiting on its function calls, the session cannot resume
                out.append({"sessionResumptionUpdate": {"resumable": False}})

    def _turn_end(self, out: list[dict[str, Any]]) -> None:
        if not self.turn_open:
            return
        queue = getattr(self.agent, "_queue", None)
        if isinstance(queue, list):
            if queue:
                return
            cut = any(s.position < len(s.audio) for s in self.sent.values())
            self.sent.clear()
        else:
            if self.quiet_frames < 25:  # 0.5 s without a voiced frame ends its turn
                return
            cut = False
        if self.open_calls and not cut:
            return  # the turn goes on once the tools have answered
        content: dict[str, Any] = {"turnComplete": True}
        if cut:
            self.record.interruptions += 1
            out.append({"serverContent": {"interrupted": True}})
        else:
            out.append({"serverContent": {"generationComplete": True}})
        self.turn_open = False
        self.record.turns += 1
        audio_in = round(self.heard_s * TOKENS_PER_AUDIO_S)
        text_in = self.context_tokens + sum(_tokens(t) for t in self.heard_texts)
        audio_out = round(self.turn_audio_s * TOKENS_PER_AUDIO_S)
        self.turn_audio_s = 0.0
        out.append(
            {
                "serverContent": content,
                "usageMetadata": {
                    "promptTokenCount": audio_in + text_in,
                    "responseTokenCount": audio_out,
                    "totalTokenCount": audio_in + text_in + audio_out,
                    "promptTokensDetails": [
                        {"modality": "TEXT", "tokenCount": text_in},
                        {"modality": "AUDIO", "tokenCount": audio_in},
                    ],
                    "responseTokensDetails": [{"modality": "AUDIO", "tokenCount": audio_out}],
                },
            }
        )
        if self.resumable:
            out.append(self.resumption_update())

    def resumption_update(self) -> dict[str, Any]:
        """A new handle for the session as it is now (``sessionResumptionUpdate``)."""
        handle = f"fake-handle-{secrets.token_urlsafe(12)}"
        self.server.handles[handle] = self
        self.record.handles.append(handle)
        return {"sessionResumptionUpdate": {"newHandle": handle, "resumable": True}}

    # -- the wire ------------------------------------------------------------------------------
    def take(self, message: dict[str, Any]) -> None:
        """Check one client message after the setup and queue what it carries."""
        kind = camel(next(iter(message)))
        body = message[next(iter(message))]
        self.record.messages.append(kind)
        if kind == "setup":
            raise Refused("Invalid request: setup must be sent once, as the first message.")
        if not isinstance(body, dict):
            raise Refused(f"Invalid JSON payload received. '{kind}' must be an object.")
        if kind == "realtimeInput":
            self._realtime(body)
        elif kind == "toolResponse":
            self._tool_response(body)
        self.wake.set()

    def _realtime(self, body: dict[str, Any]) -> None:
        _unknown(body, REALTIME_FIELDS, "realtime_input")
        if (
            _pick(body, "activityStart") is not None or _pick(body, "activityEnd") is not None
        ) and (self.automatic):
            raise Refused(
                "Explicit activity control is not supported when automatic activity detection "
                "is enabled."
            )
        blobs = []
        if _pick(body, "audio") is not None:
            blobs.append(_pick(body, "audio"))
        blobs += list(_pick(body, "mediaChunks") or [])
        for blob in blobs:
            if not isinstance(blob, dict):
                raise Refused("Invalid JSON payload received. A blob must be an object.")
            _unknown(blob, {"data", "mimeType", "displayName"}, "realtime_input.audio")
            rate = _rate(str(_pick(blob, "mimeType") or ""))
            if rate is None:
                raise Refused(f"Unsupported mime type: {_pick(blob, 'mimeType')!r}.")
            try:
                # proto3 JSON takes standard and URL-safe base64 (the SDK sends the latter).
                text = str(_pick(blob, "data") or "").replace("-", "+").replace("_", "/")
                raw = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
            except ValueError:
                raise Refused(
                    "Invalid value at 'realtime_input.audio.data' (TYPE_BYTES)."
                ) from None
            if rate not in self.heard:
                self.heard[rate] = Resampler(rate, RATE)
            pcm = self.heard[rate](pcm_audio(raw[: len(raw) // 2 * 2]))
            self.record.audio_in_s += len(pcm) / RATE
            self.heard_s += len(pcm) / RATE
            joined = np.concatenate([self.pending_audio, pcm])
            whole = len(joined) // FRAME * FRAME
            self.frames += [joined[a : a + FRAME] for a in range(0, whole, FRAME)]
            self.pending_audio = joined[whole:]
        text = _pick(body, "text")
        if isinstance(text, str) and text:
            self.record.texts.append(text)
            self.heard_texts.append(text)
            self.texts.append(text)

    def _tool_response(self, body: dict[str, Any]) -> None:
        _unknown(body, {"functionResponses"}, "tool_response")
        responses = _pick(body, "functionResponses") or []
        for response in responses:
            _unknown(response, FUNCTION_RESPONSE_FIELDS, "tool_response.function_responses")
            call_id = response.get("id")
            if not call_id:
                raise Refused(
                    "Invalid request: FunctionResponse must have an `id` field from the "
                    "response of a ToolCall.FunctionCalls."
                )
            if call_id not in self.open_calls or call_id in self.answered:
                raise Refused(
                    f"Invalid request: FunctionResponse id {call_id!r} matches no function call."
                )
        for response in responses:
            name = self.open_calls[response["id"]]
            self.answered.add(response["id"])
            self.record.tool_responses.append(response)
            answer = response.get("response") or {}
            entry: dict[str, Any] = {"tool_call_id": response["id"], "name": name}
            if isinstance(answer, dict) and "output" in answer:
                entry["result"] = answer["output"]
            elif isinstance(answer, dict) and "error" in answer:
                entry["result"] = {"error": answer["error"]}
            else:
                entry["result"] = answer
            self.results.append(entry)

    def attach(self, ws: Any, record: LiveSessionRecord) -> None:
        """Serve the session on this connection (its first, or one that resumed it)."""
        self.ws = ws
        self.record = record
        self.stopping = False
        self.wake.set()  # what the last connection left unsent or unheard goes on

    async def run(self) -> None:
        """Feed what arrives to the agent, one batch at a time, and send what it says.

        It ends when its connection does (``stopping``, or a send to a closed socket),
        never in the middle of a batch: the agent's step runs to its end and what it made
        waits in ``undelivered``, so no message is lost or sent twice."""
        from websockets.exceptions import ConnectionClosed

        with contextlib.suppress(ConnectionClosed):
            while True:
                await self.flush()
                await self.wake.wait()
                self.wake.clear()
                if self.stopping:
                    return
                if not self.frames and not self.texts:
                    continue
                frames, self.frames = self.frames, []
                texts, self.texts = self.texts, []
                results = self.results if frames else []
                if frames:
                    self.results = []
                self.undelivered += await asyncio.to_thread(self.advance, frames, texts, results)

    async def flush(self) -> None:
        while self.undelivered:
            await self.ws.send(json.dumps(self.undelivered[0]))
            self.undelivered.pop(0)


# -- the server ----------------------------------------------------------------------------------
class FakeGeminiLiveServer:
    """The Gemini Live ``BidiGenerateContent`` service on ``wss://127.0.0.1:<port>``."""

    def __init__(
        self,
        *,
        api_key: str = "fake-gemini-live-key",
        agent_factory: Callable[[dict[str, Any]], Any] | None = None,
        models: Iterable[str] | None = None,
        misbehave: str | None = None,
        script: Script | None = None,
        setup_timeout_s: float = 10.0,
        go_away_after_s: float | None = None,
        go_away_time_left_s: float = 1.0,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        if misbehave not in (None, "no_setup", "silent", "close", "garbage"):
            raise ValueError(
                "misbehave: expected None, 'no_setup', 'silent', 'close' or 'garbage', "
                f"got {misbehave!r}"
            )
        if go_away_after_s is not None and go_away_after_s < 0:
            raise ValueError(f"go_away_after_s: expected None or >= 0, got {go_away_after_s}")
        self.api_key = api_key
        self.agent_factory = agent_factory
        self.models = None if models is None else {m.removeprefix("models/") for m in models}
        self.misbehave = misbehave
        self.script = script
        self.setup_timeout_s = setup_timeout_s
        self.go_away_after_s = go_away_after_s
        self.go_away_time_left_s = go_away_time_left_s
        self.host = host
        self._port = port
        self.tls = LoopbackTls.create()
        self.sessions: list[LiveSessionRecord] = []
        self.handles: dict[str, _Session] = {}  # every handle issued -> its session
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: Any = None
        self._stopped: asyncio.Event | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> Self:
        if self._thread is not None:
            return self
        ready = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._serve(ready))
            except BaseException as exc:  # reported to start()
                failure.append(exc)
                ready.set()
            finally:
                loop.close()

        self._thread = threading.Thread(target=serve, name="fake-gemini-live", daemon=True)
        self._thread.start()
        if not ready.wait(10.0) or failure:
            raise RuntimeError(f"the fake Gemini Live server did not start: {failure}")
        return self

    async def _serve(self, ready: threading.Event) -> None:
        from websockets.asyncio.server import serve

        self._stopped = asyncio.Event()
        async with serve(
            self._handle,
            self.host,
            self._port,
            ssl=self.tls.server_context(),
            process_request=self._route,
            max_size=16 * 1024 * 1024,
        ) as server:
            self._server = server
            self._port = server.sockets[0].getsockname()[1]
            ready.set()
            await self._stopped.wait()

    def close(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or self._stopped is None:
            return
        loop.call_soon_threadsafe(self._stopped.set)
        thread.join(10.0)
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- addresses -------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        """What ``HttpOptions(base_url=...)`` takes; the SDK makes it ``wss://``."""
        return f"https://{self.host}:{self._port}"

    @property
    def ca_file(self) -> str:
        """The CA to trust (``SSL_CERT_FILE``, or ``GeminiLiveAgent(ca_file=...)``)."""
        return str(self.tls.ca_file)

    def ssl_context(self) -> ssl.SSLContext:
        return self.tls.client_context()

    def http_options(self, **fields: Any) -> Any:
        """``types.HttpOptions`` that reach this server and trust its certificate."""
        from google.genai import types

        args = dict(fields.pop("async_client_args", None) or {})
        args.setdefault("ssl", self.ssl_context())
        return types.HttpOptions(base_url=self.base_url, async_client_args=args, **fields)

    # -- connections -----------------------------------------------------------------------
    def _route(self, connection: Any, request: Any) -> Any:
        path = urlsplit(request.path).path
        if LIVE_PATH.match(path) is None:
            return connection.respond(
                404, f"The requested URL {path} was not found on this server.\n"
            )
        return None

    async def _handle(self, ws: Any) -> None:
        target = urlsplit(ws.request.path)
        given = (
            ws.request.headers.get("x-goog-api-key")
            or (parse_qs(target.query).get("key", [None])[0])
        )
        record = LiveSessionRecord(path=target.path, api_key=given)
        self.sessions.append(record)

        async def refuse(code: int, message: str) -> None:
            reason = _close_reason(message)
            record.closed = (code, reason)
            await ws.close(code, reason)

        if not given:
            await refuse(
                POLICY,
                "Method doesn't allow unregistered callers (callers without established "
                "identity). Please use API Key or other form of API consumer identity.",
            )
            return
        if given != self.api_key:
            await refuse(INVALID, "API key not valid. Please pass a valid API key.")
            return
        try:
            raw = await asyncio.wait_for(ws.recv(), self.setup_timeout_s)
        except TimeoutError:
            await refuse(INVALID, "Invalid request: no setup message received.")
            return
        except Exception:  # the client went away
            return
        try:
            setup = self._setup(raw)
        except Refused as exc:
            await refuse(exc.code, str(exc))
            return
        record.setup = setup
        record.messages.append("setup")
        if self.misbehave == "no_setup":
            await ws.wait_closed()
            return
        session_id = f"fake-live-{len(self.sessions):04d}-{secrets.token_hex(4)}"
        if self.script is not None:
            await ws.send(json.dumps({"setupComplete": {"sessionId": session_id}}))
            await self.script(ws, setup)
            return
        if self.misbehave is not None:
            await self._misbehave(ws, session_id, refuse)
            return
        resumption = _pick(setup, "sessionResumption")
        handle = _pick(resumption, "handle") if isinstance(resumption, dict) else None
        if handle:
            try:
                session = await self._resume(str(handle))
            except Refused as exc:
                await refuse(exc.code, str(exc))
                return
            record.resumed = str(handle)
        else:
            session = _Session(self, ws, record)
            try:
                await asyncio.to_thread(session.start_agent)
            except Exception as exc:  # the model behind failed
                await refuse(INTERNAL, f"Internal error encountered: {exc}")
                return
            await session.serving.acquire()
        try:
            await self._connection(ws, session, record, session_id, refuse)
        finally:
            session.serving.release()

    async def _resume(self, handle: str) -> _Session:
        """The session a handle names, once the connection that held it has let it go."""
        session = self.handles.get(handle)
        if session is None:
            raise Refused("Session resumption handle not found: it is unknown or expired.", POLICY)
        if _is_open(session.ws):
            raise Refused(UNAVAILABLE, INTERNAL)
        try:  # the old connection's closing: its worker finishes the agent's step
            await asyncio.wait_for(session.serving.acquire(), self.setup_timeout_s)
        except TimeoutError:
            raise Refused(UNAVAILABLE, INTERNAL) from None
        return session

    async def _connection(
        self,
        ws: Any,
        session: _Session,
        record: LiveSessionRecord,
        session_id: str,
        refuse: Callable[[int, str], Awaitable[None]],
    ) -> None:
        """One connection of a session: read it, and let the worker speak on it."""
        session.attach(ws, record)
        await ws.send(json.dumps({"setupComplete": {"sessionId": session_id}}))
        if session.resumable:
            await ws.send(json.dumps(session.resumption_update()))
        worker = asyncio.create_task(session.run())
        ending = (
            asyncio.create_task(self._go_away(ws, session.record, refuse))
            if self.go_away_after_s is not None
            else None
        )
        try:
            async for raw in ws:
                try:
                    message = self._message(raw)
                    session.take(message)
                except Refused as exc:
                    await refuse(exc.code, str(exc))
                    return
                if worker.done():
                    break
        except Exception:  # the client went away
            pass
        finally:
            if ending is not None:
                ending.cancel()
            session.stopping = True
            session.wake.set()
            await asyncio.wait({worker}, timeout=self.setup_timeout_s)
            worker.cancel()
            await asyncio.gather(worker, return_exceptions=True)
        if not worker.cancelled() and worker.exception() is not None:
            await refuse(INTERNAL, f"Internal error encountered: {worker.exception()}")

    async def _go_away(
        self, ws: Any, record: LiveSessionRecord, refuse: Callable[[int, str], Awaitable[None]]
    ) -> None:
        """The connection's end of life: ``goAway``, then the close ``timeLeft`` later."""
        from websockets.exceptions import ConnectionClosed

        assert self.go_away_after_s is not None
        await asyncio.sleep(self.go_away_after_s)
        left = _duration(self.go_away_time_left_s)
        try:
            await ws.send(json.dumps({"goAway": {"timeLeft": left}}))
        except ConnectionClosed:
            return
        record.go_away = left
        await asyncio.sleep(self.go_away_time_left_s)
        if _is_open(ws):
            await refuse(INTERNAL, ABORTED)

    async def _misbehave(self, ws: Any, session_id: str, refuse: Any) -> None:
        await ws.send(json.dumps({"setupComplete": {"sessionId": session_id}}))
        if self.misbehave == "close":
            await asyncio.sleep(0.2)
            await refuse(INTERNAL, "Internal error encountered.")
        elif self.misbehave == "garbage":
            await asyncio.sleep(0.2)
            await ws.send(b"\x00\xffnot json at all")
            await ws.wait_closed()
        else:  # silent: read and drop everything
            async for _ in ws:
                pass

    def _message(self, raw: str | bytes) -> dict[str, Any]:
        try:
            message = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise Refused("Invalid JSON payload received. Unexpected token.") from None
        if not isinstance(message, dict) or len(message) != 1:
            raise Refused(
                "Invalid JSON payload received. Expected one of setup, client_content, "
                "realtime_input, tool_response."
            )
        _unknown(message, CLIENT_MESSAGES, "")
        return message

    def _setup(self, raw: str | bytes) -> dict[str, Any]:
        message = self._message(raw)
        key = next(iter(message))
        if camel(key) != "setup":
            raise Refused("Invalid request: the first message must be a setup message.")
        setup = message[key]
        if not isinstance(setup, dict):
            raise Refused("Invalid JSON payload received. 'setup' must be an object.")
        _unknown(setup, SETUP_FIELDS, "setup")
        model = setup.get("model")
        if not isinstance(model, str) or not model.startswith("models/"):
            raise Refused("Invalid request: setup.model must be of the form models/{model}.")
        if self.models is not None and model.removeprefix("models/") not in self.models:
            raise Refused(
                f"{model} is not found for API version v1beta, or is not supported for "
                "bidiGenerateContent. Call ListModels to see the list of available models "
                "and their supported methods.",
                POLICY,
            )
        config = _pick(setup, "realtimeInputConfig")
        if config is not None:
            _unknown(config, REALTIME_CONFIG_FIELDS, "setup.realtime_input_config")
            detection = _pick(config, "automaticActivityDetection")
            if detection is not None:
                _unknown(
                    detection,
                    ACTIVITY_FIELDS,
                    "setup.realtime_input_config.automatic_activity_detection",
                )
        resumption = _pick(setup, "sessionResumption")
        if resumption is not None:
            if not isinstance(resumption, dict):
                raise Refused(
                    "Invalid JSON payload received. 'session_resumption' must be an object."
                )
            _unknown(resumption, RESUMPTION_FIELDS, "setup.session_resumption")
        invalid = _validate_tools(_pick(setup, "tools"))
        if invalid is not None:
            raise Refused(str(invalid[1]["error"]["message"]).strip())
        return setup


__all__ = ["FakeGeminiLiveServer", "LiveSessionRecord", "LoopbackTls", "Refused", "default_agent"]
