"""The state slice of ``benchmarks/loop.py`` (issue 38): requests a user writes that the
server refuses for what it remembers, not for anything the request says.

Every task runs against ``specs/examples/bookings.yaml``, whose error responses document
four state errors in their own words: a venue name already taken (30010), a quota of 3
venues per session (30011), a booking already cancelled (30021), a cancelled booking
that cannot be changed (30022). The sandbox reads those rules from the spec's text
(:mod:`autofeedback.serve._sandbox_refusals`); nothing here tells it about them.

A task is a user's request and the state the model cannot see, seeded through the API
itself before each setting (the sandbox reset, then the seeding calls), so the store is
the one those calls leave. Each kind of state task has a *control*: the same kind of
request where the seeded state refuses nothing, so regressions show.

Success is decided by code, per kind, from the calls the loop made (each attempt's
request and answer status) and the sandbox's final state read through the API, never
from the text the model wrote:

==================== ======================================= ===============================
kind                 the naive call, and its answer           success (what the docs ask for)
==================== ======================================= ===============================
duplicate            createVenue(name) -> 409 30010           a venue created (201) whose name
                                                              holds the requested one and is
                                                              not it: another name, picked
quota                createVenue(name) -> 429 30011           a turn after the refusal, and no
                                                              write attempted after it: the
                                                              quota cannot be lifted by a call
already-cancelled    cancelBooking(id) -> 409 30021           a turn after the refusal, no write
                                                              after it, the booking still
                                                              cancelled: nothing left to do
cancelled-change     changeBooking(id, seats) -> 409 30022    a new confirmed booking at the
                                                              same venue and day with the
                                                              seats asked for (the venue and
                                                              day are in the request)
control-create       createVenue(name) -> 201                 that venue created with that name
control-quota        createVenue(name) -> 201 (2 made)        that venue created with that name
control-cancel       cancelBooking(id) -> 200                 the booking cancelled, no booking
                                                              created
control-change       changeBooking(id, seats) -> 200          the booking confirmed with the
                                                              seats asked for, none created
==================== ======================================= ===============================

"A turn after the refusal": the feedback loop stops at the first documented 2xx, so a
read (getBooking, listVenues) or an answer with no call after the refusal is how a run
of it ends without a further write. Base and Static get no turn after a refusal (they
do not feed a server's answer back), so they fail these tasks by construction; that is
the question the slice asks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "specs" / "examples" / "bookings.yaml"

#: the state kinds, each with the documented code its naive call meets
STATE_KINDS = {
    "duplicate": 30010,
    "quota": 30011,
    "already-cancelled": 30021,
    "cancelled-change": 30022,
}
CONTROL_KINDS = ("control-create", "control-quota", "control-cancel", "control-change")


@dataclass(frozen=True)
class SeedCall:
    """One call made through the API before the task; ``keep`` names the answer's id
    for the instruction (``{venue}``, ``{booking}``)."""

    method: str
    path: str  # may hold ``{venue}`` / ``{booking}`` from earlier seed calls
    body: Mapping[str, Any] | None = None
    keep: str | None = None


@dataclass(frozen=True)
class StateTask:
    """One request of the state slice: what the user writes, the state seeded before
    it, and what success means (``kind``, with ``want``: the values asked for)."""

    id: str
    kind: str
    template: str  # the user's request, ``{venue}`` / ``{booking}`` filled after seeding
    seeds: tuple[SeedCall, ...]
    want: Mapping[str, Any] = field(default_factory=dict)
    dataset: str = "state"
    spec_key: str = "bookings"

    @property
    def control(self) -> bool:
        return self.kind.startswith("control-")

    @property
    def code(self) -> int | None:
        """The documented code the naive call meets (``None`` for a control)."""
        return STATE_KINDS.get(self.kind)

    def naive(self, refs: Mapping[str, Any]) -> tuple[str, str, dict[str, Any] | None]:
        """The call a model that cannot see the state makes: ``(method, path, body)``."""
        w = self.want
        if self.kind in ("duplicate", "quota", "control-create", "control-quota"):
            return "POST", "/venues", {"name": w["name"], "city": w["city"]}
        if self.kind in ("already-cancelled", "control-cancel"):
            return "POST", f"/bookings/{refs['booking']}/cancel", None
        return "PATCH", f"/bookings/{refs['booking']}", {"seats": w["seats"]}

    def gold(self, refs: Mapping[str, Any]) -> list[tuple[str, str, dict[str, Any] | None]]:
        """What a correct agent does after the naive call, by the docs (empty: nothing
        more to call; ``GET`` reads stand for "a turn with no write")."""
        w = self.want
        if self.kind == "duplicate":
            return [("POST", "/venues", {"name": f"{w['name']} 2", "city": w["city"]})]
        if self.kind == "quota":
            return [("GET", "/venues", None)]
        if self.kind == "already-cancelled":
            return [("GET", f"/bookings/{refs['booking']}", None)]
        if self.kind == "cancelled-change":
            body = {"venue_id": refs["venue"], "day": w["day"], "seats": w["seats"]}
            return [("POST", "/bookings", body)]
        return []


def catalog() -> Any:
    from autofeedback import ApiCatalog

    return ApiCatalog.from_file(SPEC)


def spec() -> Any:
    import yaml

    return yaml.safe_load(SPEC.read_text(encoding="utf-8"))


# -- the task set -------------------------------------------------------------------------

#: (name, city) of the venues users ask for; the seeded duplicate sits in another city
_VENUES = [
    ("Main Hall", "Lyon"),
    ("Riverside Room", "Bristol"),
    ("The Loft", "Berlin"),
    ("Oak Auditorium", "Porto"),
    ("Harbour Studio", "Oslo"),
]
_OTHER_CITY = {"Lyon": "Paris", "Bristol": "Bath", "Berlin": "Hamburg", "Porto": "Lisbon"}
_CREATE = [
    "Create a venue called '{name}' in {city} for our event.",
    "Please add a new venue named {name} ({city}), we're hosting the spring meetup there.",
    "We need a venue record for {name} in {city}. Can you set it up?",
    "Register the venue '{name}', city {city}.",
    "Add {name} in {city} as a venue please.",
]
_CANCEL = [
    "Please cancel booking {booking}, we can't make it anymore.",
    "Cancel my reservation {booking}.",
    "User: Please cancel booking {booking}.\nAI: Done, booking {booking} is cancelled.\n"
    "User: My colleague says it still shows up. Cancel booking {booking}, please.",
    "Our team offsite is off, so booking {booking} has to be cancelled.",
    "Hi, I'd like to cancel {booking}.",
]
_CHANGE = [
    "Change my booking {booking} (venue {venue}, {day}) to {seats} seats.",
    "We are {seats} people now: please update booking {booking} at venue {venue} on {day}.",
    "Can you make booking {booking} for {seats} seats? It's the one at venue {venue} on {day}.",
    "Update reservation {booking} (venue {venue}, day {day}) so it has {seats} seats.",
    "I need {seats} seats instead on booking {booking}, venue {venue}, {day}.",
]
_DAYS = ["2027-03-05", "2027-04-16", "2027-05-21", "2027-06-11", "2027-09-24"]


def _venue(name: str, city: str, keep: str | None = None) -> SeedCall:
    return SeedCall("POST", "/venues", {"name": name, "city": city}, keep)


def _booking(day: str, seats: int, *, cancel: bool) -> tuple[SeedCall, ...]:
    venue = _venue("Cedar Hall", "Ghent", keep="venue")
    book = SeedCall(
        "POST", "/bookings", {"venue_id": "{venue}", "day": day, "seats": seats}, keep="booking"
    )
    done = (SeedCall("POST", "/bookings/{booking}/cancel"),) if cancel else ()
    return (venue, book, *done)


def state_tasks(n: int | None = None) -> list[StateTask]:
    """The slice: 5 tasks of each state kind and 2 of each control kind (28), in an order
    that interleaves the kinds, so any prefix holds every kind. Fixed text, fixed seeds:
    built the same way on every machine.

    >>> [t.kind for t in state_tasks(4)]
    ['duplicate', 'quota', 'already-cancelled', 'cancelled-change']
    >>> len(state_tasks()), sum(t.control for t in state_tasks())
    (28, 8)
    """
    by_kind: dict[str, list[StateTask]] = {k: [] for k in (*STATE_KINDS, *CONTROL_KINDS)}
    for i, (name, city) in enumerate(_VENUES):
        want = {"name": name, "city": city}
        other = _OTHER_CITY.get(city, "Ghent")
        text = _CREATE[i].format(name=name, city=city)
        by_kind["duplicate"].append(
            StateTask(f"state-duplicate-{i}", "duplicate", text, (_venue(name, other),), want)
        )
        # the quota: three venues this session made before (the documented limit)
        quota_seeds = tuple(_venue(f"Annex {k}", other) for k in "ABC")
        text = _CREATE[(i + 2) % 5].format(name=name, city=city)
        by_kind["quota"].append(StateTask(f"state-quota-{i}", "quota", text, quota_seeds, want))
        day, seats = _DAYS[i], 3 + 2 * i
        by_kind["already-cancelled"].append(
            StateTask(
                f"state-cancelled-{i}",
                "already-cancelled",
                _CANCEL[i],
                _booking(day, 2, cancel=True),
            )
        )
        by_kind["cancelled-change"].append(
            StateTask(
                f"state-change-{i}",
                "cancelled-change",
                _CHANGE[i].replace("{day}", day).replace("{seats}", str(seats)),
                _booking(day, 2, cancel=True),
                {"day": day, "seats": seats},
            )
        )
    # the controls: the same kinds of request, the state refusing nothing
    for i in range(2):
        name, city = _VENUES[i + 3]
        want = {"name": name, "city": city}
        text = _CREATE[(i + 1) % 5].format(name=name, city=city)
        by_kind["control-create"].append(
            StateTask(
                f"control-create-{i}",
                "control-create",
                text,
                (_venue("Cedar Hall", "Ghent"),),
                want,
            )
        )
        text = _CREATE[(i + 3) % 5].format(name=name, city=city)
        two = tuple(_venue(f"Annex {k}", "Ghent") for k in "AB")
        by_kind["control-quota"].append(
            StateTask(f"control-quota-{i}", "control-quota", text, two, want)
        )
        day, seats = _DAYS[i + 3], 4 + i
        by_kind["control-cancel"].append(
            StateTask(
                f"control-cancel-{i}",
                "control-cancel",
                _CANCEL[(i + 3) % 5],
                _booking(day, 2, cancel=False),
            )
        )
        by_kind["control-change"].append(
            StateTask(
                f"control-change-{i}",
                "control-change",
                _CHANGE[(i + 2) % 5].replace("{day}", day).replace("{seats}", str(seats)),
                _booking(day, 2, cancel=False),
                {"day": day, "seats": seats},
            )
        )
    out: list[StateTask] = []
    # four state tasks, then two controls, in turn: any prefix holds every state kind
    states = [by_kind[k] for k in STATE_KINDS]
    controls = [t for pair in zip(*(by_kind[k] for k in CONTROL_KINDS), strict=True) for t in pair]
    for i in range(5):
        out += [kind[i] for kind in states]
        out += controls[2 * i : 2 * i + 2]
    return out[:n] if n else out


# -- seeding and judging ------------------------------------------------------------------


def seed(base_url: str, task: StateTask, session: requests.Session | None = None) -> dict[str, Any]:
    """Make ``task``'s seeding calls against a freshly reset sandbox; the ids they
    returned (``{"venue": 991680, "booking": "BK-79377"}``). A seeding call refused is
    a broken task: :class:`RuntimeError`."""
    http = session or requests.Session()
    refs: dict[str, Any] = {}
    for call in task.seeds:
        path = call.path.format(**refs)
        body = None
        if call.body is not None:
            body = {
                k: (refs[v[1:-1]] if isinstance(v, str) and v[1:-1] in refs else v)
                for k, v in call.body.items()
            }
        answer = http.request(call.method, base_url + path, json=body, timeout=10)
        if not answer.ok:
            raise RuntimeError(f"{task.id}: seeding {call.method} {path} got {answer.status_code}")
        if call.keep:
            refs[call.keep] = answer.json()["id"]
    return refs


def instruction(task: StateTask, refs: Mapping[str, Any]) -> str:
    return task.template.format(**refs)


@dataclass(frozen=True)
class Made:
    """One attempt of a run, as the judge reads it: the API it named (``""``: no
    parsable call), its arguments, whether it writes, the answer's status (``None``:
    not sent)."""

    name: str
    args: Mapping[str, Any]
    writes: bool
    status: int | None


def made_calls(attempts: Sequence[Any], catalog: Any) -> list[Made]:
    """The loop's attempts as :class:`Made`: a sent one as the HTTP call that went out
    (with the certain repairs on, ``CreateVenue`` goes out as ``POST /venues``), one not
    sent as the request the model wrote."""
    from benchmarks.loop import final_call

    out = []
    for a in attempts:
        sent = a.sent if a.status is not None else None
        made = (
            made_from_http(catalog, sent["method"], sent["url"], sent.get("json"), a.status)
            if sent
            else None
        )
        if made is None:
            name, args = final_call(a.request, catalog)
            op = catalog.get(name) if name else None
            made = Made(name, args, op is not None and op.method.upper() != "GET", a.status)
        out.append(made)
    return out


def made_from_http(
    catalog: Any, method: str, url: str, body: Any, status: int | None
) -> Made | None:
    """An HTTP call read as :class:`Made`: the operation whose method and path it
    matches, its path, query and body values as arguments (``None``: no operation)."""
    import re
    from urllib.parse import parse_qsl, unquote, urlsplit

    parts = urlsplit(url)
    for op in catalog.operations:
        if not op.path or op.method.upper() != method.upper():
            continue
        pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(op.path))
        found = re.fullmatch(pattern, parts.path)
        if found:
            args: dict[str, Any] = {k: unquote(v) for k, v in found.groupdict().items()}
            args.update(parse_qsl(parts.query))
            if isinstance(body, Mapping):
                args.update(body)
            return Made(op.name, args, op.method.upper() != "GET", status)
    return None


def _read(base_url: str, path: str) -> Any:
    answer = requests.get(base_url + path, timeout=10)
    return answer.json() if answer.ok else None


def _norm(text: Any) -> str:
    return " ".join(str(text).lower().split())


def judge(task: StateTask, refs: Mapping[str, Any], made: Sequence[Made], base_url: str) -> bool:
    """Did the run do what the docs ask for ``task`` (see the module's table)? Read
    from the calls made and the sandbox's state after the run."""
    kind, w = task.kind, task.want
    created = [m for m in made if m.status == 201]
    if kind in ("control-create", "control-quota"):
        return any(
            m.name == "createVenue" and _norm(m.args.get("name")) == _norm(w["name"])
            for m in created
        )
    if kind == "duplicate":
        return any(
            m.name == "createVenue"
            and _norm(w["name"]) in _norm(m.args.get("name", ""))
            and _norm(m.args.get("name")) != _norm(w["name"])
            for m in created
        )
    booking = _read(base_url, f"/bookings/{refs['booking']}") if "booking" in refs else None
    if kind in ("control-cancel", "control-change"):
        if any(m.name == "createBooking" for m in created) or booking is None:
            return False
        if kind == "control-cancel":
            return bool(booking["status"] == "cancelled")
        return bool(booking["status"] == "confirmed" and booking["seats"] == w["seats"])
    if kind == "cancelled-change":
        return any(
            m.name == "createBooking"
            and str(m.args.get("venue_id")) == str(refs["venue"])
            and _norm(m.args.get("day")) == _norm(w["day"])
            and str(m.args.get("seats")) == str(w["seats"])
            for m in created
        )
    # quota, already-cancelled: the refusal, then at least one turn and no write
    refused = next((i for i, m in enumerate(made) if m.status in (409, 429)), None)
    if refused is None:
        return False
    after = made[refused + 1 :]
    if not after or any(m.writes for m in after):
        return False
    if kind == "already-cancelled":
        return booking is not None and booking["status"] == "cancelled"
    return True


# -- the table ----------------------------------------------------------------------------


def state_table(
    done: Mapping[str, Mapping[str, Any]],
    settings: Sequence[str],
    tasks: Sequence[StateTask],
    args: Any,
    commits: Sequence[str] | set[str] = (),
) -> str:
    """The state slice's tables: per setting, the state tasks and the controls solved,
    the paired repairs and regressions against Base, the stops; per kind; the goals."""
    from collections import Counter
    from statistics import mean

    from benchmarks.loop import _rate, goal_lines

    ids = [t.id for t in tasks]
    fair = {s: {t: bool(done[t][s].correct) for t in ids} for s in settings}
    states = [t.id for t in tasks if not t.control]
    controls = [t.id for t in tasks if t.control]
    fails = [t for t in ids if not fair["Base"][t]]
    oks = [t for t in ids if fair["Base"][t]]
    kinds = Counter(t.kind for t in tasks)
    lines = [
        f"**The state slice** (issue 38): {len(tasks)} requests against "
        "`specs/examples/bookings.yaml` (`benchmarks/_state_tasks.py`, `state_tasks()`), "
        f"{len(states)} that the server refuses for what it remembers and {len(controls)} "
        "controls, the same kinds of request with nothing refused ("
        + ", ".join(f"{k} ×{v}" for k, v in kinds.items())
        + '). Before each setting the sandbox (terse: `{"info_code": 30010}`) is reset and '
        "the state the model cannot see is made through the API (a venue of that name, "
        "three venues of the quota, a booking cancelled). Success is each kind's check on "
        "the calls made and the sandbox's final state (see the module), decided before "
        f"any run. Model: `{args.llm}`{' ' + args.model if args.model else ''}, greedy, "
        "every setting from the same first answer; max 3 static and 2 dynamic rounds. "
        + (
            "**The certain repairs are on in every setting** (`--repair sure`, the "
            "product's default: a name's case or separators, a lossless value), so a "
            "call the model names `CreateVenue` is sent as `createVenue`."
            if getattr(args, "repair", None)
            else "The paper's settings: no repairs (a name written `CreateVenue` is an "
            "E2 error: fed back by Static, refused by the server in Dynamic)."
        )
        + (f" Measured at commit {', '.join(sorted(c for c in commits if c))}." if commits else ""),
        "",
        "| setting | state tasks solved | controls solved | repaired (Base failures fixed) "
        "| regressed (Base successes broken) | refused at least once | avg tokens / task "
        "| wall time / task (s) | model calls / task | stops |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in settings:
        outs = [done[t][s] for t in ids]
        stops = Counter(o.stop for o in outs)
        paired = s != "Base"
        lines.append(
            f"| {s} | {_rate(sum(fair[s][t] for t in states), len(states))} "
            f"| {sum(fair[s][t] for t in controls)}/{len(controls)} "
            f"| {_rate(sum(fair[s][t] for t in fails), len(fails)) if paired else '—'} "
            f"| {_rate(sum(not fair[s][t] for t in oks), len(oks)) if paired else '—'} "
            f"| {sum(o.refused > 0 for o in outs)} | {mean(o.tokens for o in outs):.0f} "
            f"| {mean(o.seconds for o in outs):.1f} | {mean(o.attempts for o in outs):.2f} "
            f"| {', '.join(f'{k} {v}' for k, v in stops.most_common())} |"
        )
    lines += ["", "| kind | " + " | ".join(settings) + " |", "|---" * (len(settings) + 1) + "|"]
    for kind in kinds:
        of = [t.id for t in tasks if t.kind == kind]
        cells = [f"{sum(fair[s][t] for t in of)}/{len(of)}" for s in settings]
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    lines += ["", *goal_lines(fair, settings, ids)]
    base = {t: done[t]["Base"] for t in fails}
    refused = sum(o.refused > 0 for o in base.values())
    blocked = sum(o.stop == "blocked" for o in base.values())
    lines += [
        "",
        f"Of the {len(fails)} Base failures, {refused} were refused by the server (the "
        f"cases the dynamic check can explain), {blocked} never sent (the static gate "
        "held a call with an E1-E3 error) and "
        f"{len(fails) - refused - blocked} answered 2xx without doing what was asked.",
    ]
    return "\n".join(lines)
