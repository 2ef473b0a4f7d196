"""Which tools a request sees: the compiled tables beside the runtime, evaluated per request.

All policy layers were resolved at build time into ``tables.json``; a request only parses its
session key (``_sessions``), matches its group and sender (``_groups``) and intersects a few
precomputed bitsets (``_tables``). ``resolve`` memoizes ``resolve_uncached``. Standard library
only; thread-safe (the only shared mutable state is caches whose entries are immutable and
recomputable).
"""

from __future__ import annotations

from typing import Final, NamedTuple

from ._groups import _group_stack, _refuse_ignored_group, _requester_stacks
from ._sessions import (
    _CHANNEL_ALIASES,
    _NO_SESSION,
    _PICKED,
    _SESSIONS,
    _pick_agent,
    _Session,
    _session,
    _shaped_session,
    _text,
    channel_of,
)
from ._tables import (
    _ALWAYS,
    _AP_BIT,
    _AP_VARIANTS,
    _CACHE_LIMIT,
    _CALLER_ONLY,
    _CORE,
    _GATES,
    _GLOBAL_BP,
    _HOST_ONLY,
    _LEAF_DEPTH,
    _LEAN,
    _NON_OPTIONAL,
    _NON_OWNER,
    _NOT_CALLER_ONLY,
    _NOT_CRON_DROP,
    _NOT_HOST_ONLY,
    _PROVIDER_PROFILES,
    _RESULTS,
    _SUBAGENT_LEAF,
    _SUBAGENT_NONLEAF,
    RULES,
    AgentRecord,
    Stack,
    ToolSet,
    _stack,
    _toolset,
)

# resolve's keywords, in the order of the request tuple both resolvers hand to _evaluate
# (the first fourteen are strings)
_KEYWORDS: Final = (
    "agent_id",
    "session_key",
    "spawned_by",
    "model_provider",
    "model_id",
    "message_provider",
    "account_id",
    "group_id",
    "group_space",
    "group_channel",
    "sender_id",
    "sender_e164",
    "sender_username",
    "sender_name",
    "sender_is_owner",
    "sandboxed",
    "spawn_depth",
    "strict",
)
_Str = str | None
# one request as resolve's keywords give it, unchecked, in _KEYWORDS' order
_Request = tuple[
    _Str, _Str, _Str, _Str, _Str, _Str, _Str, _Str, _Str, _Str, _Str, _Str, _Str, _Str,
    bool | None, bool | None, int | None, bool,
]  # fmt: skip


def _check(request: _Request) -> None:
    """Refuse ill-typed context values (TypeError naming the keyword): a malformed value is
    never read as "allow more". Blank strings are treated as absent by the caller."""
    values = dict(zip(_KEYWORDS, request, strict=True))
    for key in _KEYWORDS[:14]:
        value = values[key]
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{key} must be a str or None, got {type(value).__name__}")
    for key in ("sender_is_owner", "sandboxed"):
        value = values[key]
        if value is not None and not isinstance(value, bool):
            raise TypeError(f"{key} must be a bool or None, got {type(value).__name__}")
    depth = values["spawn_depth"]
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 0):
        raise TypeError(f"spawn_depth must be a non-negative int or None, got {depth!r}")


def _model_in(models: frozenset[str], provider: str | None, model: str | None) -> bool:
    if not model:
        return False
    return model in models or ("/" not in model and f"{provider}/{model}" in models)


_NO_WHERE: Final[tuple[str | None, str | None]] = (None, None)

# (apply_patch variant, provider, model, message channel) -> the tools present (bounded)
_PRESENT: dict[tuple[int, str | None, str | None, str | None], int] = {}


def _present(variant: int, provider: str | None, model: str | None, channel: str | None) -> int:
    """Tools that exist for this apply_patch config, provider, model and message channel
    (cached: one tuple hash, the strings' hashes are cached)."""
    key = (variant, provider, model, channel)
    present = _PRESENT.get(key)
    if present is None:
        present = _gates(provider, model, channel)
        if present & _AP_BIT and not _apply_patch_ok(variant, provider, model):
            present &= ~_AP_BIT
        if len(_PRESENT) >= _CACHE_LIMIT:
            _PRESENT.clear()
        _PRESENT[key] = present
    return present


