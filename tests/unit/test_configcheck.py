"""aimrepro.config against the pipeline's own schema: one-line messages with the range."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from aimrepro.config import ConfigError, validate_config

REPO = Path(__file__).resolve().parents[2]
SCHEMA = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
CONFIG = yaml.safe_load((REPO / "config.yaml").read_text())


def error_for(mutate) -> str:
    config = copy.deepcopy(CONFIG)
    mutate(config)
    with pytest.raises(ConfigError) as caught:
        validate_config(config, SCHEMA)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_default_config_is_valid():
    validate_config(copy.deepcopy(CONFIG), SCHEMA)


def test_defaults_are_filled_in():
    config = copy.deepcopy(CONFIG)
    del config["scale"]
    del config["paper1"]["figure1"]["T"]
    del config["paper1"]["figure2"]["left"]["rho_infinity_alpha"]
    validate_config(config, SCHEMA)
    assert config["scale"] == "quick"
    assert config["paper1"]["figure1"]["T"] == 2
    assert config["paper1"]["figure2"]["left"]["rho_infinity_alpha"] == {
        "spacing": "lin", "lo": 0, "hi": 0.25}


@pytest.mark.parametrize(("mutate", "expected"), [
    (lambda c: c["paper1"]["figure1"]["left"]["rhos"].__setitem__(0, -1),
     "paper1.figure1.left.rhos[0] = -1; allowed: a number > 0"),
    (lambda c: c["paper1"]["figure2"]["left"].__setitem__("T", 1),
     "paper1.figure2.left.T = 1; allowed: an integer >= 2"),
    (lambda c: c["paper1"]["figure1"].__setitem__("T", 3),
     "paper1.figure1.T = 3; allowed: an integer equal to 2"),
    (lambda c: c["paper1"]["figure1"]["channels"].__setitem__(1, "argmax"),
     "paper1.figure1.channels[1] = 'argmax'; allowed: one of 'hardmax_paper', 'hardmax'"),
    (lambda c: c["paper1"]["figure2"]["right"].__setitem__("rho", "half"),
     "paper1.figure2.right.rho = 'half'; allowed: a number > 0"),
    (lambda c: c.__setitem__("scale", "huge"),
     "scale = 'huge'; allowed: one of 'quick', 'paper'"),
    (lambda c: c["scales"]["paper"]["se_points"].__setitem__("hardmax", 1.5),
     "scales.paper.se_points.hardmax = 1.5; allowed: an integer >= 2"),
    (lambda c: c["paper1"]["figure1"]["left"].__setitem__("rhos", [0.5, 0.5]),
     "paper1.figure1.left.rhos = [0.5, 0.5]; allowed: a list of a number > 0"),
    (lambda c: c["paper1"]["figure2"]["right"].__setitem__("rhoo", 1),
     "paper1.figure2.right.rhoo is not a known key; allowed keys under paper1.figure2.right"),
    (lambda c: c["paper1"]["figure2"]["right"].pop("rho"),
     "paper1.figure2.right.rho is missing; allowed: a number > 0"),
    (lambda c: c["paper1"]["figure1"]["left"]["alpha"].__setitem__("lo", 0),
     "paper1.figure1.left.alpha.lo = 0; allowed: a number > 0"),
    (lambda c: c["paper1"]["figure1"]["right"]["alphabar"].__setitem__("hi", 0.05),
     "paper1.figure1.right.alphabar.hi = 0.05; allowed: a number > lo = 0.1"),
    (lambda c: c["paper1"]["figure2"]["left"].__setitem__(
        "rho_infinity_alpha", {"spacing": "log", "lo": 0, "hi": 0.25}),
     "paper1.figure2.left.rho_infinity_alpha.lo = 0; allowed: a number > 0 (log spacing)"),
])
def test_errors_name_the_key_and_the_allowed_range(mutate, expected):
    assert error_for(mutate).startswith("invalid config: " + expected)
