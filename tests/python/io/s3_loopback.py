"""The moto server the io tests run against (started by conftest.py)."""

from __future__ import annotations

import urllib.request
from dataclasses import dataclass
from typing import Any

ACCESS_KEY = "testing-access-key"
SECRET_KEY = "testing-secret-key"
REGION = "us-east-1"


@dataclass(frozen=True)
class Moto:
    endpoint: str

    @property
    def properties(self) -> dict[str, str]:
        """FileIO properties (pyiceberg's names) that reach this server."""
        return {
            "s3.endpoint": self.endpoint,
            "s3.access-key-id": ACCESS_KEY,
            "s3.secret-access-key": SECRET_KEY,
            "s3.region": REGION,
            "s3.path-style-access": "true",
            # A failing test should fail, not back off for minutes.
            "s3.retry.num-retries": "1",
        }

    def client(self, service: str = "s3", **credentials: str) -> Any:
        import boto3

        return boto3.client(
            service,
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=credentials.get("key", ACCESS_KEY),
            aws_secret_access_key=credentials.get("secret", SECRET_KEY),
        )

    def set_auth(self, enforce: bool) -> None:
        """Turns moto's IAM checks on (every later request needs valid
        credentials) or off (moto's default)."""
        count = b"0" if enforce else b"inf"
        request = urllib.request.Request(
            f"{self.endpoint}/moto-api/reset-auth",
            data=count,
            method="POST",
            # Not form-encoded: moto reads the raw body.
            headers={"Content-Type": "text/plain"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 200
