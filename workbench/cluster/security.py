"""Who may talk to a sweep's Dask cluster: TLS credentials for it, and a warning where there are none.

Why: a Dask worker runs whatever code a client sends it. A scheduler on plain TCP lets anyone who can reach its
port (on this machine: any local user) run code on its Dask workers as the user who started them, and send the
client rows it never measured.

- ``local:N``: TLS with credentials made for that cluster alone (``Security.temporary()``, in memory, never on
  disk): :func:`local_security`.
- ``tls://HOST:PORT``: the client's credentials come from ``bench --tls-ca-file CA --tls-cert CERT [--tls-key
  KEY]`` (the flags of ``dask scheduler`` and ``dask worker``; :func:`tls_security`), or else from Dask's
  configuration: ``DASK_DISTRIBUTED__COMM__TLS__CA_FILE``, ``DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT``,
  ``DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY`` (or the same keys in a Dask config file). None at all is refused.
- ``tcp://HOST:PORT``: used as asked, with a one-line warning naming the risk and the README's TLS recipe.

Dask is imported only when a cluster is used.
"""

from __future__ import annotations

import logging
import os
from typing import Any

log = logging.getLogger(__name__)

#: Where the fleet recipe with TLS is written.
RECIPE = "README, 'Every device, and sweeps on a Dask cluster': the TLS recipe"
#: Schemes whose connections are encrypted and authenticated with certificates.
ENCRYPTED = ("tls", "wss")
#: Dask's configuration variables a client's credentials can come from instead of the flags.
CONFIG_VARS = ("DASK_DISTRIBUTED__COMM__TLS__CA_FILE", "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT",
               "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY")
FLAGS_HELP = "--tls-ca-file CA --tls-cert CERT [--tls-key KEY]"


def local_security() -> Any:
    """Credentials made for one local cluster (scheduler, Dask workers and this client share them, nobody else)."""
    try:
        from distributed.security import Security

        return Security.temporary()
    except ImportError:
        raise ValueError("--cluster local:N talks TLS with credentials made for the run, which needs the "
                         "cryptography package: pip install 'kernel-workbench[cluster]' (or pip install "
                         "cryptography)") from None


def tls_security(cluster: str | None, ca_file: str | None, cert: str | None, key: str | None) -> Any:
    """The client's credentials from ``--tls-ca-file/--tls-cert/--tls-key``; None when none is given (Dask's
    configuration is read then). Each file must be readable; CA and certificate go together (the key may be
    inside the certificate file); they go with a ``tls://`` scheduler address."""
    given = {"--tls-ca-file": ca_file, "--tls-cert": cert, "--tls-key": key}
    if not any(v is not None for v in given.values()):
        return None
    scheme = str(cluster or "").split("://", 1)[0] if "://" in str(cluster or "") else ""
    if scheme not in ENCRYPTED:
        got = "no --cluster" if cluster is None else f"--cluster {cluster!r}"
        flags = [f for f, v in given.items() if v is not None]
        raise ValueError(f"{', '.join(flags)} go{'es' if len(flags) == 1 else ''} with a TLS scheduler: give "
                         f"--cluster tls://HOST:8786 (got {got}; local:N makes its own credentials)")
    for flag, path in given.items():
        if path is None:
            if flag != "--tls-key":
                raise ValueError(f"{flag} is missing: a TLS client needs {FLAGS_HELP} (the key may be in the "
                                 "certificate file)")
            continue
        if not os.path.isfile(path) or not os.access(path, os.R_OK):
            raise ValueError(f"{flag} {path!r}: no readable file there; give the PEM file made for the cluster "
                             f"({RECIPE})")
    check_pem_files(ca_file, cert, key)
    from distributed.security import Security

    return Security(tls_ca_file=ca_file, tls_client_cert=cert, tls_client_key=key, require_encryption=True)


#: How much of a PEM file is read to see what it holds (certificates and keys are a few KiB).
PEM_READ_BYTES = 1 << 20
_CERT, _KEY = "-----BEGIN CERTIFICATE-----", "PRIVATE KEY-----"


def _pem_text(path: str) -> str:
    with open(path, "rb") as f:
        return f.read(PEM_READ_BYTES).decode("ascii", errors="replace")