class _Base(NamedTuple):
    """What a request's agent, provider, model, message channel and flags decide before its
    other layers (group, sender, sandbox, subagent): every step of the tables is an AND,
    so the agent's and provider stacks are applied once here for all such requests."""

    present: int  # the tools present, masked by the flags
    kept: int  # of those, what the base stacks' fixed parts and layers keep
    admitted: int  # kept, admitted by the base stacks' allow lists alone (no more stacks)
    mention: int  # the base stacks' admission inputs (_admission)
    flags: int
    preserve: int


# (agent record index, provider, model, message channel, flags) -> _Base (bounded). Flags:
# 1 host-only tools removed (a sandboxed run), 2 caller-only tools removed (not a channel
# caller), 4 owner-only tools removed (not the owner).
_BASES: dict[tuple[int, str | None, str | None, str | None, int], _Base] = {}


def _base(
    record: AgentRecord, provider: str | None, model: str | None, channel: str | None, flags: int
) -> _Base:
    present = _present(record.apply_patch, provider, model, channel)
    if flags & 1:
        present &= _NOT_HOST_ONLY
    if flags & 2:
        present &= _NOT_CALLER_ONLY
    if flags & 4:
        present &= _NON_OWNER
    stacks = [record.stack]
    if provider is not None:
        stacks.extend(_provider_stacks(record, provider, model))
    kept, mention, stack_flags, preserve = present, 0, 0, 0
    for stack in stacks:
        mention |= stack.mention
        stack_flags |= stack.flags
        preserve |= stack.preserve
        kept = _kept(kept, stack, present)
    admitted = kept & _admission(mention, stack_flags)
    if record.lean:
        admitted &= _lean_keep(preserve)
    base = _Base(present, kept, admitted, mention, stack_flags, preserve)
    if len(_BASES) >= _CACHE_LIMIT:
        _BASES.clear()
    _BASES[(record.row, provider, model, channel, flags)] = base
    return base


def _widened(base: _Base, stacks: list[Stack], lean: bool) -> int:
    """The tools of a request whose own stacks change what the allow lists admit: the
    base's kept tools through those stacks, then the admission of all stacks."""
    bits, mention, flags, preserve = base.kept, base.mention, base.flags, base.preserve
    for stack in stacks:
        mention |= stack.mention
        flags |= stack.flags
        preserve |= stack.preserve
        bits = _kept(bits, stack, base.present)
    bits &= _admission(mention, flags)
    return bits & _lean_keep(preserve) if lean else bits


def _kept(bits: int, stack: Stack, present: int) -> int:
    """``bits`` less what one stack strips: its fixed part, and each layer's allow or deny
    pass (a layer's witness present: its allow list applies)."""
    bits &= stack.fixed
    for witness, allow_pass, deny_pass in stack.layers:
        bits &= allow_pass if witness & present else deny_pass
    return bits


def _apply_patch_ok(variant: int, provider: str | None, model: str | None) -> bool:
    """``applyPatch.enabled`` is true and the model passes ``allowModels`` (if any)."""
    enabled, models = _AP_VARIANTS[variant]
    if not enabled:
        return False
    if not models:
        return True
    if not model:
        return False
    full = model if "/" in model or not provider else f"{provider}/{model}"
    return any(m and m in (model, full) for m in models)


def _gates(provider: str | None, model: str | None, channel: str | None) -> int:
    present: int = _ALWAYS
    for bits, providers, models, channels, excluded in _GATES:
        if providers is not None and provider not in providers:
            continue
        if channels is not None and channel not in channels:
            continue
        if excluded is not None and channel in excluded:
            continue
        if models is None or _model_in(models, provider, model):
            present |= bits
    return present


def _full_model_key(provider: str, model: str | None) -> str | None:
    """The byProvider key a model names: ``provider/model``; a model id that holds "/" is the
    whole key in 2026.3.2 and is prefixed like any other in 2026.9.6."""
    if not model:
        return None
    return f"{provider}/{model}" if RULES.slash_model_is_prefixed or "/" not in model else model


