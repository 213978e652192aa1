"""Shared fixtures of the bfsync Python tests (tests/python.sh runs them).

ROOT is the source tree; BFSYNC the command-line binary of the same build
($BFSYNC, else build/bfsync), for the tests that compare with it."""
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BFSYNC = os.environ.get("BFSYNC") or str(ROOT / "build" / "bfsync")


@pytest.fixture
def root():
    return ROOT


@pytest.fixture
def bfsync_cli():
    return BFSYNC
