# The project's commands. Each sets up .venv (and the Node guest's packages)
# on first use, so every target works on a fresh clone. The demo needs only
# the package; the others also the dev, docs, ray, kubernetes and fuzz extras.
PY := .venv/bin/python
PACKAGE := .venv/.package
STAMP := .venv/.installed

.PHONY: demo test lint docs bench setup vectors mutants

demo: $(PACKAGE)
	$(PY) -m tether run examples/demo.py --bindings tether.demo:BINDINGS

test: $(STAMP)
	$(PY) -m pytest

lint: $(STAMP)
	.venv/bin/ruff check .
	.venv/bin/mypy --strict -p tether

docs: $(STAMP)
	.venv/bin/sphinx-build -W --keep-going -q -b html docs docs/_build/html

bench: $(STAMP)
	$(PY) bench/run.py

vectors: $(STAMP)
	$(PY) conformance/vectors/generate.py
	$(PY) -m tether.conformance.coverage

# Each requirement broken in turn in a copy of a guest (or the host): a case
# must fail on every one (conformance/mutants.py; the suite runs a few).
mutants: $(STAMP)
	$(PY) -m tether.conformance.mutants

setup: $(STAMP)

$(PACKAGE): pyproject.toml
	test -x $(PY) || python3 -m venv .venv
	$(PY) -m pip install --quiet --disable-pip-version-check -e .
	touch $(PACKAGE)

$(STAMP): $(PACKAGE) guest/node/package-lock.json
	$(PY) -m pip install --quiet --disable-pip-version-check -e ".[dev,docs,ray,kubernetes,fuzz]"
	npm ci --prefix guest/node --no-audit --no-fund --loglevel=error
	touch $(STAMP)
