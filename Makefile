# fivezero — build, run and test. `make run` plays as a Gomocup brain on stdin/stdout;
# `make test` runs the whole suite. Both fetch what they need themselves.
SHELL := /bin/bash
CARGO ?= cargo
RELEASE_DIR := target/release
ENGINE := $(RELEASE_DIR)/pbrain-fivezero
FUZZ_SECONDS ?= 60

.PHONY: all build run test bench fuzz clean train-fast train train-production

all: build

## build: release binaries (pbrain-fivezero, fivezero-tools, trainer) under target/release
build: third_party/.runtime-ok third_party/.libtorch-ok
	$(CARGO) build --release --workspace --bins

## run: the engine on its embedded default (classical evaluator), speaking Gomocup on stdin/stdout.
## Builds only the engine (no libtorch needed); the ONNX Runtime is fetched for --model use.
run: third_party/.runtime-ok
	@$(CARGO) build --release -q -p engine --bin pbrain-fivezero
	@$(ENGINE)

## test: every unit, property and black-box test (the black-box ones drive the release binaries)
test: build third_party/.runtime-ok third_party/.libtorch-ok
	$(CARGO) test --release --workspace

## bench: criterion benches and the engine's bench signature
bench: build
	$(CARGO) bench -p engine
	$(ENGINE) bench

## fuzz: run the protocol parser fuzz target for FUZZ_SECONDS (default 60)
fuzz:
	./scripts/fuzz.sh $(FUZZ_SECONDS)

## third_party/.runtime-ok: ONNX Runtime (libonnxruntime.so) and the Python checker venv, from PyPI
third_party/.runtime-ok: scripts/fetch-runtime.sh
	./scripts/fetch-runtime.sh && touch $@

## third_party/.libtorch-ok: libtorch 2.13.0 (CPU layout) for the trainer, from PyPI wheels
third_party/.libtorch-ok: scripts/fetch-libtorch.sh
	./scripts/fetch-libtorch.sh && touch $@

## train-fast / train / train-production: the trainer with a profile of trainer/presets.toml
## (extra flags: make train ARGS="--device cuda --epochs 3")
train-fast train train-production: build
	$(RELEASE_DIR)/trainer --config trainer/presets.toml --profile $@ $(ARGS)

clean:
	$(CARGO) clean
