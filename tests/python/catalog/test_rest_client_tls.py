"""The REST client over HTTPS: the server's certificate verified against ``ssl.cabundle``,
refused without it (before anything is sent), and a client certificate
(``ssl.client.cert``/``ssl.client.key``) for a server that requires one."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from frazil.catalog.rest import RestCatalog
from frazil.errors import FrazilIOError, LostConnectionError, ValidationError
from rest_stub import Answer, Seen, StubServer


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> Path:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return path


def _pki(directory: Path) -> dict[str, Path]:
    """A CA and, signed by it, a server certificate for 127.0.0.1 and a client certificate."""
    now = dt.datetime.now(dt.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "frazil REST test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    out = {"ca": directory / "ca.pem"}
    out["ca"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    for role, usage in (
        ("server", ExtendedKeyUsageOID.SERVER_AUTH),
        ("client", ExtendedKeyUsageOID.CLIENT_AUTH),
    ):
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, role)]))
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=2))
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if role == "server":
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False,
            )
        cert = builder.sign(ca_key, hashes.SHA256())
        out[role] = directory / f"{role}.pem"
        out[role].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        out[f"{role}-key"] = _write_key(key, directory / f"{role}.key")
    return out


def _config(seen: Seen) -> Answer:
    return Answer(
        200, {"defaults": {}, "overrides": {}} if seen.path == "/v1/config" else {"namespaces": []}
    )


def _server_context(pki: dict[str, Path], require_client: bool) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki["server"], pki["server-key"])
    if require_client:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(pki["ca"])
    return context


def test_server_verified_against_the_ca_bundle(tmp_path: Path) -> None:
    pki = _pki(tmp_path)
    with StubServer(_config, tls=_server_context(pki, False)) as server:
        assert server.uri.startswith("https://")
        catalog = RestCatalog("r", uri=server.uri, **{"ssl.cabundle": str(pki["ca"])})
        assert catalog.list_namespaces() == []
        with pytest.raises(FrazilIOError, match="could not connect") as refused:
            RestCatalog("r", uri=server.uri)  # certifi does not know this CA
        assert not isinstance(refused.value, LostConnectionError)  # never sent
        # Verification off (self-signed test servers only).
        assert RestCatalog("r", uri=server.uri, **{"ssl.verify": "false"}).list_namespaces() == []


def test_client_certificate(tmp_path: Path) -> None:
    pki = _pki(tmp_path)
    with StubServer(_config, tls=_server_context(pki, True)) as server:
        props = {"ssl.cabundle": str(pki["ca"])}
        # Refused by a TLS alert: reported at once, not retried like a lost answer.
        with pytest.raises(LostConnectionError, match="TLS failed"):
            RestCatalog("r", uri=server.uri, **props)
        assert len(server.requests) == 0
        catalog = RestCatalog(
            "r",
            uri=server.uri,
            **props,
            **{"ssl.client.cert": str(pki["client"]), "ssl.client.key": str(pki["client-key"])},
        )
        assert catalog.list_namespaces() == []


def test_bad_tls_settings_named(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match=r"ssl\.cabundle"):
        RestCatalog("r", uri="https://127.0.0.1:1", **{"ssl.cabundle": str(tmp_path / "none.pem")})
    with pytest.raises(ValidationError, match=r"without ssl\.client\.cert"):
        RestCatalog("r", uri="https://127.0.0.1:1", **{"ssl.client.key": "k.pem"})
