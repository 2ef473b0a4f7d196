"""The environment an exec call asks for, as OpenClaw's exec host checks it.

A variable in the call's ``env`` can change what runs without changing the command: ``PATH``
picks another binary, ``BASH_ENV``, ``LD_PRELOAD`` or ``NODE_OPTIONS`` inject code, ``HOME``
changes what is read. On the gateway and node hosts OpenClaw refuses such a request outright
("Security Violation"), whatever its security and ask modes, before any approval; so does
toolc. The sandbox host is not checked: the variables go into the sandbox.

The lists are data, copied from OpenClaw 2026.9.6's ``dist/host-env-security-D7wdDMke.mjs``
(``src/infra/host-env-security-policy.json`` and ``src/infra/host-env-security.ts``: the
``blockedEverywhereKeys``, ``blockedOverrideOnlyKeys``, ``blockedOverridePrefixes`` and
``blockedPrefixes`` read by ``sanitizeHostEnvOverridesWithDiagnostics``, which
``resolvePreparedExecEnvironment`` in ``dist/bash-tools-B2oth0P7.mjs`` turns into the
refusal). They are a superset of 2026.3.2's (``dist/host-env-security-DkAVVuaw.js``,
``blockedKeys``/``blockedPrefixes``, read by ``validateHostEnv`` in ``bash-tools.exec-runtime``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

# ``blockedEverywhereKeys``: never passed to a host command, inherited or requested.
BLOCKED_KEYS: Final = frozenset(
    """
    NODE_OPTIONS NODE_PATH NODE_REDIRECT_WARNINGS NODE_REPL_EXTERNAL_MODULE NODE_REPL_HISTORY
    NODE_V8_COVERAGE PYTHONHOME PYTHONPATH PERL5LIB PERL5OPT RUBYLIB RUBYOPT BASHOPTS BASH_ENV
    ENV KSH_ENV BROWSER GIT_ALLOW_PROTOCOL GIT_EDITOR GIT_EXTERNAL_DIFF GIT_DIR GIT_WORK_TREE
    GIT_COMMON_DIR GIT_EXEC_PATH GIT_INDEX_FILE GIT_OBJECT_DIRECTORY
    GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_NAMESPACE GIT_PROTOCOL_FROM_USER GIT_SEQUENCE_EDITOR
    GIT_TEMPLATE_DIR GIT_SSL_NO_VERIFY GIT_SSL_CAINFO GIT_SSL_CAPATH CC CPP CXX CXXCPP
    CARGO_BUILD_RUSTC CARGO_BUILD_RUSTC_WRAPPER CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER
    CARGO_BUILD_RUSTDOC RUSTC RUSTC_WRAPPER RUSTC_WORKSPACE_WRAPPER RUSTDOC CMAKE_C_COMPILER
    CMAKE_CXX_COMPILER SHELL SHELLOPTS PS4 GCONV_PATH IFS SSLKEYLOGFILE JAVA_OPTS
    JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS PYTHONBREAKPOINT DOTNET_STARTUP_HOOKS
    DOTNET_ADDITIONAL_DEPS FPATH GLIBC_TUNABLES MAVEN_OPTS MAKE MAKEFLAGS MFLAGS SBT_OPTS
    GRADLE_OPTS ANT_OPTS HGRCPATH HGEDITOR HGMERGE EXINIT VIMINIT MYVIMRC GVIMINIT LUA_INIT
    LUA_INIT_5_1 LUA_INIT_5_2 LUA_INIT_5_3 LUA_INIT_5_4 EMACSLOADPATH RUBYSHELL GIT_HOOK_PATH
    SVN_EDITOR SVN_SSH BZR_EDITOR BZR_SSH BZR_PLUGIN_PATH SUDO_ASKPASS JULIA_EDITOR CONFIG_SITE
    CONFIG_SHELL CMAKE_TOOLCHAIN_FILE CATALINA_OPTS CORECLR_PROFILER HELM_PLUGINS
    PACKER_PLUGIN_PATH VAGRANT_VAGRANTFILE ERL_AFLAGS ERL_FLAGS ERL_ZFLAGS ELIXIR_ERL_OPTIONS
    R_ENVIRON R_PROFILE R_ENVIRON_USER R_PROFILE_USER TCLLIBPATH HOSTALIASES
    """.split()
)
# ``blockedOverrideOnlyKeys``: the gateway's own value may pass, a request may not set one.
BLOCKED_OVERRIDE_KEYS: Final = frozenset(
    """
    HOME GRADLE_USER_HOME ZDOTDIR GIT_DIR GIT_WORK_TREE GIT_COMMON_DIR GIT_INDEX_FILE
    GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_NAMESPACE GIT_SSH_COMMAND GIT_SSH
    GIT_PROXY_COMMAND GIT_ASKPASS GIT_SSL_NO_VERIFY GIT_SSL_CAINFO GIT_SSL_CAPATH SSH_ASKPASS
    LESSOPEN LESSCLOSE PAGER MANPAGER GIT_PAGER EDITOR VISUAL FCEDIT SUDO_EDITOR PROMPT_COMMAND
    HISTFILE PERL5DB PERL5DBCMD OPENSSL_CONF OPENSSL_ENGINES PYTHONSTARTUP WGETRC CURL_HOME
    CLASSPATH CFLAGS CGO_CFLAGS CGO_LDFLAGS GOFLAGS MAKEFLAGS MFLAGS CORECLR_PROFILER_PATH PHPRC
    PHP_INI_SCAN_DIR DENO_DIR BUN_CONFIG_REGISTRY YARN_RC_FILENAME HTTP_PROXY HTTPS_PROXY
    ALL_PROXY NO_PROXY NODE_TLS_REJECT_UNAUTHORIZED NODE_EXTRA_CA_CERTS SSL_CERT_FILE
    SSL_CERT_DIR REQUESTS_CA_BUNDLE CURL_CA_BUNDLE DOCKER_HOST DOCKER_TLS_VERIFY
    DOCKER_CERT_PATH PIP_INDEX_URL PIP_PYPI_URL PIP_EXTRA_INDEX_URL PIP_CONFIG_FILE
    PIP_FIND_LINKS PIP_TRUSTED_HOST UV_INDEX UV_INDEX_URL UV_PYTHON UV_EXTRA_INDEX_URL
    UV_DEFAULT_INDEX DOCKER_CONTEXT LIBRARY_PATH LDFLAGS CPATH C_INCLUDE_PATH
    CPLUS_INCLUDE_PATH OBJC_INCLUDE_PATH GOPROXY GONOSUMCHECK GONOSUMDB GONOPROXY GOPRIVATE
    GOENV GOPATH HGRCPATH PYTHONUSERBASE RUSTC_WRAPPER RUSTFLAGS RUSTUP_DIST_ROOT
    RUSTUP_DIST_SERVER RUSTUP_HOME RUSTUP_TOOLCHAIN RUSTUP_UPDATE_ROOT CARGO_HOME VIRTUAL_ENV
    LUA_PATH LUA_CPATH GEM_HOME GEM_PATH BUNDLE_GEMFILE COMPOSER_HOME CONDA_DEFAULT_ENV
    CONDA_PREFIX CARGO_BUILD_RUSTC_WRAPPER XDG_CACHE_HOME XDG_CONFIG_DIRS XDG_CONFIG_HOME
    XDG_DATA_DIRS XDG_DATA_HOME XDG_RUNTIME_DIR XDG_STATE_HOME AWS_CONFIG_FILE KUBECONFIG
    GOOGLE_APPLICATION_CREDENTIALS AWS_SHARED_CREDENTIALS_FILE AWS_WEB_IDENTITY_TOKEN_FILE
    AZURE_AUTH_LOCATION HELM_HOME ANSIBLE_CONFIG ANSIBLE_LIBRARY ANSIBLE_CALLBACK_PLUGINS
    ANSIBLE_COLLECTIONS_PATH ANSIBLE_CONNECTION_PLUGINS ANSIBLE_FILTER_PLUGINS
    ANSIBLE_INVENTORY_PLUGINS ANSIBLE_LOOKUP_PLUGINS ANSIBLE_MODULE_UTILS ANSIBLE_REMOTE_TEMP
    ANSIBLE_ROLES_PATH ANSIBLE_STRATEGY_PLUGINS R_LIBS_USER TF_CLI_CONFIG_FILE
    TF_PLUGIN_CACHE_DIR AMQP_URL AWS_ACCESS_KEY_ID AWS_CONTAINER_CREDENTIALS_FULL_URI
    AWS_CONTAINER_CREDENTIALS_RELATIVE_URI AWS_SECRET_ACCESS_KEY AWS_SECURITY_TOKEN
    AWS_SESSION_TOKEN AZURE_CLIENT_ID AZURE_CLIENT_SECRET DATABASE_URL GH_TOKEN GITHUB_TOKEN
    GITLAB_TOKEN MONGODB_URI NODE_AUTH_TOKEN NPM_TOKEN REDIS_URL SSH_AUTH_SOCK SYSTEMROOT WINDIR
    """.split()
)
# ``blockedPrefixes`` (loader and shell-function injection) and ``blockedOverridePrefixes``.
BLOCKED_PREFIXES: Final = ("DYLD_", "LD_", "BASH_FUNC_")
BLOCKED_OVERRIDE_PREFIXES: Final = ("GIT_CONFIG_", "NPM_CONFIG_", "CARGO_REGISTRIES_", "TF_VAR_")
# ``CARGO_TARGET_EXECUTABLE_OVERRIDE_ENV_KEY``: a linker or runner cargo executes.
CARGO_TARGET_EXECUTABLE: Final = re.compile(r"CARGO_TARGET_[A-Z0-9_]+_(?:LINKER|RUNNER)")
# toolc's additions, for the same reason as ``PATH`` (which OpenClaw refuses on its own, as
# ``blockPathOverrides``): they choose which file a command name runs, on Windows.
BLOCKED_LOOKUP_KEYS: Final = frozenset({"PATH", "PATHEXT"})
# ``PORTABLE_ENV_VAR_KEY`` and ``WINDOWS_COMPAT_OVERRIDE_ENV_VAR_KEY`` (``ProgramFiles(x86)``):
# any other name (blank, padded, with ``=`` or a NUL) is refused, never trimmed into another.
_VALID_KEY: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_()]*")


def blocked_key(key: str) -> bool:
    """Whether a request may not set ``key`` (compared in upper case, as OpenClaw does:
    Windows reads ``Path`` as ``PATH``)."""
    upper = key.upper()
    return (
        upper in BLOCKED_KEYS
        or upper in BLOCKED_OVERRIDE_KEYS
        or upper in BLOCKED_LOOKUP_KEYS
        or upper.startswith(BLOCKED_PREFIXES)
        or upper.startswith(BLOCKED_OVERRIDE_PREFIXES)
        or CARGO_TARGET_EXECUTABLE.fullmatch(upper) is not None
    )


def env_violation(env: object) -> str | None:
    """Why a host exec call may not run with ``env`` (OpenClaw's "Security Violation"
    messages), or None when every variable is harmless. Anything but an object of string
    values under valid names is refused."""
    if env is None:
        return None
    if not isinstance(env, Mapping):
        return "Security Violation: exec env must be an object of strings."
    blocked: set[str] = set()
    invalid: set[str] = set()
    for key, value in env.items():
        if not isinstance(key, str) or _VALID_KEY.fullmatch(key) is None:
            invalid.add(repr(key))  # shows padding, a NUL, a non-string key
        elif blocked_key(key):
            blocked.add(key.upper())
        if not isinstance(value, str):
            return "Security Violation: exec env must be an object of strings."
    return _message(sorted(blocked), sorted(invalid))


def _message(blocked: list[str], invalid: list[str]) -> str | None:
    if not blocked and not invalid:
        return None
    if blocked == ["PATH"] and not invalid:
        return "Security Violation: Custom 'PATH' variable is forbidden during host execution."
    if len(blocked) == 1 and not invalid:
        return (
            f"Security Violation: Environment variable '{blocked[0]}' is forbidden during host "
            "execution."
        )
    details = []
    if blocked:
        details.append(f"blocked override keys: {', '.join(blocked)}")
    if invalid:
        details.append(f"invalid non-portable override keys: {', '.join(invalid)}")
    return f"Security Violation: {'; '.join(details)}."
