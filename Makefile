# kioskd — the two commands a new user needs: `make demo` and `make test`.
# Both install their own Debian packages (as root) and build what they need.

SWIFT      ?= swift
CONFIG     ?= debug
SWIFTFLAGS ?=

# Debian packages the build, the demo and the tests need.
APT_PACKAGES := pkg-config
# libsystemd and the bus tests' real parts: dbus-daemon, busctl, gdbus, polkitd, python3-dbus, setpriv.
APT_PACKAGES += libcrypt-dev libsystemd-dev dbus-daemon dbus-bin systemd libglib2.0-bin polkitd python3-dbus util-linux
# LinuxInput and its real-kernel tests (Tests/VM/run-in-vm boots Debian's kernel under QEMU).
APT_PACKAGES += libevdev-dev qemu-system-x86 busybox-static kmod xz-utils python3-evdev
# The broker finds devices through udev (sd-device's monitor listens to udev's source): the VM runs systemd-udevd.
APT_PACKAGES += udev

.PHONY: all deps build test test-vm demo bench bench-store bench-input bench-bus clean

all: build

# Install what is missing; `apt-get update` runs first whenever anything is.
deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "run as root to install:$$missing" >&2; exit 1; fi; \
	  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update -q && \
	  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends $$missing; \
	fi

build: deps
	$(SWIFT) build -c $(CONFIG) $(SWIFTFLAGS)

test: deps
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	$(SWIFT) test --skip-build --no-parallel $(SWIFTFLAGS)
	$(MAKE) --no-print-directory test-vm

# The tests that need root, /dev/uinput and a real kernel, run as root inside a
# throw-away VM (the guest runs the test bundle built here; see Tests/VM/run-in-vm).
VM_TEST_FILTER ?= LinuxInputTests|KioskdInputTests.KioskdVMTests
test-vm: deps
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	VM_UDEV=1 Tests/VM/run-in-vm env KIOSKD_VM_TESTS=1 \
	  "$$($(SWIFT) build --show-bin-path $(SWIFTFLAGS))/kioskdPackageTests.xctest" \
	  --testing-library swift-testing --no-parallel --filter '$(VM_TEST_FILTER)'

demo: deps
	$(SWIFT) build $(SWIFTFLAGS)
	./scripts/demo.sh

# Benchmarks run in release mode and print the figures the issues ask for.
bench: bench-store bench-input bench-bus

bench-store: deps
	$(SWIFT) build -c release --product StoreBench $(SWIFTFLAGS)
	.build/release/StoreBench

# Filter throughput (events/s) and allocations per event, release build.
bench-input:
	$(SWIFT) build -c release --product InputFilterBench $(SWIFTFLAGS)
	bin=$$($(SWIFT) build -c release --show-bin-path); \
	  LD_PRELOAD=$$bin/libMallocInterposerSwift.so $$bin/InputFilterBench

# kioskd on a private dbus-daemon: round trips vs the bus driver, signal latency and fan-out,
# READY=1 time and RSS with 1,000 apps × 50 restrictions. kioskd is built as `make install`
# ships it (Swift runtime and Foundation linked in: the RSS is the installed daemon's), into
# the same .build/release as BusBench, which finds it there. BusBench gets the same flags, so
# the two builds share their objects instead of recompiling each other's. BENCH_BUS_ARGS=
# --startup-only runs only the READY/RSS section.
BENCH_BUS_ARGS ?=
bench-bus: deps
	$(SWIFT) build -c release --static-swift-stdlib --product kioskd $(SWIFTFLAGS)
	$(SWIFT) build -c release --static-swift-stdlib --product BusBench $(SWIFTFLAGS)
	"$$($(SWIFT) build -c release --static-swift-stdlib --show-bin-path $(SWIFTFLAGS))/BusBench" $(BENCH_BUS_ARGS)

clean:
	rm -rf .build
