"""What the producer tests share: example credentials and object store locations that hold
them (hypothesis strategies), for the naming and the secrets tests.
"""

from __future__ import annotations

import string
from typing import NamedTuple

from hypothesis import strategies as st

ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE"
SECRET_KEY = "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"
SIGNATURE = "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024"


class Credentials(NamedTuple):
    uri: str
    expected: str
    secrets: tuple[str, ...]


AWS_SECRET = st.text(string.ascii_letters + string.digits + "+/", min_size=40, max_size=40)


@st.composite
def aws_style_secrets(draw: st.DrawFn) -> str:
    """40 characters of [A-Za-z0-9+/], unencoded, with the shapes that end an authority early."""
    secret = draw(AWS_SECRET)
    shape = draw(st.sampled_from(["plain", "slash first", "digits then slash", "? and #"]))
    if shape == "slash first":
        secret = "/" + secret[1:]
    elif shape == "digits then slash":
        digits = draw(st.text(string.digits, min_size=1, max_size=6))
        secret = (digits + "/" + secret)[:40]
    elif shape == "? and #":
        for _ in range(draw(st.integers(1, 3))):
            at = draw(st.integers(0, len(secret)))
            secret = secret[:at] + draw(st.sampled_from("?#")) + secret[at:]
    return secret


@st.composite
def locations_with_credentials(
    draw: st.DrawFn, directory_characters: str = string.ascii_letters + string.digits + "_=.-@"
) -> Credentials:
    """An object store location with an access key and secret (or an Azure container and
    key), unencoded; the location it cleans to; the secrets."""
    key = draw(st.from_regex(r"(AKIA|ASIA)[A-Z0-9]{16}", fullmatch=True))
    secret = draw(aws_style_secrets())
    directories = draw(st.lists(st.text(directory_characters, min_size=1, max_size=12)))
    path = "".join("/" + directory for directory in directories)
    scheme = draw(st.sampled_from(["s3a", "s3", "s3n", "gs", "abfss"]))
    if scheme == "abfss":
        container = draw(st.from_regex(r"[a-z0-9]{3,12}", fullmatch=True))
        uri = f"abfss://{container}:{secret}@account.dfs.core.windows.net{path}"
        host = "account.dfs.core.windows.net"
        return Credentials(uri, f"abfss://{host}{path or '/'}", (container, secret))
    bucket = draw(st.from_regex(r"[a-z0-9][a-z0-9.-]{1,20}[a-z0-9]", fullmatch=True))
    uri = f"{scheme}://{key}:{secret}@{bucket}{path}"
    return Credentials(uri, f"{scheme}://{bucket}{path or '/'}", (key, secret))
