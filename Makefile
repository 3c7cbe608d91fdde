# attnsep — the two commands a fresh machine needs: `make reproduce` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.installed-docs
# The CPU build of torch lies on this machine's disk; pinning it avoids a multi-GB CUDA download.
TORCH  ?= torch==2.13.0

.PHONY: install docs-tools reproduce reproduce-full claims-page claims-full-page test test-fast bench bench-standard docs docs-serve lint clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -qq "$(TORCH)"
	$(PY) -m pip install -qq -e ".[dev,ray]"
	touch $(STAMP)

# The documentation's tools (the `docs` extra): the site, and the tests that build its API
# reference, so that `make test` runs those too.
docs-tools: $(DOCS_STAMP)

$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install -qq -e ".[docs]"
	touch $(DOCS_STAMP)

reproduce: install
	$(VENV)/bin/attnsep reproduce --quick --out results/report --store results/attnsep.sqlite

# Paper scale: every claim at the full preset into its own store (stop it and run it again to
# resume), then the pages docs/claims-full.md with the run's CPU and wall time, and beside each
# verdict the standard preset's five-seed one where that report is here.
REPLICATION = results/report-replication
reproduce-full: install
	$(VENV)/bin/attnsep reproduce --full --out results/report-full --store results/full.sqlite
	$(PY) docs/build_claims_page.py results/report-full --store results/full.sqlite \
		--page docs/claims-full.md --assets docs/claims-full \
		--beside $(if $(wildcard $(REPLICATION)/claims.json),$(REPLICATION),docs/claims.md)

# The published paper-scale page again, from the stores of docs/runs/ (stored records only, in a
# folder of their own: a run of reproduce-full in results/ is left alone): the verdicts of master
# seed 2, a confirmatory seed, with master seed 0's (exploratory) and the standard preset's
# five-seed ones beside them, and the page's own paragraph on the runs kept; master seed 1's
# select-width (B5.2's fresh confirmation) judged into a report of its own. The stores hold every
# job they are judged on, so nothing is computed.
PUBLISHED = results/published
claims-full-page: install
	rm -rf $(PUBLISHED)/full*.sqlite $(PUBLISHED)/report-full* && mkdir -p $(PUBLISHED)
	gunzip -c docs/runs/full.sqlite.gz > $(PUBLISHED)/full.sqlite
	gunzip -c docs/runs/full-seed2.sqlite.gz > $(PUBLISHED)/full-seed2.sqlite
	gunzip -c docs/runs/full-seed1-select-width.sqlite.gz > $(PUBLISHED)/full-seed1.sqlite
	$(VENV)/bin/attnsep reproduce --full --seed 0 --store $(PUBLISHED)/full.sqlite \
		--out $(PUBLISHED)/report-full
	$(VENV)/bin/attnsep reproduce --full --seed 2 --store $(PUBLISHED)/full-seed2.sqlite \
		--out $(PUBLISHED)/report-full-seed2
	$(VENV)/bin/attnsep reproduce --full --seed 1 --only select-width \
		--store $(PUBLISHED)/full-seed1.sqlite --out $(PUBLISHED)/report-full-seed1
	$(PY) docs/build_claims_page.py $(PUBLISHED)/report-full-seed2 \
		--store $(PUBLISHED)/full-seed2.sqlite --page docs/claims-full.md --assets docs/claims-full \
		--beside $(PUBLISHED)/report-full --beside docs/claims.md \
		--note "$$(grep '^The runs (' docs/claims-full.md)"

# The published five-seed page (docs/claims.md) again, from the store of docs/runs/ (stored
# records only): the standard preset on the five confirmatory master seeds, with its cost.
claims-page: install
	rm -rf $(PUBLISHED)/replication.sqlite $(PUBLISHED)/report-replication && mkdir -p $(PUBLISHED)
	gunzip -c docs/runs/replication.sqlite.gz > $(PUBLISHED)/replication.sqlite
	$(VENV)/bin/attnsep reproduce --standard --replicate 5 \
		--store $(PUBLISHED)/replication.sqlite --out $(PUBLISHED)/report-replication
	$(PY) docs/build_claims_page.py $(PUBLISHED)/report-replication \
		--store $(PUBLISHED)/replication.sqlite

# The suite in two parts: the tests not marked slow side by side on every core (test-fast:
# pytest-xdist, each file on one worker), then the multi-process, cluster and kill-and-resume
# ones (marked slow) one at a time, with the machine to themselves.
test: test-fast
	$(PY) -m pytest -m slow

test-fast: install docs-tools
	$(PY) -m pytest -n auto --dist loadfile -m "not slow"

bench: install
	$(PY) bench/run.py

bench-standard: install
	$(PY) bench/run.py --only standard_xor --out bench/results-standard.json

docs: docs-tools
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict
	$(PY) docs/check_site_links.py build/site

# Builds the site and serves it at http://127.0.0.1:8000, rebuilt as docs/ changes.
docs-serve: docs-tools
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve -a 127.0.0.1:8000

lint: install
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) results build *.egg-info src/*.egg-info