def _provider_stacks(record: AgentRecord, provider: str, model: str | None) -> tuple[Stack, ...]:
    """Global and agent byProvider layers plus the provider-profile step."""
    full = _full_model_key(provider, model)
    ge = (_GLOBAL_BP.get(full) if full else None) or _GLOBAL_BP.get(provider)
    bp = record.by_provider
    ae = ((bp.get(full) if full else None) or bp.get(provider)) if bp else None
    stacks: list[Stack] = []
    profile = also = -1
    if ae is not None:
        stacks.append(ae.stack)
        profile, also = ae.profile, ae.also
    if ge is not None:
        stacks.append(ge.stack)
        profile = ge.profile if profile < 0 else profile
        also = ge.also if also < 0 else also
    if profile >= 0:
        chosen = _PROVIDER_PROFILES[profile][also + 1]
        if chosen >= 0:
            stacks.append(_stack(chosen))
    return tuple(stacks)


def _admitted(present: int, stacks: list[Stack], lean: bool) -> int:
    """The present tools the request's allow lists let exist before any layer filters:
    optional plugin tools only when mentioned (2026.9: plugin tools as
    createPluginToolAllowlist admits them), minus the localModelLean drops."""
    mention = flags = preserve = 0
    for stack in stacks:
        mention |= stack.mention
        flags |= stack.flags
        preserve |= stack.preserve
    bits = present & _admission(mention, flags)
    return bits & _lean_keep(preserve) if lean else bits


def _admission(mention: int, flags: int) -> int:
    """The tools the allow lists let exist (``mention``, ``flags``: the OR of the stacks')."""
    if RULES.plugin_admission:
        # createPluginToolAllowlist: the plugin tools some allow list admits; the other
        # non-optional ones too while no list has entries or one is alsoAllow-only
        defaults = not flags & 1 or bool(flags & 2)
        return mention | (_NON_OPTIONAL if defaults else _CORE)
    return _NON_OPTIONAL | mention


def _lean_keep(preserve: int) -> int:
    """filterLocalModelLeanTools: all but the lean tools no allow list outside the profiles
    keeps (``preserve``: the OR of the stacks')."""
    return ~(_LEAN & ~preserve)


def _built(present: int, sandboxed: bool, sender_id: str | None, message: str | None) -> int:
    """createOpenClawTools (2026.9): terminal and portal only outside the sandbox, transcripts
    only for a channel caller."""
    if sandboxed:
        present &= _NOT_HOST_ONLY
    if _CALLER_ONLY and not _channel_caller(sender_id, message):
        present &= _NOT_CALLER_ONLY
    return present


def _channel_caller(sender_id: str | None, message: str | None) -> bool:
    """A gateway message channel and a sender id (2026.9's caller-only tools)."""
    return bool(sender_id and sender_id.strip() and channel_of(message) in RULES.gateway_channels)


def resolve_uncached(  # noqa: PLR0913 - the same keywords as resolve()
    *,
    agent_id: str | None = None,
    session_key: str | None = None,
    spawned_by: str | None = None,
    model_provider: str | None = None,
    model_id: str | None = None,
    message_provider: str | None = None,
    account_id: str | None = None,
    group_id: str | None = None,
    group_space: str | None = None,
    group_channel: str | None = None,
    sender_id: str | None = None,
    sender_e164: str | None = None,
    sender_username: str | None = None,
    sender_name: str | None = None,
    sender_is_owner: bool | None = None,
    sandboxed: bool | None = None,
    spawn_depth: int | None = None,
    strict: bool = True,
) -> ToolSet:
    """Evaluate the precomputed tables for one request (no memo). Raises TypeError for an
    ill-typed value; blank strings count as absent; UntrustedGroupError (2026.9) for a group
    the session key does not name, unless ``strict`` is False."""
    return _evaluate(
        (
            agent_id,
            session_key,
            spawned_by,
            model_provider,
            model_id,
            message_provider,
            account_id,
            group_id,
            group_space,
            group_channel,
            sender_id,
            sender_e164,
            sender_username,
            sender_name,
            sender_is_owner,
            sandboxed,
            spawn_depth,
            strict is not False,
        )
    )


