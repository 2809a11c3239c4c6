from __future__ import annotations

import pytest

from axiom.settings import Settings, SettingsError


def test_inject_budget_defaults_to_600_tokens() -> None:
    assert Settings.from_env({}).inject_budget == 600


def test_inject_budget_reads_a_number_and_zero_turns_injection_off() -> None:
    assert Settings.from_env({"AXIOM_INJECT_BUDGET": "250"}).inject_budget == 250
    assert Settings.from_env({"AXIOM_INJECT_BUDGET": "0"}).inject_budget == 0


@pytest.mark.parametrize("raw", ["lots", "-1", "20001"])
def test_inject_budget_rejects_what_it_cannot_use(raw: str) -> None:
    with pytest.raises(SettingsError, match="AXIOM_INJECT_BUDGET"):
        Settings.from_env({"AXIOM_INJECT_BUDGET": raw})


def test_port_defaults_to_8000_and_rejects_a_bad_port() -> None:
    assert Settings.from_env({}).port == 8000
    assert Settings.from_env({"AXIOM_PORT": "8123"}).port == 8123
    with pytest.raises(SettingsError, match="AXIOM_PORT"):
        Settings.from_env({"AXIOM_PORT": "70000"})
