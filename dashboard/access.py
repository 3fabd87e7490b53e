"""Who may do what on the dashboard, and what it may launch: the operator's access file.

A dashboard on this machine's loopback serves one person, who may do everything it
offers. Served to others (``evalhouse dashboard --address``), it is a door into the server:
its launch form could send every test query to any URL or run a paid judge on the server's
key, and a reviewer would be whoever they typed. So:

- what can be launched is a list, never free text: by default the local judge, embedder
  and recorded answers, plus the hosted ones whose API key is set in the server's
  environment; the operator may narrow or widen it in ``$EVALHOUSE_HOME/dashboard.yaml``;
- beyond loopback, sign-in is required: a reverse proxy that signs users in (oauth2-proxy,
  an identity-aware proxy) passes the user in a header the operator names
  (``sign_in.user_header``), and the dashboard refuses to start without one;
- a signed-in user reviews under their own name, and launching (or cancelling) runs and
  writing reviews are permissions the operator grants by user (``permissions``); by
  default everyone signed in may review and nobody may launch.

```yaml
launch:                # what the forms offer (each list optional)
  judges: [local, "openai:gpt-4o-mini"]
  embedders: [local]
  targets: [recorded]
sign_in:
  user_header: X-Forwarded-Email
permissions:
  launch: [alice@example.com]
  review: ["*"]
```
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import InputError
from engine.models import RunConfig
from engine.providers import API_KEY_ENV
from engine.verifier.choice import LOCAL_VERIFIERS

ACCESS_FILE = "dashboard.yaml"
"""The operator's access file, in the evalhouse home."""
MAX_ACCESS_BYTES = 64_000
"""An access file is a few lines; a bigger one is not one."""
EVERYONE = "*"
"""In a permission list: every signed-in user."""
LOCAL_USER = "local"
"""Who uses a dashboard served on loopback without sign-in."""

LOCAL_JUDGES = ("local",)
LOCAL_EMBEDDERS = ("local",)
LOCAL_TARGETS = ("recorded",)
HOSTED_JUDGES: Mapping[str, str] = {
    "openai:gpt-4o-mini": "openai",
    "anthropic:claude-3-5-haiku-latest": "anthropic",
}
"""Hosted judges offered by default when their provider's key is set."""
HOSTED_EMBEDDERS: Mapping[str, str] = {"openai:text-embedding-3-small": "openai"}
HOSTED_TARGETS: Mapping[str, str] = {"openai:gpt-4o-mini": "openai"}


class AccessError(InputError):
    """The access file cannot be read, or names something it may not."""


class AccessRefused(AccessError):
    """Every page is refused: the access file of a dashboard that requires sign-in is
    gone, unreadable or no longer asks for sign-in. Its message names no path (whoever
    sees it may not be signed in); the operator's log has the detail."""


ACCESS_MISSING = (
    "Refused: the dashboard's access file is missing; every page is refused until the "
    "operator restores it."
)
ACCESS_UNREADABLE = (
    "Refused: the dashboard's access file cannot be read; every page is refused until the "
    "operator fixes it."
)
ACCESS_WITHOUT_SIGN_IN = (
    "Refused: this dashboard was started with sign-in and its access file no longer asks "
    "for it; every page is refused until the operator restores sign_in.user_header."
)


@dataclass(frozen=True)
class Access:
    """The operator's choices; ``load_access`` reads them."""

    judges: tuple[str, ...]
    """Judge specs the forms offer."""
    embedders: tuple[str, ...]
    """Embedder specs the forms offer."""
    targets: tuple[str, ...]
    """Target specs the forms offer."""
    user_header: str | None = None
    """Request header a trusted sign-in proxy sets to the user; None: no sign-in."""
    launchers: frozenset[str] | None = None
    """Users who may launch and cancel runs; None: the default (see ``may_launch``)."""
    reviewers: frozenset[str] | None = None
    """Users who may write reviews; None: the default (see ``may_review``)."""

    def may_launch(self, user: str | None) -> bool:
        """Whether ``user`` may launch runs: anyone on an unshared dashboard, else only
        those the operator granted."""
        if self.user_header is None:
            return True
        return user is not None and _granted(self.launchers, user, default=False)

    def may_review(self, user: str | None) -> bool:
        """Whether ``user`` may write reviews: anyone on an unshared dashboard, else
        every signed-in user unless the operator named who."""
        if self.user_header is None:
            return True
        return user is not None and _granted(self.reviewers, user, default=True)

    def refusal(self, config: RunConfig) -> str | None:
        """Why ``config``'s own settings may not be launched from the dashboard; None when
        they may."""
        for what, spec, allowed in (
            ("judge", config.judge, self.judges),
            ("embedder", config.embedder, self.embedders),
            ("target", config.target, self.targets),
        ):
            if spec not in allowed:
                return f"the {what} {spec!r} is not one this dashboard may launch"
        if config.verifier not in LOCAL_VERIFIERS and config.verifier not in self.judges:
            return f"the verifier {config.verifier!r} is not one this dashboard may launch"
        for spec in config.jury:
            if spec not in self.judges:
                return f"the judge {spec!r} is not one this dashboard may launch"
        if config.executor != "local":
            return "Ray runs are launched from the command line"
        # What a run's candidate and grader files call is checked against these lists by
        # ``dashboard.experiment.launch_refusal``, the one check every launch passes.
        return None