def check_pem_files(ca_file: str | None, cert: str | None, key: str | None) -> None:
    """What each file holds, before any handshake: a certificate in ``--tls-cert`` and ``--tls-ca-file``, a
    private key in ``--tls-key`` (or in the certificate file), the two not swapped, and the key readable by its
    owner only. OpenSSL's own word for a swapped pair was "[SSL] PEM lib (_ssl.c:3905)", naming neither file;
    a key others could read was used as it was."""
    texts = {flag: _pem_text(path) for flag, path in (("--tls-ca-file", ca_file), ("--tls-cert", cert),
                                                       ("--tls-key", key)) if path is not None}
    paths = {"--tls-ca-file": ca_file, "--tls-cert": cert, "--tls-key": key}
    if cert is not None and key is not None and _CERT not in texts["--tls-cert"] and _KEY in texts["--tls-cert"] \
            and _CERT in texts["--tls-key"]:
        raise ValueError(f"--tls-cert {cert!r} holds a private key and --tls-key {key!r} a certificate: they look "
                         "swapped; give the certificate to --tls-cert and the key to --tls-key")
    for flag in ("--tls-ca-file", "--tls-cert"):
        if flag in texts and _CERT not in texts[flag]:
            raise ValueError(f"{flag} {paths[flag]!r} holds no PEM certificate ({_CERT}); give the certificate "
                             f"file made for the cluster ({RECIPE})")
    if key is not None and _KEY not in texts["--tls-key"]:
        raise ValueError(f"--tls-key {key!r} holds no PEM private key (BEGIN ... {_KEY}); give the key made with "
                         f"the certificate ({RECIPE})")
    key_file, key_flag = (key, "--tls-key") if key is not None else (cert, "--tls-cert")
    if key_file is None or _KEY not in texts[key_flag]:
        return  # no key given nor in the certificate file: Dask's handshake says so
    mode = os.stat(key_file).st_mode & 0o777
    if mode & 0o077:
        raise ValueError(f"{key_flag} {key_file!r} can be read or written by others (mode {mode:04o}): a private "
                         f"key must be its owner's alone; chmod 600 {key_file}")
    _check_pair(cert, key)


def _check_pair(cert: str | None, key: str | None) -> None:
    """The certificate and its key load together (the key is the certificate's): OpenSSL's error, with both
    files named."""
    import ssl

    key_file, key_flag = (key, "--tls-key") if key is not None else (cert, "--tls-cert")

    def no_passphrase() -> str:  # OpenSSL asked on the terminal (then "[Errno 22] Invalid argument")
        raise ValueError(f"{key_flag} {key_file!r} is encrypted (it needs a passphrase), and Dask's workers and "
                         f"this client cannot ask for one: write it unencrypted, for you only: openssl pkey -in "
                         f"{key_file} -out key.pem && chmod 600 key.pem")

    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_cert_chain(cert, key, password=no_passphrase)  # type: ignore[arg-type]
    except ssl.SSLError as exc:
        reason = exc.reason or str(exc)
        raise ValueError(f"--tls-cert {cert!r} and --tls-key {key or cert!r} do not load as a certificate and its "
                         f"key ({reason}): is the key the one made with this certificate?") from None


def check_security(address: str, security: Any) -> Any:
    """The credentials a client of the scheduler at ``address`` uses: ``security`` when given, else Dask's
    configuration. A TLS address without credentials is refused (the handshake would fail with no hint); a
    plain one gets a warning."""
    from distributed.security import Security

    scheme = address.split("://", 1)[0]
    explicit = security is not None
    security = security if explicit else Security()  # reads distributed.comm.tls.* from Dask's configuration
    if scheme in ENCRYPTED:
        if not (security.tls_ca_file and security.tls_client_cert):
            raise ValueError(f"--cluster {address!r} needs the client's TLS credentials: give {FLAGS_HELP}, or set "
                             f"{', '.join(CONFIG_VARS)} ({RECIPE})")
        return security
    if explicit and security.require_encryption:
        raise ValueError(f"TLS credentials go with a tls:// scheduler address, not {address!r}: give --cluster "
                         f"tls://HOST:PORT")
    log.warning("--cluster %s is plain TCP: anyone who can reach that scheduler can run code on its Dask workers as "
                "their user and send this run rows it never measured; start it with TLS and give --cluster "
                "tls://HOST:PORT %s (%s)", address, FLAGS_HELP, RECIPE)
    return security
