"""Denied access reaches the user as PermissionDeniedError naming the location.

moto checks credentials and IAM policies once its no-auth allowance is used up
(its INITIAL_NO_AUTH_ACTION_COUNT setting, reset through /moto-api/reset-auth).
The fixture creates a user allowed to read one prefix only, then turns the
checks on for the test and off again afterwards.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from frazil import manifest as m
from frazil.errors import FrazilError, PermissionDeniedError
from frazil.io import FileIO
from s3_loopback import Moto


@dataclass(frozen=True)
class Restricted:
    bucket: str
    reader: dict[str, str]  # FileIO properties of a user who may only read public/


@pytest.fixture()
def restricted(moto_server: Moto) -> Iterator[Restricted]:
    bucket = f"auth-{uuid.uuid4().hex[:12]}"
    s3 = moto_server.client()
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="public/readable.txt", Body=b"yes")
    s3.put_object(Bucket=bucket, Key="secret/hidden.txt", Body=b"no")
    iam = moto_server.client("iam")
    user = f"reader-{uuid.uuid4().hex[:8]}"
    iam.create_user(UserName=user)
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["s3:GetObject"],
                "Resource": [f"arn:aws:s3:::{bucket}/public/*"],
            }
        ],
    }
    iam.put_user_policy(UserName=user, PolicyName="read-public", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName=user)["AccessKey"]
    reader = {
        **moto_server.properties,
        "s3.access-key-id": key["AccessKeyId"],
        "s3.secret-access-key": key["SecretAccessKey"],
    }
    moto_server.set_auth(enforce=True)
    try:
        yield Restricted(bucket, reader)
    finally:
        moto_server.set_auth(enforce=False)


def test_denied_reads_and_writes_name_the_location(restricted: Restricted) -> None:
    fio = FileIO(restricted.reader)
    bucket = restricted.bucket
    # The policy works: what it allows succeeds.
    assert fio.read(f"s3://{bucket}/public/readable.txt") == b"yes"
    hidden = f"s3://{bucket}/secret/hidden.txt"
    with pytest.raises(PermissionDeniedError, match=hidden) as info:
        fio.read(hidden)
    assert isinstance(info.value, PermissionError) and isinstance(info.value, FrazilError)
    written = f"s3://{bucket}/public/new.txt"
    with pytest.raises(PermissionDeniedError, match=written):
        fio.write(written, b"x")
    with pytest.raises(PermissionDeniedError, match=hidden):
        m.read_manifest(hidden, io=fio)


def test_unknown_credentials_are_denied(restricted: Restricted) -> None:
    fio = FileIO(
        {
            **restricted.reader,
            "s3.access-key-id": "AKIAUNKNOWNUNKNOWN00",
            "s3.secret-access-key": "wrong",
        }
    )
    loc = f"s3://{restricted.bucket}/public/readable.txt"
    with pytest.raises(PermissionDeniedError, match=loc):
        fio.read(loc)
    with pytest.raises(PermissionError):
        fio.read_many([loc, loc])
