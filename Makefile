# kioskd — the two commands a new user needs: `make demo` and `make test`.
# Both install their own Debian packages (as root) and build what they need.

SWIFT      ?= swift
CONFIG     ?= debug
SWIFTFLAGS ?=

# Debian packages the build, the demo and the tests need.
APT_PACKAGES := pkg-config

.PHONY: all deps build test demo bench bench-input clean

all: build

# Install what is missing; `apt-get update` runs first whenever anything is.
deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "run as root to install:$$missing" >&2; exit 1; fi; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi

build: deps
	$(SWIFT) build -c $(CONFIG) $(SWIFTFLAGS)

test: deps
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	$(SWIFT) test --skip-build $(SWIFTFLAGS)

demo: build
	./scripts/demo.sh

# Filter throughput (events/s) and allocations per event, release build.
bench-input:
	$(SWIFT) build -c release --product InputFilterBench $(SWIFTFLAGS)
	bin=$$($(SWIFT) build -c release --show-bin-path); \
	  LD_PRELOAD=$$bin/libMallocInterposerSwift.so $$bin/InputFilterBench

clean:
	rm -rf .build