def _evaluate(request: _Request) -> ToolSet:  # noqa: PLR0915 - inlined steps, see below
    """``resolve_uncached`` of one request tuple (``_KEYWORDS``' order)."""
    (
        agent_id,
        session_key,
        spawned_by,
        model_provider,
        model_id,
        message_provider,
        account_id,
        group_id,
        group_space,
        group_channel,
        sender_id,
        sender_e164,
        sender_username,
        sender_name,
        sender_is_owner,
        sandboxed,
        spawn_depth,
        strict,
    ) = request
    # The first request of a context runs all of this: the steps are inlined (a Python call
    # costs as much as several of them) and every type check is one comparison; anything
    # but an exact str, bool or int takes _check, which names the keyword or lets it pass.
    if not (
        (agent_id is None or type(agent_id) is str)
        and (session_key is None or type(session_key) is str)
        and (spawned_by is None or type(spawned_by) is str)
        and (model_provider is None or type(model_provider) is str)
        and (model_id is None or type(model_id) is str)
        and (message_provider is None or type(message_provider) is str)
        and (account_id is None or type(account_id) is str)
        and (group_id is None or type(group_id) is str)
        and (group_space is None or type(group_space) is str)
        and (group_channel is None or type(group_channel) is str)
        and (sender_id is None or type(sender_id) is str)
        and (sender_e164 is None or type(sender_e164) is str)
        and (sender_username is None or type(sender_username) is str)
        and (sender_name is None or type(sender_name) is str)
        and (sender_is_owner is None or sender_is_owner is True or sender_is_owner is False)
        and (sandboxed is None or sandboxed is True or sandboxed is False)
        and (spawn_depth is None or (type(spawn_depth) is int and spawn_depth >= 0))
    ):
        _check(request)
    if session_key is not None and not session_key.strip():
        session_key = None
    trusted_groups = RULES.group_id_needs_session
    if trusted_groups and strict is not False and (group_id or group_space or group_channel):
        _refuse_ignored_group(session_key, spawned_by, group_id, group_space, group_channel)
    if session_key is None:
        session = _NO_SESSION
    else:
        session = _SESSIONS.get(session_key) or _session(session_key)
    picked = _PICKED.get((agent_id, session_key))
    if picked is None:
        picked = _pick_agent(agent_id, session_key, session)
    record, by_mode = picked
    # An explicit True stays; False or None never lifts a sandbox the definitions impose.
    sandboxed = sandboxed is True or by_mode
    provider = model_provider.strip().lower() or None if model_provider else None
    model = model_id.strip().lower() or None if model_id else None
    if message_provider is not None and message_provider.strip():
        message: str | None = message_provider.strip().lower()
    else:
        message_provider = message = None
    # host-only tools (2026.9) are not built for a sandboxed run, caller-only ones only for
    # a channel caller (a gateway message channel and a sender id); owner-only tools: only
    # an explicit True keeps them (2026.3.2), only an explicit False removes them (2026.9.6)
    flags = 1 if sandboxed and _HOST_ONLY else 0
    if _CALLER_ONLY and not _channel_caller(sender_id, message):
        flags |= 2
    if sender_is_owner is False if RULES.owner_unknown_keeps else sender_is_owner is not True:
        flags |= 4
    base = _BASES.get((record.row, provider, model, message, flags))
    if base is None:
        base = _base(record, provider, model, message, flags)
    present = base.present

    if spawned_by is not None and not spawned_by.strip():
        spawned_by = None
    sender = (sender_id, sender_e164, sender_username, sender_name)
    if group_space is None and group_channel is None:
        where: tuple[str | None, str | None] = _NO_WHERE
    else:
        where = (_text(group_space), _text(group_channel))
    if trusted_groups:
        parts = (session_key, spawned_by, group_id, message, account_id)
        stacks = _requester_stacks(parts, where, sender, sender_is_owner is True, record)
    else:
        stacks = []
        group = group_id if group_id is not None and group_id.strip() else None
        channel = message if message_provider is not None else session.channel
        if spawned_by is not None and not (group and channel):
            spawned = _SESSIONS.get(spawned_by) or _session(spawned_by)
            group = group or session.group or spawned.group
            channel = channel or spawned.channel
        else:
            group = group or session.group
        if channel and group:
            channel = _CHANNEL_ALIASES.get(channel, channel)
            found = _group_stack(channel, group, account_id, sender, where)
            if found is not None:
                stacks.append(found)
    if sandboxed:
        stacks.append(record.sandbox)
    if RULES.subagent_key_rules:
        keyed_subagent = session_key is not None and _shaped_session(session_key).is_subagent
    else:
        keyed_subagent = session.is_subagent
    if keyed_subagent or (spawn_depth or 0) >= 1:
        subagent = _subagent_stack(session, session_key, spawn_depth)
        if subagent is not None:
            stacks.append(subagent)

    bits = base.admitted
    if stacks:
        # the same ANDs as _admitted and _kept, in another order: while these stacks admit
        # nothing the base's do not (no mention, preserve or new flag), its admitted set
        # needs only their fixed parts and layers
        wider = False
        for stack in stacks:
            bits &= stack.fixed
            for witness, allow_pass, deny_pass in stack.layers:
                bits &= allow_pass if witness & present else deny_pass
            if stack.mention or stack.preserve or (stack.flags | base.flags) != base.flags:
                wider = True
        if wider:
            bits = _widened(base, stacks, record.lean)
    if session.cron:
        bits &= _NOT_CRON_DROP  # filterRequesterYieldTools (2026.9; empty mask elsewhere)
    result = _RESULTS.get(bits)
    return result if result is not None else _toolset(bits)


