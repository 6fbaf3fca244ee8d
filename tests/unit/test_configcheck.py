"""aimrepro.config against the pipeline's own schema: one-line messages with the range."""

from __future__ import annotations

import copy
import re

import pytest
import yaml

from aimrepro.config import ConfigError, validate_config

from conftest import CONFIG_SCHEMA as SCHEMA, REPO

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
     "paper1.figure1.left.rhos[0] = -1; allowed: a finite number > 0"),
    (lambda c: c["paper1"]["figure2"]["left"].__setitem__("T", 1),
     "paper1.figure2.left.T = 1; allowed: an integer >= 2"),
    (lambda c: c["paper1"]["figure2"]["right"].__setitem__("T", 1),
     "paper1.figure2.right.T = 1; allowed: an integer >= 2"),
    (lambda c: c["paper1"]["figure1"]["channels"].__setitem__(0, "argmax"),
     "paper1.figure1.channels[0] = 'argmax'; allowed: one of 'hardmax_paper', 'hardmax'"),
    (lambda c: c["paper1"]["figure2"]["left"].__setitem__("rhos", "0.5"),
     "paper1.figure2.left.rhos = '0.5'; allowed: a list of a finite number > 0"),
    (lambda c: c["scales"]["quick"]["se_points"].__setitem__("softmax", "many"),
     "scales.quick.se_points.softmax = 'many'; allowed: an integer >= 2"),
    (lambda c: c["paper1"]["figure1"].__setitem__("T", 3),
     "paper1.figure1.T = 3; allowed: an integer equal to 2"),
    (lambda c: c["paper1"]["figure1"]["channels"].__setitem__(1, "argmax"),
     "paper1.figure1.channels[1] = 'argmax'; allowed: one of 'hardmax_paper', 'hardmax'"),
    (lambda c: c["paper1"]["figure2"]["right"].__setitem__("rho", "half"),
     "paper1.figure2.right.rho = 'half'; allowed: a finite number > 0"),
    (lambda c: c.__setitem__("scale", "huge"),
     "scale = 'huge'; allowed: one of 'quick', 'referee', 'paper'"),
    (lambda c: c["scales"]["paper"]["se_points"].__setitem__("hardmax", 1.5),
     "scales.paper.se_points.hardmax = 1.5; allowed: an integer >= 2"),
    (lambda c: c["paper1"]["figure1"]["left"].__setitem__("rhos", [0.5, 0.5]),
     "paper1.figure1.left.rhos = [0.5, 0.5]; allowed: a list of a finite number > 0"),
    (lambda c: c["paper1"]["figure2"]["right"].__setitem__("rhoo", 1),
     "paper1.figure2.right.rhoo is not a known key; allowed keys under paper1.figure2.right"),
    (lambda c: c["paper1"]["figure2"]["right"].pop("rho"),
     "paper1.figure2.right.rho is missing; allowed: a finite number > 0"),
    (lambda c: c["paper1"]["figure1"]["left"]["alpha"].__setitem__("lo", 0),
     "paper1.figure1.left.alpha.lo = 0; allowed: a finite number > 0"),
    (lambda c: c["paper1"]["figure1"]["right"]["alphabar"].__setitem__("hi", 0.05),
     "paper1.figure1.right.alphabar.hi = 0.05; allowed: a number > lo = 0.1"),
    (lambda c: c["paper1"]["figure2"]["left"].__setitem__(
        "rho_infinity_alpha", {"spacing": "log", "lo": 0, "hi": 0.25}),
     "paper1.figure2.left.rho_infinity_alpha.lo = 0; allowed: a number > 0 (log spacing)"),
])
def test_errors_name_the_key_and_the_allowed_range(mutate, expected):
    assert error_for(mutate).startswith("invalid config: " + expected)


# --- non-finite numbers: one rule, every key -----------------------------------------


def _set(path: str, value):
    """A mutation setting the value at a dotted key path with [i] list indices."""
    parts = path.replace("]", "").replace("[", ".").split(".")

    def mutate(config):
        node = config
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        last = parts[-1]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return mutate


NAN, INF = float("nan"), float("inf")
NON_FINITE = [
    # the examples
    ("paper1.amp_solver.tol", NAN, "allowed: a finite number > 0"),
    ("paper1.amp_solver.damping", NAN, "allowed: a finite number in [0, 1)"),
    ("paper1.figure1.right.rhos[0]", INF, "allowed: a finite number > 0"),
    ("paper2.threshold", NAN, "allowed: a finite number in (0, 1]"),
    ("paper1.figure2.right.gd.optimizer.init_scale", INF, "allowed: a finite number > 0"),
    # more: bounded and unbounded numbers, list items, sizes, learning rates, the limit itself
    ("paper2.figure3.teacher_mean", NAN, "allowed: a finite number"),
    ("paper2.figureS5.teacher_means[1]", -INF, "allowed: a finite number"),
    ("paper2.figureS6.weight_decays[2]", INF, "allowed: a finite number >= 0"),
    ("scales.quick.paper2.figure2.lr", NAN, "allowed: a finite number > 0"),
    ("paper1.figure1.left.alpha.hi", INF, "allowed: a finite number > 0"),
    ("paper1.figure2.left.rho_infinity_alpha.hi", NAN, "allowed: a finite number > 0"),
    ("paper2.figureS3.eta", INF, "allowed: a finite number > 0"),
    ("scales.quick.gd.alphaT_max", INF, "allowed: a finite number > 0"),
    ("scales.quick.se_points.softmax", INF, "allowed: an integer >= 2"),
    ("scales.quick.data.test_samples", NAN, "allowed: an integer >= 1"),
    ("limits.job_memory_gb", INF, "allowed: a finite number > 0"),
]


