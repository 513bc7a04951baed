"""The package list: every engine*, tui* and cranfield* package found in the tree, plus `cranfield._demo`,
which pyproject.toml maps onto campaigns/demo (the bundled demo ships as package data of the wheel)."""
from setuptools import find_packages, setup

setup(packages=find_packages(include=["engine", "engine.*", "tui", "tui.*", "cranfield", "cranfield.*"])
      + ["cranfield._demo"])