def _subagent_stack(
    session: _Session, session_key: str | None, spawn_depth: int | None
) -> Stack | None:
    """The subagent layer: a subagent key (2026.9: an agent key's REST starts with
    ``subagent:``, depth counted there) or ``spawn_depth >= 1``; a leaf from the max depth."""
    key_sub, key_depth = session.is_subagent, session.depth
    if RULES.subagent_key_rules:
        own = _shaped_session(session_key)
        key_sub, key_depth = own.is_subagent, own.depth
    if not (key_sub or (spawn_depth or 0) >= 1):
        return None
    depth = spawn_depth if spawn_depth is not None else key_depth
    # both releases: a leaf at max(1, maxSpawnDepth); depth 0 (2026.3.2: a `subagent:` key
    # without `:subagent:`, 2026.9.6: the main role) is never one
    return _SUBAGENT_LEAF if depth >= _LEAF_DEPTH else _SUBAGENT_NONLEAF


_MEMO: dict[tuple[object, ...], ToolSet] = {}
_MEMO_LIMIT: Final = 65536


def resolve(  # noqa: PLR0913 - one keyword per context input: the stable interface
    *,
    agent_id: str | None = None,
    session_key: str | None = None,
    spawned_by: str | None = None,
    model_provider: str | None = None,
    model_id: str | None = None,
    message_provider: str | None = None,
    account_id: str | None = None,
    group_id: str | None = None,
    group_space: str | None = None,
    group_channel: str | None = None,
    sender_id: str | None = None,
    sender_e164: str | None = None,
    sender_username: str | None = None,
    sender_name: str | None = None,
    sender_is_owner: bool | None = None,
    sandboxed: bool | None = None,
    spawn_depth: int | None = None,
    strict: bool = True,
) -> ToolSet:
    """The tools a request sees, exactly as the layered policy semantics decide.

    Under OpenClaw 2026.9 a group the session key does not name is refused
    (UntrustedGroupError, a ValueError): the release would ignore it, and with it the
    group's and its senders' restrictions. ``strict=False`` ignores it as the release does.
    A gateway that has the message rather than OpenClaw's session key uses
    ``resolve_message``, which routes it first.

    Results are memoized per request (bounded); values are checked on a memo miss, so an
    ill-typed value raises TypeError and is never stored. The key holds ``sender_is_owner`` as
    True, None or False (anything else may only ever hit the False entry, which has the
    fewest tools under every target: 2026.9 keeps owner-only tools for None) and
    ``sandboxed not in (None, False)`` (anything but absent or ``False`` may only hit a
    sandboxed entry): a malformed value can never reach a wider cached result. One tuple hash
    (strings cache their hashes) is cheaper than fifteen nested lookups.
    """
    key = (
        agent_id,
        session_key,
        spawned_by,
        model_provider,
        model_id,
        message_provider,
        account_id,
        group_id,
        group_space,
        group_channel,
        sender_id,
        sender_e164,
        sender_username,
        sender_name,
        # True, None or False: anything else (malformed) keys as False, the narrowest
        True if sender_is_owner is True else None if sender_is_owner is None else False,
        sandboxed is not None and sandboxed is not False,
        spawn_depth,
        strict is not False,
    )
    try:
        result = _MEMO.get(key)
    except TypeError:  # an unhashable value: let the checks name the keyword
        result = None
    if result is None:
        # the key's first fourteen values are the request's own (the flags it normalizes)
        result = _evaluate((*key[:14], sender_is_owner, sandboxed, spawn_depth, key[17]))
        if len(_MEMO) >= _MEMO_LIMIT:
            _MEMO.clear()
        _MEMO[key] = result
    return result
