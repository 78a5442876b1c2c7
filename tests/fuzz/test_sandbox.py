"""The sandbox turns every way a job can end into an outcome, and outlives it."""

import math
import os
import time

import pytest

from xlapy.fuzz.sandbox import Sandbox


@pytest.fixture(scope="module")
def box():
    with Sandbox() as sandbox:
        yield sandbox


def test_a_result_comes_back(box):
    outcome = box.run(math.sqrt, 16.0, timeout=30)
    assert outcome.ok and outcome.value == 4.0


def test_an_exception_is_an_error_with_its_traceback(box):
    outcome = box.run(math.sqrt, -1.0, timeout=30)
    assert outcome.status == "error" and "ValueError" in outcome.error
    assert "Traceback" in outcome.detail


def test_a_hang_is_killed_and_the_next_job_runs(box):
    restarts = box.restarts
    outcome = box.run(time.sleep, 30, timeout=0.5)
    assert outcome.status == "hang" and outcome.seconds < 10
    assert box.run(math.sqrt, 9.0, timeout=30).value == 3.0
    assert box.restarts == restarts + 1


def test_a_crash_names_its_signal_and_the_next_job_runs(box):
    outcome = box.run(os.abort, timeout=30)
    assert outcome.status == "crash" and "SIGABRT" in outcome.error
    assert box.run(math.sqrt, 4.0, timeout=30).ok


def test_the_worker_is_a_fresh_interpreter_with_its_environment():
    with Sandbox({"XLAPY_SANDBOX_TEST": "42"}) as sandbox:
        assert sandbox.run(os.getenv, "XLAPY_SANDBOX_TEST", timeout=30).value == "42"
        assert sandbox.run(os.getppid, timeout=30).value == os.getpid()
