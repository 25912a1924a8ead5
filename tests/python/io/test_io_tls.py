"""HTTPS to an object store: the TLS stack the extension is built with (rustls on ring,
src/io/object.rs) completes a handshake, verifies the server's certificate against the
system's roots (SSL_CERT_FILE here), and refuses a certificate it cannot verify with a
FrazilIOError naming the location.

moto's server speaks TLS with a certificate made here for 127.0.0.1. Each case runs in a
fresh process, since the root certificates are read from the environment once per process.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from s3_loopback import ACCESS_KEY, REGION, SECRET_KEY, running_moto


def _certificates(directory: Path) -> tuple[Path, Path, Path]:
    """A CA, and a certificate for 127.0.0.1 signed by it: (ca.pem, server.pem, server.key)."""
    now = dt.datetime.now(dt.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, f"frazil test CA {directory.name}")]
    )
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
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
        .sign(ca_key, hashes.SHA256())
    )
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_pem = directory / "ca.pem"
    server_pem = directory / "server.pem"
    server_key_pem = directory / "server.key"
    ca_pem.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    server_pem.write_bytes(server.public_bytes(serialization.Encoding.PEM))
    server_key_pem.write_bytes(
        server_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ca_pem, server_pem, server_key_pem


class _TlsMoto:
    def __init__(self, endpoint: str, ca: Path) -> None:
        self.endpoint = endpoint
        self.ca = ca


@pytest.fixture(scope="module")
def tls_moto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_TlsMoto]:
    directory = tmp_path_factory.mktemp("tls")
    ca, cert, key = _certificates(directory)
    with running_moto(directory, tls=(ca, cert, key)) as endpoint:
        yield _TlsMoto(endpoint, ca)


# Runs in a fresh process: writes, reads back and lists an object over HTTPS, printing what
# it read, or the error's class and message.
_CLIENT = textwrap.dedent(
    """
    import sys
    from frazil.io import FileIO

    endpoint, bucket, key, secret, region = sys.argv[1:]
    io = FileIO({
        "s3.endpoint": endpoint,
        "s3.access-key-id": key,
        "s3.secret-access-key": secret,
        "s3.region": region,
        "s3.path-style-access": "true",
        "s3.retry.num-retries": "0",
    })
    location = f"s3://{bucket}/tls/object.bin"
    try:
        io.write(location, b"over tls")
        print("read:", io.read(location).decode())
    except Exception as error:
        print("error:", type(error).__name__, error)
    """
)


def _run_client(endpoint: str, bucket: str, cert_file: Path | None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "SSL_CERT_"))}
    if cert_file is not None:
        env["SSL_CERT_FILE"] = str(cert_file)
    done = subprocess.run(
        [sys.executable, "-c", _CLIENT, endpoint, bucket, ACCESS_KEY, SECRET_KEY, REGION],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _bucket(tls_moto: _TlsMoto, name: str) -> str:
    import boto3

    client = boto3.client(
        "s3",
        endpoint_url=tls_moto.endpoint,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        verify=str(tls_moto.ca),
    )
    client.create_bucket(Bucket=name)
    return name


def test_https_round_trip_with_a_trusted_certificate(tls_moto: _TlsMoto) -> None:
    bucket = _bucket(tls_moto, "tls-trusted")
    assert _run_client(tls_moto.endpoint, bucket, tls_moto.ca) == "read: over tls"


def test_an_untrusted_certificate_is_refused_naming_the_location(
    tls_moto: _TlsMoto, tmp_path: Path
) -> None:
    bucket = _bucket(tls_moto, "tls-untrusted")
    # Roots that do not include the server's CA: another CA of the same kind.
    other_ca, _, _ = _certificates(tmp_path)
    out = _run_client(tls_moto.endpoint, bucket, other_ca)
    assert out.startswith("error: FrazilIOError"), out
    assert f"s3://{bucket}/tls/object.bin" in out
    assert "certificate" in out.lower(), out
