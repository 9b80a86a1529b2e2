# kioskd — the two commands a new user needs: `make demo` and `make test`.
# Both install their own Debian packages (as root) and build what they need.

SWIFT      ?= swift
CONFIG     ?= debug
SWIFTFLAGS ?=

# Debian packages the build, the demo and the tests need.
APT_PACKAGES := pkg-config libsystemd-dev dbus-daemon dbus-bin systemd libglib2.0-bin polkitd python3-dbus util-linux

.PHONY: all deps build test demo bench bench-store clean

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

demo: deps
	$(SWIFT) build $(SWIFTFLAGS)
	./scripts/demo.sh

# Benchmarks run in release mode and print the figures the issues ask for.
bench: bench-store

bench-store: deps
	$(SWIFT) build -c release --product StoreBench $(SWIFTFLAGS)
	.build/release/StoreBench

clean:
	rm -rf .build
