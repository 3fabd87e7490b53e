"""An S3-compatible server for the object-storage tests: moto's standalone server, started
as a child process on 127.0.0.1 and a free port, with request signing checked (so wrong
keys are refused as by AWS). One IAM user with an access key and full S3 rights is created
before signing is switched on; its keys are what the tests hand evalhouse.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


def missing_reason() -> str | None:
    """Why no server can be had here, or None when one can."""
    for module in ("moto", "boto3", "flask", "flask_cors"):
        if importlib.util.find_spec(module) is None:
            return f"no S3 test server here (`pip install 'moto[server]'`: {module} is missing)"
    return None


@dataclass(frozen=True)
class S3Server:
    """A running server and the keys of its one user."""

    endpoint: str
    """http://127.0.0.1:PORT"""
    key_id: str
    secret: str

    def client(self, key_id: str | None = None, secret: str | None = None) -> Any:
        """A boto3 S3 client of the server (the tests' own view of the bucket)."""
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=key_id or self.key_id,
            aws_secret_access_key=secret or self.secret,
            region_name="us-east-1",
        )

    def env(self) -> dict[str, str]:
        """The environment evalhouse reaches the server with."""
        return {
            "AWS_ACCESS_KEY_ID": self.key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret,
            "AWS_REGION": "us-east-1",
            "EVALHOUSE_S3_ENDPOINT": self.endpoint,
        }

    def keys(self, bucket: str) -> list[str]:
        """Every object key in ``bucket``."""
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket)
        return [o["Key"] for page in pages for o in page.get("Contents", [])]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_up(endpoint: str, child: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if child.poll() is not None:
            raise RuntimeError(f"moto_server exited with {child.returncode}")
        try:
            urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("moto_server did not answer within 30 s")


@contextmanager
def s3_session() -> Iterator[S3Server]:
    """Start the server, create the user, switch signing checks on; stop it after."""
    import boto3

    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "INITIAL_NO_AUTH_ACTION_COUNT": "inf",
        "MOTO_ALLOW_NONEXISTENT_REGION": "true",
    }
    child = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_up(endpoint, child)
        iam = boto3.client(
            "iam",
            endpoint_url=endpoint,
            aws_access_key_id="setup",
            aws_secret_access_key="setup",
            region_name="us-east-1",
        )
        iam.create_user(UserName="evalhouse")
        iam.put_user_policy(
            UserName="evalhouse",
            PolicyName="s3",
            PolicyDocument='{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", '
            '"Action": "s3:*", "Resource": "*"}]}',
        )
        key = iam.create_access_key(UserName="evalhouse")["AccessKey"]
        request = urllib.request.Request(
            f"{endpoint}/moto-api/reset-auth",
            data=b"0",
            method="POST",
            # a form content type (urllib's default) would leave the body unread
            headers={"Content-Type": "text/plain"},
        )
        urllib.request.urlopen(request, timeout=5).close()
        yield S3Server(endpoint, key["AccessKeyId"], key["SecretAccessKey"])
    finally:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
