"""Only what pyproject.toml cannot say: the top-level ``scenarios/`` folder ships inside the
wheel as the data package ``harness.scenarios.shipped`` (see ``harness.scenarios.scenario.SCENARIO_DIR``)."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["harness*", "scripted_agents*"]), "harness.scenarios.shipped"],
    package_dir={"harness.scenarios.shipped": "scenarios"},
)
