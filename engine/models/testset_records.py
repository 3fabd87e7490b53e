"""Test-set versions (lake and warehouse table ``testset_cases``, registered in
``LAKE_TABLES``): the whole test set a run loaded, case by case, so every distinct content
of a test set is kept with its cases and two versions can be compared without the files."""

from __future__ import annotations

from engine.models.base import Frozen


class TestSetCaseRecord(Frozen):
    """One case of the test set a run loaded (all of its cases, not only those the run
    scored with ``--limit`` or a filter); written once when the run starts."""

    __test__ = False  # not a pytest test class, despite the name

    run_id: str
    """Run that loaded the test set."""
    test_set_name: str
    """Name of the test set (the file name without its extension); versions are numbered
    per name."""
    cases_hash: str
    """sha256 of the test set's cases (``runs.test_set_cases_hash``): the version's key."""
    sample_id: str
    """Test-case id."""
    sample_hash: str
    """sha256 of the case's canonical JSON (``cases.sample_hash``)."""
    case_json: str
    """The whole case in the native test-set format, as JSON."""