@pytest.mark.parametrize(("path", "value", "allowed"), NON_FINITE,
                         ids=[f"{p}={v}" for p, v, _ in NON_FINITE])
def test_non_finite_numbers_are_refused_naming_the_key(path, value, allowed):
    message = error_for(_set(path, value))
    assert message.startswith(f"invalid config: {path} = {value!r}; {allowed}")


def test_yaml_nan_and_inf_are_read_as_floats_and_refused():
    text = (REPO / "config.yaml").read_text().replace("tol: 1.0e-5", "tol: .nan")
    assert "tol: .nan" in text
    config = yaml.safe_load(text)
    with pytest.raises(ConfigError, match=r"paper1\.amp_solver\.tol = nan; allowed: a finite number"):
        validate_config(config, SCHEMA)


# --- presets that extend another (aimrepro.config.expand_presets) -------------------------


def test_the_referee_preset_is_the_quick_one_with_its_own_keys_on_top():
    config = validate_config(copy.deepcopy(CONFIG), SCHEMA)
    quick, referee = config["scales"]["quick"], config["scales"]["referee"]
    written = CONFIG["scales"]["referee"]
    assert referee["extends"] == "quick"
    # keys the referee does not write are the quick ones, whole
    for key in set(quick) - set(written):
        assert referee[key] == quick[key], key
    # mappings merge key by key: the referee's paper2 keeps every quick section it does not name
    for section in set(quick["paper2"]) - set(written["paper2"]):
        assert referee["paper2"][section] == quick["paper2"][section], section
    for section, sizes in written["paper2"].items():
        assert referee["paper2"][section] == {**quick["paper2"][section], **sizes}
    assert referee["trends"]["gd"] == written["trends"]["gd"]


def test_expanding_presets_twice_changes_nothing():
    from aimrepro.config import expand_presets

    once = expand_presets(copy.deepcopy(CONFIG))
    assert expand_presets(copy.deepcopy(once)) == once


def test_a_chain_of_presets_expands_in_order():
    from aimrepro.config import expand_presets

    config = {"scales": {"a": {"x": {"p": 1, "q": 2}, "y": [1, 2]},
                         "b": {"extends": "a", "x": {"q": 3}},
                         "c": {"extends": "b", "y": [5]}}}
    expand_presets(config)
    assert config["scales"]["c"] == {"extends": "b", "x": {"p": 1, "q": 3}, "y": [5]}


@pytest.mark.parametrize("mutate, expected", [
    (lambda c: c["scales"]["referee"].__setitem__("extends", "huge"),
     "scales.referee.extends = 'huge'; allowed: the name of another preset under scales"),
    (lambda c: c["scales"]["quick"].__setitem__("extends", "referee"),
     "scales.referee.extends = 'quick'; allowed: a preset that does not extend 'referee' in turn"),
    # an inherited bad value is reported in the preset that wrote it
    (lambda c: c["scales"]["quick"]["gd"].__setitem__("inits", 0),
     "scales.quick.gd.inits = 0; allowed: an integer >= 1"),
    (lambda c: c["scales"]["referee"]["trends"]["gd"].__setitem__("seeds", 1),
     "scales.referee.trends.gd.seeds = 1; allowed: an integer in [2, 1000]"),
])
def test_preset_errors_name_the_key_where_it_is_written(mutate, expected):
    assert error_for(mutate).startswith("invalid config: " + expected)


def test_a_scale_without_its_preset_is_refused():
    from conftest import validated

    config = copy.deepcopy(CONFIG)
    del config["scales"]["referee"]
    config["scale"] = "referee"
    with pytest.raises(ConfigError, match=r"scale = 'referee'; allowed: a preset the config defines under "
                                          r"scales \('quick', 'paper'\)"):
        validated(config)


def test_trend_seeds_per_d_must_match_the_dims():
    from conftest import validated

    config = copy.deepcopy(CONFIG)
    trend = config["scales"]["referee"]["trends"]["amp"]["softmax_T3"]
    trend["seeds"] = [8] * (len(trend["dims"]) - 1)
    shown = re.escape(str(trend["seeds"]))
    with pytest.raises(ConfigError, match=rf"scales.referee.trends.amp.softmax_T3.seeds = {shown}; "
                                          rf"allowed: one count, or one per d \({len(trend['dims'])} for dims"):
        validated(config)