def _granted(names: frozenset[str] | None, user: str, *, default: bool) -> bool:
    if names is None:
        return default
    return EVERYONE in names or user in names


def _keyed(hosted: Mapping[str, str], environ: Mapping[str, str]) -> tuple[str, ...]:
    return tuple(spec for spec, provider in hosted.items() if environ.get(API_KEY_ENV[provider]))


def default_access(environ: Mapping[str, str] | None = None) -> Access:
    """The local choices and the hosted ones whose key is set; no sign-in."""
    env = os.environ if environ is None else environ
    return Access(
        judges=LOCAL_JUDGES + _keyed(HOSTED_JUDGES, env),
        embedders=LOCAL_EMBEDDERS + _keyed(HOSTED_EMBEDDERS, env),
        targets=LOCAL_TARGETS + _keyed(HOSTED_TARGETS, env),
    )


def _names(raw: Any, where: str) -> tuple[str, ...]:
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        raise AccessError(f"{where}: expected a list of names")
    names = tuple(str(x).strip() for x in raw)
    if not all(names):
        raise AccessError(f"{where}: an empty name")
    return names


def _section(data: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = data.get(key) or {}
    if not isinstance(value, Mapping):
        raise AccessError(f"{where}: '{key}' must be a mapping")
    unknown = sorted(
        set(value)
        - {
            "launch": {"judges", "embedders", "targets"},
            "sign_in": {"user_header"},
            "permissions": {"launch", "review"},
        }[key]
    )
    if unknown:
        raise AccessError(f"{where}: unknown key '{key}.{unknown[0]}'")
    return value


def parse_access(data: Any, where: str, environ: Mapping[str, str] | None = None) -> Access:
    """The access of a parsed access file (``where`` names it in messages)."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise AccessError(f"{where}: expected a mapping of launch, sign_in and permissions")
    unknown = sorted(set(data) - {"launch", "sign_in", "permissions"})
    if unknown:
        raise AccessError(f"{where}: unknown key '{unknown[0]}'")
    base = default_access(environ)
    launch = _section(data, "launch", where)
    sign_in = _section(data, "sign_in", where)
    grants = _section(data, "permissions", where)
    header = sign_in.get("user_header")
    if header is not None and (not isinstance(header, str) or not header.strip()):
        raise AccessError(f"{where}: sign_in.user_header must name a header")

    def listed(section: Mapping[str, Any], key: str, prefix: str) -> tuple[str, ...] | None:
        return _names(section[key], f"{where}: {prefix}.{key}") if key in section else None

    judges = listed(launch, "judges", "launch")
    embedders = listed(launch, "embedders", "launch")
    targets = listed(launch, "targets", "launch")
    for what, specs in (("targets", targets or ()),):
        for spec in specs:
            if spec.startswith("http:") and "://" not in spec:
                raise AccessError(f"{where}: launch.{what}: {spec!r} is not http:URL")
    launchers = listed(grants, "launch", "permissions")
    reviewers = listed(grants, "review", "permissions")
    return Access(
        judges=judges if judges is not None else base.judges,
        embedders=embedders if embedders is not None else base.embedders,
        targets=targets if targets is not None else base.targets,
        user_header=header.strip() if isinstance(header, str) else None,
        launchers=frozenset(launchers) if launchers is not None else None,
        reviewers=frozenset(reviewers) if reviewers is not None else None,
    )


def load_access(home: Path, environ: Mapping[str, str] | None = None) -> Access:
    """The access file of ``home`` (``dashboard.yaml``), or the defaults without one.
    Raises AccessError naming the file and what is wrong."""
    path = home / ACCESS_FILE
    # Only a name that is not there at all means "no access file": a directory, a
    # dangling link or a file this process may not read in its place is an error, never
    # the defaults.
    if not path.exists() and not path.is_symlink():
        return default_access(environ)
    import yaml

    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_ACCESS_BYTES + 1)
        if len(raw) > MAX_ACCESS_BYTES:
            raise AccessError(f"{path}: larger than {MAX_ACCESS_BYTES} bytes")
        data = yaml.safe_load(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise AccessError(f"{path}: cannot read it: {type(exc).__name__}") from None
    return parse_access(data, str(path), environ)


def served_access(
    home: Path, *, sign_in_required: bool, environ: Mapping[str, str] | None = None
) -> Access:
    """The access of a running dashboard, failing closed: once a server requires sign-in
    it does so for its whole life, and a missing, unreadable or sign-in-less access file
    then refuses every page; a broken file refuses every page on any dashboard. Raises
    AccessRefused with a message that names no path."""
    path = home / ACCESS_FILE
    if sign_in_required and not path.exists() and not path.is_symlink():
        raise AccessRefused(ACCESS_MISSING)
    try:
        rules = load_access(home, environ)
    except AccessError as exc:
        raise AccessRefused(ACCESS_UNREADABLE) from exc
    if sign_in_required and rules.user_header is None:
        raise AccessRefused(ACCESS_WITHOUT_SIGN_IN)
    return rules


def is_loopback(address: str) -> bool:
    """Whether a bind address serves this machine only."""
    if address.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip().strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: whoever it resolves for may reach it
