# kioskd — the two commands a new user needs: `make demo` and `make test`.
# Both install their own Debian packages (as root) and build what they need.

SWIFT      ?= swift
CONFIG     ?= debug
SWIFTFLAGS ?=

# Debian packages the build, the demo and the tests need.
APT_PACKAGES := pkg-config
# g++ brings libstdc++.a, which the release link takes libstdc++ from (static-cxx, below).
APT_PACKAGES += g++
# libsystemd and the bus tests' real parts: dbus-daemon, busctl, gdbus, polkitd, python3-dbus, setpriv.
APT_PACKAGES += libcrypt-dev libsystemd-dev dbus-daemon dbus-bin systemd libglib2.0-bin polkitd python3-dbus util-linux
# kioskctl -H user@host runs ssh (sd-bus's remote transport). KioskctlRemoteTests runs it against a
# real sshd of its own in a network namespace of its own, whose loopback it brings up with ip
# (iproute2). openssh-server is NOT installed: on a machine booted with systemd that would also
# enable and start the machine's own ssh.service on port 22. `test` runs Tests/Support/fetch-sshd,
# which unpacks the openssh-server .deb of openssh-client's version into ~/.cache/kioskd-sshd.
# libwrap0: the one library that sshd links and a minimal Debian 12 plus the packages here lacks.
APT_PACKAGES += openssh-client iproute2 libwrap0
# LinuxInput and its real-kernel tests (Tests/VM/run-in-vm boots Debian's kernel under QEMU).
APT_PACKAGES += libevdev-dev qemu-system-x86 busybox-static kmod xz-utils python3-evdev
# The broker finds devices through udev (sd-device's monitor listens to udev's source): the VM runs systemd-udevd.
APT_PACKAGES += udev
# The slow-disk VM test puts kioskd's state on ext4 over a loop device under dm-delay: dmsetup, mkfs.ext4.
APT_PACKAGES += dmsetup e2fsprogs
# The calibration VM test reads the clones as a compositor would: libinput list-devices, debug-events.
APT_PACKAGES += libinput-tools
# kioskd-prompt, the display of the kiosk's passcode prompt: GTK 4 to build it; its tests draw it
# under cage (headless wlroots; cage 0.1.4 will not start without Xwayland) and on Xvfb, and
# serve kioskd's side from a python3-dbus stand-in on GLib's loop (python3-gi).
APT_PACKAGES += libgtk-4-dev cage xwayland xvfb python3-gi
# Its accessible tree read over AT-SPI by a real client (AccessibleTreeTests): at-spi2-core's bus
# launcher and registry, and python3-pyatspi, the reader.
APT_PACKAGES += at-spi2-core python3-pyatspi
# Its locked regions' layer on X11 (LockedRegionsDisplayTests): a compositing manager for its
# translucency, xev as the app under it (x11-utils) and xdotool to click through it.
APT_PACKAGES += xcompmgr x11-utils xdotool
# Its translations (po/, gettext's tools): xgettext extracts the texts, msgcmp and msgfmt check
# and compile the catalogues (check-po, PromptDisplayTests and AccessibleTreeTests, install-prompt).
APT_PACKAGES += gettext
# kioskctl-profile-png (kioskd-tools), what `kioskctl profile show --png` runs: cairo draws the
# profile's touch locks and reads and writes the PNGs (GTK 4 brings libcairo2-dev too; named here
# because this program needs it whatever GTK needs).
APT_PACKAGES += libcairo2-dev
# kioskd-bridge, the web pages' read-only bridge: libmicrohttpd serves its HTTP; its tests speak to
# it with curl (a client nobody here wrote), node runs kioskd.js, and systemd-socket-activate
# (package systemd) passes it a socket as kioskd-bridge.socket does.
APT_PACKAGES += libmicrohttpd-dev curl nodejs

.PHONY: all deps deps-browser build test fuzz test-asan test-tsan check-module-graph check-tree test-vm ansible deps-ansible test-ansible deps-firefox test-firefox demo bench bench-bridge bench-web bench-store bench-input bench-bus latency-bench-build bench-latency bench-latency-count bench-hotplug bench-footprint orca-memory clean

all: build

# Install what is missing, by name: apt picks the archive's candidate, so nothing here depends on
# a version that was current the day it was written. `apt-get update` runs first whenever anything
# is missing; an install that fails (a download the archive no longer serves, an interrupted
# unpack) runs `apt-get update` and `apt-get -f install` once and tries again. Installed packages
# are left as they are (no upgrade), except what apt must upgrade so that a new package's
# dependencies hold (a -dev package needs its library's exact version).
APT := DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 -q
deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "run as root to install:$$missing" >&2; exit 1; fi; \
	  $(APT) update && $(APT) install -y --no-install-recommends $$missing || { \
	    echo "deps: apt-get install failed; apt-get update, apt-get -f install, and one more try" >&2; \
	    $(APT) update && $(APT) -f install -y --no-install-recommends && \
	    $(APT) install -y --no-install-recommends $$missing; }; \
	fi

# The real browser the tests hold kioskd's browser policy against (ChromiumPolicyTests,
# docs/browsers.md): Debian's chromium, run headless (no display needed; as root, CI's user, it
# runs only with --no-sandbox). Not in APT_PACKAGES: `make build` and `make demo` need no browser.
BROWSER_PACKAGES := chromium
deps-browser:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(APT_PACKAGES) $(BROWSER_PACKAGES)"

build: deps
	$(SWIFT) build -c $(CONFIG) $(SWIFTFLAGS)

test: deps deps-browser
	$(MAKE) --no-print-directory check-module-graph check-tree check-po
	Tests/Support/fetch-sshd >/dev/null
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	$(SWIFT) test --skip-build --no-parallel $(SWIFTFLAGS)
	$(MAKE) --no-print-directory test-vm

# The module graph of README § Architecture, checked against Package.swift: pure modules reach
# only what they may, an app linking KioskClient gets no TOML, YAML, filter or daemon model, and
# kioskd never links Yams; the pure modules' sources import no C module, Glibc, Foundation,
# Dispatch or Logging and read no clock; and ManagerObject's files follow docs/dbus-api.md's
# groups of members. Seconds, no build.
check-module-graph:
	SWIFT="$(SWIFT)" python3 scripts/check-module-graph.py
	python3 scripts/check-manager-groups.py

# What a reader is told, checked: no reference they cannot open (a design document, an issue or
# a session number), every relative link in the Markdown resolves (file and heading), every doc
# comment sits on a declaration, and docs/architecture.md's module graph is Package.swift's.
# Seconds, no build.
check-tree:
	python3 scripts/check-tree.py
	SWIFT="$(SWIFT)" python3 scripts/check-architecture.py

# The tests that need root, /dev/uinput and a real kernel, run as root inside a
# throw-away VM (the guest runs the test bundle built here; see Tests/VM/run-in-vm).
VM_TEST_FILTER ?= LinuxInputTests|KioskdEnforcementTests.KioskdVMTests|KioskdEnforcementTests.PointerVMTests|KioskdEnforcementTests.SlowDiskVMTests|KioskdEnforcementTests.BrokenDiskVMTests|KioskdEnforcementTests.WallClockVMTests|KioskdEnforcementTests.CalibrationVMTests|KioskdEnforcementTests.PromptVMTests|KioskdEnforcementTests.TimeOfferVMTests|KioskdEnforcementTests.IdleVMTests|KioskdEnforcementTests.CleaningVMTests|KioskdEnforcementTests.DrawingVMTests
test-vm: deps
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	VM_UDEV=1 Tests/VM/run-in-vm env KIOSKD_VM_TESTS=1 \
	  "$$($(SWIFT) build --show-bin-path $(SWIFTFLAGS))/kioskdPackageTests.xctest" \
	  --testing-library swift-testing --no-parallel --filter '$(VM_TEST_FILTER)'

# ---------------------------------------------------------------------- fuzz, sanitizers ----
# Fuzzing (docs/testing.md § Fuzzing): one libFuzzer harness per parser (profiles, the state file,
# evemu and `libinput record` recordings, D-Bus arguments) and one for the input filter fed raw
# kernel event streams, asserting its locks. Each is built with libFuzzer and AddressSanitizer
# into .build-fuzz and runs FUZZ_SECONDS from its seeds in Fuzz/corpus; a crash, a leak, a
# timeout or a broken invariant fails the target, its input kept in .build-fuzz/artifacts.
FUZZ_SECONDS ?= 60
FUZZ_HARNESSES ?= FilterFuzz ProfileFuzz StateFuzz TraceFuzz BusFuzz
FUZZ_BUILD := $(SWIFT) build --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -DKIOSKD_FUZZING -Xswiftc -use-ld=lld
fuzz: deps
	@for harness in $(FUZZ_HARNESSES); do $(FUZZ_BUILD) --product $$harness || exit 1; done
	Fuzz/run-fuzz $(FUZZ_SECONDS) "$$($(FUZZ_BUILD) --show-bin-path)" $(FUZZ_HARNESSES)

# The host test suite under AddressSanitizer (docs/testing.md § Sanitizers), in .build-asan: every
# Swift test `make test` runs but the VM's (ASAN_FILTER, a --filter pattern, runs fewer). Not in
# CI (it does not fit its time); run before a release, its result recorded in docs/testing.md.
# KioskdLargeCallTests runs apart, without ASan's quarantine of freed memory, which its bound on
# kioskd's memory growth would count. ProfileParseCacheTests does not run here: its 512 KiB bound
# on kioskd's growth over 400 ListProfiles is glibc malloc's; under ASan's allocator the same run
# grows ~3 MiB even without the quarantine (34 MiB with it). It runs in make test.
ASAN_FILTER ?=
test-asan: deps deps-browser
	Tests/Support/fetch-sshd >/dev/null
	$(SWIFT) build --build-tests --sanitize address --scratch-path .build-asan $(SWIFTFLAGS)
	ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --skip-build --no-parallel --sanitize address --scratch-path .build-asan \
	  $(SWIFTFLAGS) $(if $(ASAN_FILTER),--filter '$(ASAN_FILTER)') --skip 'KioskdLargeCallTests|ProfileParseCacheTests'
	ASAN_OPTIONS=detect_leaks=0:quarantine_size_mb=0 $(SWIFT) test --skip-build --no-parallel --sanitize address \
	  --scratch-path .build-asan $(SWIFTFLAGS) --filter KioskdLargeCallTests

# The pure modules' tests and the in-process daemon's under ThreadSanitizer, in .build-tsan.
# libsystemd and libevdev are not instrumented: Tests/Support/tsan.supp names them
# (docs/testing.md § Sanitizers). Not in CI; run before a release, recorded in docs/testing.md.
TSAN_FILTER ?= KioskAPITests|KioskInputTests|KioskCoreTests|KioskTracesTests|KioskStoreTests|KioskDaemonTests
test-tsan: deps
	$(SWIFT) build --build-tests --sanitize thread --scratch-path .build-tsan $(SWIFTFLAGS)
	TSAN_OPTIONS="suppressions=$(CURDIR)/Tests/Support/tsan.supp halt_on_error=0" \
	  $(SWIFT) test --skip-build --no-parallel --sanitize thread --scratch-path .build-tsan $(SWIFTFLAGS) \
	  --filter '$(TSAN_FILTER)'

# The soak (docs/testing.md § make soak): the release kioskd in the VM for SOAK_SECONDS under
# every kind of traffic at once (touch bursts at 120 Hz, typing, hot-plugs, apps coming and going,
# an admin's change every second, sessions started, extended, reloaded and ended at the kiosk and
# over the bus, wrong passcodes, the wall clock jumping, SIGKILL and restarts), checked all along:
# no lost state, every change heard once and in order, no locked key on a clone, RSS, fds and
# the epoll set flat; and the state file's saves and bytes an hour (Tests/Soak/kioskd-soak,
# python3-dbus, gdbus and python3-evdev). Not part of make test-vm; CI runs a short one.
# The figures land in SOAK_OUT (soak.json, kioskd's log).
SOAK_SECONDS ?= 300
SOAK_OUT     ?= build/soak
SOAK_ARGS    ?=
.PHONY: soak
soak: deps link-inputs
	$(SWIFT) build $(RELEASE_FLAGS) --product kioskd-multicall $(SWIFTFLAGS)
	mkdir -p $(SOAK_OUT)
	VM_UDEV=1 VM_TIMEOUT=$$(( $(SOAK_SECONDS) + 900 )) VM_RW_DIRS="$(CURDIR)/$(SOAK_OUT)" \
	  Tests/VM/run-in-vm env KIOSKD_SOAK_IN_VM=1 Tests/Soak/kioskd-soak --kioskd "$(RELEASE_BIN)/kioskd-multicall" \
	  --seconds $(SOAK_SECONDS) --out "$(CURDIR)/$(SOAK_OUT)" $(SOAK_ARGS)

# ------------------------------------------------------------------------- ansible ----
# The Ansible collection kioskd.kiosk (packaging/ansible, docs/fleet.md), built by Debian's
# ansible-core into .build/ansible/kioskd-kiosk-VERSION.tar.gz. `test-ansible` runs the fleet
# playbook against three namespaced kiosks on this machine, each with its own sshd, bus, kioskd
# and /etc/kioskd (Tests/Ansible/run, as root; it says it skipped, and passes, otherwise).
ANSIBLE_PACKAGES := ansible-core
ANSIBLE_OUT      := .build/ansible
deps-ansible:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(APT_PACKAGES) $(ANSIBLE_PACKAGES)"

ansible: deps-ansible
	rm -rf $(ANSIBLE_OUT) && mkdir -p $(ANSIBLE_OUT)
	ansible-galaxy collection build --force --output-path $(ANSIBLE_OUT) packaging/ansible

test-ansible:
	@if [ "$$(id -u)" != 0 ]; then \
	  echo "test-ansible: skipped: needs root (network and mount namespaces, sshd, kioskd)"; exit 0; fi; \
	$(MAKE) --no-print-directory ansible && \
	Tests/Support/fetch-sshd >/dev/null && \
	$(SWIFT) build --product kioskd $(SWIFTFLAGS) && $(SWIFT) build --product kioskctl $(SWIFTFLAGS) && \
	Tests/Ansible/run "$$($(SWIFT) build --show-bin-path $(SWIFTFLAGS))" $(ANSIBLE_OUT)/kioskd-kiosk-*.tar.gz

# ------------------------------------------------------------------------- firefox ----
# Firefox ESR itself reading a policies.json with the keys kioskd merges (docs/browsers.md
# § Firefox ESR: what its policies do here): Tests/Browser/firefox-policies runs Debian's
# firefox-esr headless, in a private mount namespace where /etc/firefox/policies is a temp dir,
# and drives it over Marionette; Debian's chromium, headless, checks the Chromium side of the
# table of URL filters it translates. It builds nothing and is not part of `make test` (run
# outside CI); as another user than root it says it skipped, and passes.
FIREFOX_PACKAGES := firefox-esr chromium
deps-firefox:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(APT_PACKAGES) $(FIREFOX_PACKAGES)"

test-firefox: deps-firefox
	Tests/Browser/firefox-policies

demo: deps
	$(SWIFT) build $(SWIFTFLAGS)
	./scripts/demo.sh

# Benchmarks run in release mode and print the figures the issues ask for: bench-store, bench-input,
# bench-bus, bench-footprint, and bench-latency (in the VM: physical event → clone through kioskd
# next to no forwarder and plain read→write loops, p50/p99, added latency, ratios, CPU). All of them build with
# the same flags, BENCH_FLAGS, which are RELEASE_FLAGS (below): kioskd is built and linked exactly
# as `make install` and the package ship it, so the RSS measured is the installed daemon's, and a
# `make deb` before a benchmark (make bench-footprint) relinks nothing. Everything goes into the
# same .build/release, so running one after another reuses the shared modules' objects.
BENCH_FLAGS  = $(RELEASE_FLAGS)
BENCH_BIN    = $(shell $(SWIFT) build $(BENCH_FLAGS) --show-bin-path $(SWIFTFLAGS))

bench: bench-store bench-input bench-bus bench-latency bench-hotplug bench-footprint bench-bridge bench-web

# kioskd-bridge (docs/benchmarks.md § The web bridge): its binary and package size (build/deb, when
# make deb made it), VmRSS idle and with 32 streams, and the latency from SetRestrictionState to
# the `change` event at a client, p50/p99 over 200 changes (scripts/bench-bridge, python3-dbus).
bench-bridge: deps link-inputs
	$(SWIFT) build $(BENCH_FLAGS) --product kioskd-multicall $(SWIFTFLAGS)
	$(SWIFT) build $(BENCH_FLAGS) --product kioskd-bridge $(SWIFTFLAGS)
	scripts/bench-bridge "$(BENCH_BIN)" $(DEB_DIR)

# A page in Chromium hearing an admin's change (docs/benchmarks.md § The web bridge): the release
# kioskctl's deny/allow → the page's `change` event through kioskd-bridge and kioskd.js, with
# kioskd's own policy file in Chromium's namespaces, p50/p99/max over 200 changes (scripts/bench-web;
# root, chromium).
bench-web: deps deps-browser link-inputs
	$(SWIFT) build $(BENCH_FLAGS) --product kioskd-multicall $(SWIFTFLAGS)
	$(SWIFT) build $(BENCH_FLAGS) --product kioskd-bridge $(SWIFTFLAGS)
	scripts/bench-web "$(BENCH_BIN)"

# What a small kiosk board pays: each package's Installed-Size and executables (make deb), and
# kioskd's VmRSS after READY=1 with an empty store and with 1,000 × 50 (scripts/bench-footprint).
bench-footprint: deps-packaging
	scripts/bench-footprint

# What the Orca screen reader adds at a kiosk (docs/accessibility.md § A screen reader in the kiosk
# session): Orca, speech-dispatcher and its voice beside a GTK 4 window on Xvfb and a private
# accessibility bus, each process's RSS, PSS and private memory, Orca's first start and a later one
# (scripts/orca-memory.sh; about 20 s). It builds nothing and is not part of `make bench` or
# `make test`; it installs Orca and the espeak-ng voice (a Recommends that --no-install-recommends
# leaves out) and xprop. Run alone, the script skips (exit 77) when orca is not installed.
ORCA_PACKAGES := orca speech-dispatcher-espeak-ng x11-utils
orca-memory:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(APT_PACKAGES) $(ORCA_PACKAGES)"
	scripts/orca-memory.sh

bench-store: deps link-inputs
	$(SWIFT) build $(BENCH_FLAGS) --product StoreBench $(SWIFTFLAGS)
	"$(BENCH_BIN)/StoreBench"

# Filter throughput (events/s) and allocations per event. malloc-interposer's library is
# preloaded, so that it sees every allocation of the process; InputFilterBench also needs it by
# name, and release binaries carry no $ORIGIN rpath: LD_LIBRARY_PATH finds it.
bench-input: deps link-inputs
	$(SWIFT) build $(BENCH_FLAGS) --product InputFilterBench $(SWIFTFLAGS)
	LD_LIBRARY_PATH="$(BENCH_BIN)" LD_PRELOAD="$(BENCH_BIN)/libMallocInterposerSwift.so" "$(BENCH_BIN)/InputFilterBench"

# kioskd on a private dbus-daemon: round trips vs the bus driver, signal latency and fan-out,
# READY=1 time and RSS with 1,000 apps × 50 restrictions. kioskd is built as `make install`
# ships it (the multi-call binary: the RSS is the installed daemon's), into the same
# .build/release as BusBench, which runs what $KIOSKD_BINARY names. BENCH_BUS_ARGS=--startup-only
# runs only the READY/RSS section and the memory of a passcode check (VmRSS sampled every ~1 ms).
BENCH_BUS_ARGS ?=
bench-bus: deps link-inputs
	$(SWIFT) build $(BENCH_FLAGS) --product kioskd-multicall $(SWIFTFLAGS)
	$(SWIFT) build $(BENCH_FLAGS) --product BusBench $(SWIFTFLAGS)
	KIOSKD_BINARY="$(BENCH_BIN)/kioskd-multicall" "$(BENCH_BIN)/BusBench" $(BENCH_BUS_ARGS)

# The broker's added latency (docs/benchmarks.md § Latency), inside the VM like test-vm, one vCPU
# (VM_CPUS): no forwarder (the reader reads the source), the plain loop in C (Benchmarks/PlainLoop,
# built with the host's cc, libevdev for the clone), the same loop in Python (PYTHON_LOOP=, empty:
# left out) and kioskd (the multi-call binary as the package ships it, a session active on a
# private dbus-daemon), all alive at once on their own fake devices, taking turns every 10 frames.
# LatencyBench prints per path p50/p99/max, the latency added over no forwarder, the ratios to the
# C loop and CPU per frame, per run and pooled. LATENCY_ROUNDS=N runs (default 5, the order of the
# turns rotating), LATENCY_FRAMES frames per path per run; KIOSKD_BEFORE=binary adds an older
# kioskd, which takes turns with kioskd run by run (LATENCY_ROUNDS runs each).
PLAIN_LOOP = $(BENCH_BIN)/plain-loop
PYTHON_LOOP ?= $(CURDIR)/Benchmarks/PlainLoop/plain-loop.py
# What both latency benches run: kioskd as packaged, the bench, the C loop.
latency-bench-build: deps link-inputs
	$(SWIFT) build $(BENCH_FLAGS) --product kioskd-multicall $(SWIFTFLAGS)
	$(SWIFT) build $(BENCH_FLAGS) --product LatencyBench $(SWIFTFLAGS)
	$(CC) -O2 -Wall -Wextra -o "$(PLAIN_LOOP)" Benchmarks/PlainLoop/plain-loop.c $$(pkg-config --cflags --libs libevdev)

bench-latency: latency-bench-build
	VM_UDEV=1 VM_CPUS="$${VM_CPUS:-1}" VM_ENV="KIOSKD_BINARY KIOSKD_BEFORE PLAIN_LOOP PYTHON_LOOP LATENCY_ROUNDS LATENCY_FRAMES LATENCY_PERIOD_US" \
	  KIOSKD_BINARY="$(BENCH_BIN)/kioskd-multicall" PLAIN_LOOP="$(PLAIN_LOOP)" PYTHON_LOOP="$(PYTHON_LOOP)" \
	  Tests/VM/run-in-vm "$(BENCH_BIN)/LatencyBench"

# The same bench counting instructions instead of timing (docs/benchmarks.md § Instructions per
# frame): the C loop and kioskd under callgrind, counters zeroed before each run's feed and dumped
# after it; repeatable on a loaded or emulated machine, which times are not. Profiles stay in
# build/bench-latency-count (callgrind_annotate). Fewer, slower frames: valgrind runs kioskd
# ~50 times slower. KIOSKD_BEFORE as for bench-latency. valgrind 3.19 (Debian 12) gives up on
# the DWARF in these binaries, so it runs copies without debug sections (the same code; dh_strip
# takes those sections from the packaged binary too): the symbol table stays, and with it every
# function name.
LATENCY_COUNT_DIR = $(CURDIR)/build/bench-latency-count
bench-latency-count: latency-bench-build
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(APT_PACKAGES) valgrind"
	rm -rf "$(LATENCY_COUNT_DIR)" && mkdir -p "$(LATENCY_COUNT_DIR)"
	objcopy --strip-debug "$(BENCH_BIN)/kioskd-multicall" "$(LATENCY_COUNT_DIR)/kioskd-multicall"
	if [ -n "$$KIOSKD_BEFORE" ]; then objcopy --strip-debug "$$KIOSKD_BEFORE" "$(LATENCY_COUNT_DIR)/kioskd-before"; fi
	VM_UDEV=1 VM_CPUS="$${VM_CPUS:-1}" VM_MEM="$${VM_MEM:-3072}" VM_TIMEOUT="$${VM_TIMEOUT:-5400}" \
	  VM_RW_DIRS="$(LATENCY_COUNT_DIR)" \
	  VM_ENV="KIOSKD_BINARY KIOSKD_BEFORE PLAIN_LOOP LATENCY_ROUNDS LATENCY_FRAMES LATENCY_PERIOD_US LATENCY_CALLGRIND" \
	  KIOSKD_BINARY="$(LATENCY_COUNT_DIR)/kioskd-multicall" PLAIN_LOOP="$(PLAIN_LOOP)" LATENCY_CALLGRIND="$(LATENCY_COUNT_DIR)" \
	  KIOSKD_BEFORE="$${KIOSKD_BEFORE:+$(LATENCY_COUNT_DIR)/kioskd-before}" \
	  LATENCY_ROUNDS="$${LATENCY_ROUNDS:-1}" LATENCY_FRAMES="$${LATENCY_FRAMES:-800}" \
	  LATENCY_PERIOD_US="$${LATENCY_PERIOD_US:-10000}" \
	  Tests/VM/run-in-vm "$(BENCH_BIN)/LatencyBench"

# How long a new input node is open before the broker grabs it (docs/input-enforcement.md § Hotplug), release build, in
# the VM with udev running (HOTPLUG_ROUNDS, default 100). VM_CPUS=2 gives the guest two vCPUs.
bench-hotplug: deps link-inputs
	$(SWIFT) build $(BENCH_FLAGS) --product HotplugBench $(SWIFTFLAGS)
	VM_UDEV=1 VM_ENV="HOTPLUG_ROUNDS" Tests/VM/run-in-vm "$(BENCH_BIN)/HotplugBench"

# ------------------------------------------------------------------------ packaging ----
# `make install` (DESTDIR, PREFIX), `make deb`, and their tests (docs/packaging.md).
.PHONY: release-build prompt-pkgconfig print-release-flags text-order static-cxx link-inputs install install-files install-tools install-prompt install-bridge deb test-fresh test-packaging test-boot test-boot-trixie test-boot-arm64 test-install deps-packaging deps-boot

# Debian's own packaging tools: dpkg-buildpackage, dh (debhelper compat 13), lintian; udev for
# its udev.pc (where this release wants udev rules).
PACKAGING_PACKAGES := dpkg-dev debhelper fakeroot lintian udev g++ elfutils xz-utils
# The boot test: debootstrap builds a Debian root (systemd as PID 1) that boots under QEMU from
# a qcow2 overlay (qemu-img); mkfs.ext4 -d (e2fsprogs) fills the disk image without mounting it.
BOOT_PACKAGES := debootstrap qemu-utils qemu-system-x86 e2fsprogs busybox-static kmod xz-utils

deps-packaging:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(APT_PACKAGES) $(PACKAGING_PACKAGES)"
deps-boot:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(APT_PACKAGES) $(PACKAGING_PACKAGES) $(BOOT_PACKAGES)"

PREFIX         ?= /usr
DESTDIR        ?=
SYSCONFDIR     ?= /etc
BINDIR         ?= $(PREFIX)/bin
SBINDIR        ?= $(PREFIX)/sbin
LIBEXECDIR     ?= $(PREFIX)/libexec
DATADIR        ?= $(PREFIX)/share
UNITDIR        ?= $(PREFIX)/lib/systemd/system
UDEVRULESDIR   ?= $(PREFIX)/lib/udev/rules.d
SYSUSERSDIR    ?= $(PREFIX)/lib/sysusers.d
MODULESLOADDIR ?= $(PREFIX)/lib/modules-load.d
DBUSDIR        ?= $(DATADIR)/dbus-1
POLKITDIR      ?= $(DATADIR)/polkit-1/actions
MANDIR         ?= $(DATADIR)/man
LOCALEDIR      ?= $(DATADIR)/locale

# Release binaries with the Swift runtime and Foundation linked in, and GCC's C++ runtime too
# (libstdc++, libgcc: STATIC_CXX below), so the installed binaries need only libc, libm,
# libsystemd, libcrypt and libevdev; no $ORIGIN rpath (nothing is loaded from next to them);
# full RELRO and immediate binding.
# STATIC_CXX_DIR: where the link finds libstdc++ (static-cxx, below); the arm64 build has its own.
STATIC_CXX_DIR ?= $(CURDIR)/.build/static-cxx
RELEASE_FLAGS := -c release --static-swift-stdlib --disable-local-rpath -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now \
  -Xlinker -L$(STATIC_CXX_DIR) -Xswiftc -Xclang-linker -Xswiftc -static-libgcc \
  -Xswiftc -use-ld=bfd -Xlinker -z -Xlinker pack-relative-relocs -Xlinker -T -Xlinker $(CURDIR)/packaging/ld/swift-relro.ld \
  -Xlinker --no-export-dynamic -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections -Xcxx -ffunction-sections \
  -Xlinker -T -Xlinker $(CURDIR)/packaging/ld/kioskd-text-order.ld
RELEASE_BIN    = $(shell $(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)

# libstdc++ linked in (the Swift runtime's C++ and TOMLKit's toml++ use it): a mapped libstdc++.so
# costs kioskd ~1.4 MiB of RSS at READY (its relocations, symbol tables and the pages its loader and
# constructors touch), the few objects it really uses, linked in, ~0.1 MiB (docs/benchmarks.md § Footprint).
# -static-libstdc++ cannot do it: SwiftPM (for toml++) and the Swift runtime's static-stdlib-args.lnk
# pass a plain -lstdc++, ahead of any -Xlinker flag. So the link searches .build/static-cxx first,
# where libstdc++.so is a linker script naming Debian's libstdc++.a (libstdc++-12-dev, which
# build-essential's g++ brings). -static-libgcc: libgcc_eh.a, not libgcc_s.so, for the unwinder.
# libcrypt.a and libevdev.a were tried too and gained nothing measurable; they stay shared.
# GNU ld (bfd, binutils 2.40) with -z pack-relative-relocs (DT_RELR, glibc 2.36): the binary's
# 43,700 relative relocations take 9 KiB instead of 1.1 MiB of .rela.dyn, all of which the loader
# read at start, so ~0.5 MiB less RSS (docs/benchmarks.md § Footprint). gold, the default, cannot.
# packaging/ld/swift-relro.ld: the Swift compiler's writable `.rodata` input sections go into the
# RELRO region, so that `.rodata` stays read-only and the binary keeps PT_GNU_RELRO (without it,
# ld made one writable data segment of .rodata through .bss, and no RELRO at all).
# --no-export-dynamic undoes the `-export-dynamic` of the Swift runtime's static-stdlib-args.lnk:
# nothing looks kioskd's own symbols up at run time, and 7,700 exported ones cost the loader's
# lookups ~0.5 MiB of RSS. Crash reports still name kioskd's functions: the package gives each
# stripped binary a compressed symbol table that is never loaded (packaging/scripts/mini-debuginfo,
# run by debian/rules), and `make install` installs them unstripped.
# -function-sections (Swift, C, C++) gives each function its own section, so that --gc-sections
# drops the dead ones and packaging/ld/kioskd-text-order.ld (`make text-order`, scripts/text-order)
# lays out together the functions kioskd runs: the kernel maps a file's page with up to 64 KiB
# around it, so scattered code cost ~3 MiB of RSS (docs/benchmarks.md § Footprint).
SWIFT_CLANG  ?= $(dir $(realpath $(shell command -v $(SWIFT))))clang
STATIC_CXX   := .build/static-cxx/libstdc++.so
# What a release link reads besides the objects: libstdc++ (static-cxx) and the linker scripts.
# SwiftPM relinks when an object changes, not when a linker script does, so a release binary
# older than one of packaging/ld/*.ld is removed here and linked again by the build that follows.
LD_SCRIPTS := $(wildcard packaging/ld/*.ld)
link-inputs: static-cxx
	@for binary in .build/release/*; do \
	  [ -f "$$binary" ] && [ -x "$$binary" ] || continue; \
	  for script in $(LD_SCRIPTS); do if [ "$$script" -nt "$$binary" ]; then rm -f "$$binary"; break; fi; done; \
	done

print-release-flags:
	@echo '$(RELEASE_FLAGS)'

# Regenerates packaging/ld/kioskd-text-order.ld in the VM (minutes); commit the result.
text-order:
	scripts/text-order

static-cxx:
	@archive=$$($(SWIFT_CLANG) -print-file-name=libstdc++.a); \
	case $$archive in /*) ;; *) echo "static-cxx: no libstdc++.a (install g++ / libstdc++-12-dev)" >&2; exit 1;; esac; \
	mkdir -p $(dir $(STATIC_CXX)); \
	echo "/* libstdc++ linked in, not shared: Makefile, static-cxx */ INPUT($$archive)" >$(STATIC_CXX).new; \
	if cmp -s $(STATIC_CXX).new $(STATIC_CXX); then rm $(STATIC_CXX).new; else mv $(STATIC_CXX).new $(STATIC_CXX); fi

# The packaged files name /usr and /etc paths; other prefixes are substituted at install.
INSTALL_SUBST := -e 's|/usr/sbin/kioskd|$(SBINDIR)/kioskd|g' \
                 -e 's|/usr/libexec/kioskd/|$(LIBEXECDIR)/kioskd/|g' \
                 -e 's|/etc/kioskd/|$(SYSCONFDIR)/kioskd/|g' \
                 -e 's|/usr/bin/kioskd-prompt|$(BINDIR)/kioskd-prompt|g' \
                 -e 's|/usr/bin/kioskd-bridge|$(BINDIR)/kioskd-bridge|g' \
                 -e 's|/usr/share/kioskd/|$(DATADIR)/kioskd/|g'

# kioskd and kioskctl ship as one multi-call binary (kioskd-multicall, installed as kioskd, with
# kioskctl a link to it): each static binary would carry its own ~14 MB of Swift runtime and
# FoundationEssentials. kioskctl-replay (Yams, Foundation and ICU) and kioskctl-profile-png (cairo)
# are the kioskd-tools package's.
release-build: link-inputs
	$(SWIFT) build $(RELEASE_FLAGS) --product kioskd-multicall $(SWIFTFLAGS)
	$(SWIFT) build $(RELEASE_FLAGS) --product kioskctl-replay $(SWIFTFLAGS)
	$(SWIFT) build $(RELEASE_FLAGS) --product kioskctl-profile-png $(SWIFTFLAGS)
	$(MAKE) --no-print-directory prompt-pkgconfig
	PKG_CONFIG_PATH=$(PROMPT_PC_DIR) $(SWIFT) build $(RELEASE_FLAGS) --product kioskd-prompt $(SWIFTFLAGS)
	$(SWIFT) build $(RELEASE_FLAGS) --product kioskd-bridge $(SWIFTFLAGS)

# kioskd-prompt's GTK 4 for the release link: gtk4.pc's include paths, flattened, with only the
# libraries it calls (PROMPT_LIBS). The system's gtk4.pc links all eleven of GTK's, and the
# package would then depend on six it never uses (dpkg-shlibdeps: "could avoid a useless
# dependency"); ld's --as-needed cannot help, as SwiftPM puts the linker flags after the
# libraries. A library left out that it does call fails the link, so the list cannot rot
# silently. A plain `swift build` uses the system's gtk4.pc.
PROMPT_PC_DIR := $(CURDIR)/.build/prompt-pkgconfig
PROMPT_LIBS   := -lgtk-4 -lcairo -lgio-2.0 -lgobject-2.0 -lglib-2.0
prompt-pkgconfig:
	mkdir -p $(PROMPT_PC_DIR)
	printf 'Name: gtk4\nDescription: GTK 4, the libraries kioskd-prompt calls\nVersion: %s\nCflags: %s\nLibs: %s %s\n' \
	  "$$(pkg-config --modversion gtk4)" "$$(pkg-config --cflags gtk4)" "$$(pkg-config --libs-only-L gtk4)" \
	  "$(PROMPT_LIBS)" >$(PROMPT_PC_DIR)/gtk4.pc.new && mv $(PROMPT_PC_DIR)/gtk4.pc.new $(PROMPT_PC_DIR)/gtk4.pc

install: deps release-build install-files install-tools install-prompt install-bridge

# Copies what release-build made and packaging/ into $(DESTDIR); builds nothing (debian/rules
# calls it, and install-tools, as dh_auto_install). The interface XML is installed if present (another part of the
# project writes it): the wildcard keeps this rule working before and after it lands.
install-files:
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBEXECDIR)/kioskd \
	  $(DESTDIR)$(UNITDIR) $(DESTDIR)$(UDEVRULESDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(MODULESLOADDIR) \
	  $(DESTDIR)$(DBUSDIR)/system.d $(DESTDIR)$(DBUSDIR)/system-services $(DESTDIR)$(DBUSDIR)/interfaces \
	  $(DESTDIR)$(POLKITDIR) \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8
	# Profiles may hold the passcode's hash: root's alone (kioskd refuses a hash others can read).
	install -d -m 0700 $(DESTDIR)$(SYSCONFDIR)/kioskd/profiles
	install -m 0755 "$(RELEASE_BIN)/kioskd-multicall" $(DESTDIR)$(SBINDIR)/kioskd
	ln -sf "$$(realpath -m --relative-to=$(BINDIR) $(SBINDIR)/kioskd)" $(DESTDIR)$(BINDIR)/kioskctl
	install -m 0644 packaging/man/kioskctl.1 $(DESTDIR)$(MANDIR)/man1/kioskctl.1
	install -m 0644 packaging/man/kioskd.profile.5 $(DESTDIR)$(MANDIR)/man5/kioskd.profile.5
	install -m 0644 packaging/man/kioskd.8 $(DESTDIR)$(MANDIR)/man8/kioskd.8
	for script in kioskd-boot-profile kioskd-clone-calibration kiosk-session; do \
	  sed $(INSTALL_SUBST) packaging/libexec/$$script >$(DESTDIR)$(LIBEXECDIR)/kioskd/$$script && \
	  chmod 0755 $(DESTDIR)$(LIBEXECDIR)/kioskd/$$script || exit 1; \
	done
	for unit in kioskd.service kioskd-boot-profile.service kiosk-session.service kiosk-session-policy.path \
	    kiosk-session-policy.service; do \
	  sed $(INSTALL_SUBST) packaging/systemd/$$unit >$(DESTDIR)$(UNITDIR)/$$unit && \
	  chmod 0644 $(DESTDIR)$(UNITDIR)/$$unit || exit 1; \
	done
	install -m 0644 packaging/dbus/org.kioskd.GuidedAccess1.conf $(DESTDIR)$(DBUSDIR)/system.d/
	install -m 0644 packaging/dbus/org.kioskd.GuidedAccess1.service $(DESTDIR)$(DBUSDIR)/system-services/
	$(if $(wildcard packaging/dbus/*.xml),install -m 0644 $(wildcard packaging/dbus/*.xml) $(DESTDIR)$(DBUSDIR)/interfaces/)
	install -m 0644 packaging/polkit/org.kioskd.GuidedAccess1.policy $(DESTDIR)$(POLKITDIR)/
	install -D -m 0644 packaging/catalog/kioskd.catalog $(DESTDIR)$(PREFIX)/lib/systemd/catalog/kioskd.catalog
	install -m 0644 packaging/udev/70-kioskd.rules packaging/udev/71-kioskd-power-switch.rules $(DESTDIR)$(UDEVRULESDIR)/
	# The calibration rule names its helper in $(LIBEXECDIR).
	sed $(INSTALL_SUBST) packaging/udev/99-zz-kioskd-calibration.rules >$(DESTDIR)$(UDEVRULESDIR)/99-zz-kioskd-calibration.rules
	chmod 0644 $(DESTDIR)$(UDEVRULESDIR)/99-zz-kioskd-calibration.rules
	install -m 0644 packaging/sysusers/kiosk-session.conf $(DESTDIR)$(SYSUSERSDIR)/
	install -m 0644 packaging/modules-load/kioskd.conf $(DESTDIR)$(MODULESLOADDIR)/
	install -m 0644 packaging/config/kioskd.conf packaging/config/kiosk-session.conf $(DESTDIR)$(SYSCONFDIR)/kioskd/
	# The web apps' manifests (docs/browsers.md): root's, readable by the bridge's user.
	install -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/kioskd/apps
	# Chromium's managed policy directory, which chromium does not make: kioskd writes its own
	# kioskd.json there (docs/browsers.md), and its sandbox's ReadWritePaths= needs it to exist.
	install -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/chromium/policies/managed
	# Firefox's system-wide policy directory, which firefox-esr does not make: kioskd merges its
	# keys into the policies.json there, and its sandbox's ReadWritePaths= needs it to exist.
	install -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/firefox/policies
	# labwc's configuration for the kiosk session (kiosk-session runs labwc -C with it).
	install -d $(DESTDIR)$(DATADIR)/kioskd/labwc
	install -m 0644 packaging/labwc/rc.xml packaging/labwc/menu.xml $(DESTDIR)$(DATADIR)/kioskd/labwc/
	for profile in policies/*.toml; do \
	  awk -f packaging/scripts/strip-demo-passcode.awk $$profile >$(DESTDIR)$(SYSCONFDIR)/kioskd/profiles/$${profile##*/} && \
	  chmod 0600 $(DESTDIR)$(SYSCONFDIR)/kioskd/profiles/$${profile##*/} || exit 1; \
	done

# What an admin's workstation needs and a kiosk does not (the kioskd-tools package):
# kioskctl-replay, which `kioskctl replay` runs, and kioskctl-profile-png, which `kioskctl profile
# show --png` runs; both run alone without kioskd.
install-tools:
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 0755 "$(RELEASE_BIN)/kioskctl-replay" $(DESTDIR)$(BINDIR)/kioskctl-replay
	install -m 0644 packaging/man/kioskctl-replay.1 $(DESTDIR)$(MANDIR)/man1/kioskctl-replay.1
	install -m 0755 "$(RELEASE_BIN)/kioskctl-profile-png" $(DESTDIR)$(BINDIR)/kioskctl-profile-png
	install -m 0644 packaging/man/kioskctl-profile-png.1 $(DESTDIR)$(MANDIR)/man1/kioskctl-profile-png.1

# The display of kioskd's passcode prompt (the kioskd-prompt package): GTK 4, which a kiosk
# without a display never needs, so it is a package of its own; kiosk-session starts it.
install-prompt:
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 0755 "$(RELEASE_BIN)/kioskd-prompt" $(DESTDIR)$(BINDIR)/kioskd-prompt
	install -m 0644 packaging/man/kioskd-prompt.1 $(DESTDIR)$(MANDIR)/man1/kioskd-prompt.1
	# Its translations, compiled (and checked: a translation that drops a %s fails here).
	for po in po/*.po; do \
	  lang=$${po##*/}; lang=$${lang%.po}; \
	  install -d $(DESTDIR)$(LOCALEDIR)/$$lang/LC_MESSAGES && \
	  msgfmt --check -o $(DESTDIR)$(LOCALEDIR)/$$lang/LC_MESSAGES/kioskd-prompt.mo $$po || exit 1; \
	done

# The web pages' read-only bridge (the kioskd-bridge package, docs/browsers.md § The bridge): the
# binary, kioskd.js and the socket-activated units; a kiosk without web apps does without it.
install-bridge:
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(DATADIR)/kioskd $(DESTDIR)$(MANDIR)/man8 \
	  $(DESTDIR)$(SYSUSERSDIR)
	install -m 0755 "$(RELEASE_BIN)/kioskd-bridge" $(DESTDIR)$(BINDIR)/kioskd-bridge
	install -m 0644 packaging/sysusers/kioskd-bridge.conf $(DESTDIR)$(SYSUSERSDIR)/
	install -m 0644 packaging/man/kioskd-bridge.8 $(DESTDIR)$(MANDIR)/man8/kioskd-bridge.8
	install -m 0644 packaging/web/kioskd.js $(DESTDIR)$(DATADIR)/kioskd/kioskd.js
	for unit in kioskd-bridge.socket kioskd-bridge.service; do \
	  sed $(INSTALL_SUBST) packaging/systemd/$$unit >$(DESTDIR)$(UNITDIR)/$$unit && \
	  chmod 0644 $(DESTDIR)$(UNITDIR)/$$unit || exit 1; \
	done

# The texts kioskd-prompt shows and speaks, extracted into po/kioskd-prompt.pot for translators
# (gettext's C parser reads the Swift: `tr("…")` and `tr.plural("…", "…", n)`), without the date
# it was made, so that unchanged texts leave the file unchanged; `make pot` then brings each
# po/LANG.po up to date with msgmerge. `check-po` (part of `make test`) fails when the template
# is out of date, or a catalogue lacks a text, has one fuzzy or untranslated, or breaks a %s.
POT_SOURCES := Sources/PromptScreen/PromptScreen.swift Sources/PromptScreen/DrawingScreen.swift
extract-pot = xgettext --language=C --from-code=UTF-8 --keyword=tr --keyword=plural:1,2 \
  --add-comments=TRANSLATORS: --package-name=kioskd-prompt --msgid-bugs-address=kioskd@example.org \
  --copyright-holder="The kioskd authors" --no-location -o $(1).new $(POT_SOURCES) && \
  grep -v '^"POT-Creation-Date: ' $(1).new >$(1) && rm $(1).new
.PHONY: pot check-po
pot:
	$(call extract-pot,po/kioskd-prompt.pot)
	for po in $(wildcard po/*.po); do msgmerge --quiet --update --backup=none --no-location $$po po/kioskd-prompt.pot || exit 1; done
check-po:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(call extract-pot,$$tmp/kioskd-prompt.pot) && \
	{ cmp -s $$tmp/kioskd-prompt.pot po/kioskd-prompt.pot || { echo "check-po: po/kioskd-prompt.pot is out of date: run make pot" >&2; exit 1; }; } && \
	for po in po/*.po; do \
	  msgcmp $$po po/kioskd-prompt.pot || exit 1; \
	  stats=$$(LC_ALL=C msgfmt --check --statistics -o /dev/null $$po 2>&1) || { echo "$$stats" >&2; exit 1; }; \
	  case $$stats in *fuzzy*|*untranslated*) echo "check-po: $$po: $$stats" >&2; exit 1;; esac; \
	  echo "check-po: $$po: $$stats"; \
	done

# The .deb, built by dpkg-buildpackage from debian/ (its rules call release-build and
# install-files), lands in build/deb/ with its .buildinfo and .changes; lintian checks it.
# DEB_BUILD_OPTIONS defaults to noautodbgsym: the -dbgsym package would be ~150 MB of DWARF
# that nothing here collects; set DEB_BUILD_OPTIONS= to get it.
DEB_DIR            := build/deb
DEB_BUILD_OPTIONS  ?= noautodbgsym
deb: deps-packaging
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)
	DEB_BUILD_OPTIONS="$(DEB_BUILD_OPTIONS)" dpkg-buildpackage -b -us -uc \
	  --buildinfo-file=$(DEB_DIR)/kioskd.buildinfo --buildinfo-option=-u$(DEB_DIR) \
	  --changes-file=$(DEB_DIR)/kioskd.changes --changes-option=-u$(DEB_DIR)
	lintian --fail-on error $(DEB_DIR)/*.deb
	@ls -l $(DEB_DIR)/*.deb

# What a brand-new machine sees (Tests/Fresh/run): every step that fetches from Debian's archive
# (the test sshd, the VM's kernel, the boot test's root) with empty caches, missing or stale apt
# lists, and an installed openssh-client older than the archive's. The first step of .ci/run.
test-fresh: deps-boot
	Tests/Fresh/run

# systemd-analyze verify + security, the D-Bus policy on a private system bus, make install
# into a DESTDIR and ldd on what it installed (Tests/Packaging/run).
test-packaging: deps-packaging release-build
	Tests/Packaging/run

# A Debian 12 root with systemd as PID 1 boots under QEMU with the kioskd, kioskd-prompt and
# kioskd-bridge .debs installed (Tests/Boot/run; the root is built once into ~/.cache/kioskd-boot).
test-boot: deps-boot deb
	Tests/Boot/run $(DEB_DIR)/kioskd_*.deb $(DEB_DIR)/kioskd-prompt_*.deb $(DEB_DIR)/kioskd-bridge_*.deb

# The same on Debian 13 with the kiosk session under labwc (BOOT_COMPOSITOR=cage for cage there),
# the root cached in ~/.cache/kioskd-boot-trixie, the artefacts in build/boot-test-trixie-labwc.
BOOT_COMPOSITOR ?= labwc
test-boot-trixie: deps-boot deb
	KIOSKD_BOOT_RELEASE=trixie KIOSKD_BOOT_COMPOSITOR=$(BOOT_COMPOSITOR) \
	  KIOSKD_BOOT_ARTIFACTS=build/boot-test-trixie-$(BOOT_COMPOSITOR) \
	  Tests/Boot/run $(DEB_DIR)/kioskd_*.deb $(DEB_DIR)/kioskd-prompt_*.deb $(DEB_DIR)/kioskd-bridge_*.deb

# The same on Debian 13 for arm64 (the third row: Debian 13 arm64, labwc), booted by
# qemu-system-aarch64 (TCG; the `virt` machine, virtio-gpu, Debian 13's arm64 kernel), with the
# arm64 .debs of make deb-arm64, which it does not rebuild (~10 min): run that first. The root is
# cached in ~/.cache/kioskd-boot-trixie-arm64, the artefacts in build/boot-test-trixie-arm64-labwc.
test-boot-arm64:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(APT_PACKAGES) $(PACKAGING_PACKAGES) $(BOOT_PACKAGES) $(ARM64_PACKAGES) qemu-system-arm"
	KIOSKD_BOOT_ARCH=arm64 KIOSKD_BOOT_RELEASE=trixie KIOSKD_BOOT_COMPOSITOR=$(BOOT_COMPOSITOR) \
	  KIOSKD_BOOT_ARTIFACTS=build/boot-test-trixie-arm64-$(BOOT_COMPOSITOR) \
	  Tests/Boot/run $(ARM64_DEB_DIR)/kioskd_*_arm64.deb $(ARM64_DEB_DIR)/kioskd-prompt_*_arm64.deb \
	  $(ARM64_DEB_DIR)/kioskd-bridge_*_arm64.deb

# The .debs built here install on fresh Debian 12 and 13 roots with dpkg -i + apt-get -f install
# (Tests/Boot/install-debs; the roots are debootstrap's minbase, cached beside the boot roots).
test-install: deps-boot deb
	Tests/Boot/install-debs bookworm $(DEB_DIR)/*.deb
	Tests/Boot/install-debs trixie $(DEB_DIR)/*.deb

clean:
	rm -rf .build .build-fuzz .build-asan .build-tsan

# -------------------------------------------------------------------------- arm64 ----
# kioskd, kioskd-prompt and kioskd-tools for arm64 (Debian 13 / Raspberry Pi OS 13), cross-built on
# this amd64 machine with Debian's own Swift (docs/packaging.md § arm64). scripts/arm64-sdk keeps
# the toolchain (sid's swiftlang in a chroot), a Debian 13 arm64 sysroot and the Swift SDK bundle in
# ~/.cache/kioskd-arm64, built from Debian's archive on first use. As root.
.PHONY: deps-arm64 deb-arm64 test-arm64 test-vm-arm64 bench-footprint-arm64
ARM64_PACKAGES := debootstrap binutils file
ARM64_DEB_DIR  := build/deb-arm64
deps-arm64:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(ARM64_PACKAGES)"

# The release binaries (RELEASE_FLAGS, linked by GNU ld for AArch64), then dpkg-buildpackage -a arm64
# in the Debian 13 root, lintian, and Tests/Arm64/check-debs on what it made (AArch64 ELF, the
# libraries and glibc versions they need, page alignment, each executable starts under qemu).
deb-arm64: deps-arm64
	scripts/arm64-sdk deb $(ARM64_DEB_DIR)

# Tests/Arm64/failure-modes (the build's clear stops, seconds), then the host suite's pure modules,
# KioskStoreTests and the in-process daemon tests, built for arm64 and run under qemu-aarch64
# (binfmt_misc), on Debian 13's arm64 libraries.
ARM64_TEST_FILTER ?= KioskAPITests|KioskInputTests|KioskCoreTests|KioskTracesTests|BridgeCoreTests|KioskFilesTests|KioskStoreTests|KioskDaemonTests.(AppOwnerTests|AuditClockTests|FailedReloadTests|KioskSequenceTests|LiveSessionTests|ManagerStepsTests|PasscodeCryptFailureTests|PasscodeLimitTests|PromptTests|RequestedSessionTests|StaffLockoutTests|StateWriterTests)|KioskClientTests.GuidedAccessClientTests
test-arm64: deps-arm64
	Tests/Arm64/failure-modes
	scripts/arm64-sdk test --filter '$(ARM64_TEST_FILTER)'

# The VM suites of test-vm (VM_TEST_FILTER) on arm64: the arm64 test bundle (test-arm64's build) run
# by Tests/VM/run-in-vm in Debian 13's arm64 kernel under qemu-system-aarch64 (TCG), on a Debian 13
# arm64 root kept in ~/.cache/kioskd-arm64/vm-root (scripts/arm64-sdk vm; docs/testing.md).
ARM64_VM_PACKAGES := $(ARM64_PACKAGES) qemu-system-arm busybox-static kmod xz-utils
ARM64_TEST_BIN    := $(CURDIR)/.build/arm64/aarch64-unknown-linux-gnu/debug
test-vm-arm64:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(ARM64_VM_PACKAGES)"
	scripts/arm64-sdk test-build
	VM_UDEV=1 scripts/arm64-sdk vm env KIOSKD_VM_TESTS=1 "$(ARM64_TEST_BIN)/kioskdPackageTests.xctest" \
	  --testing-library swift-testing --no-parallel --filter '$(VM_TEST_FILTER)'

# The arm64 kioskd's idle VmRSS in an arm64 guest kernel (qemu-system-aarch64, TCG), then with
# 1,000 × 50 (BusBench --startup-only, built for arm64, in test-vm-arm64's guest), after
# make deb-arm64: scripts/arm64-footprint, docs/benchmarks.md § Footprint.
bench-footprint-arm64:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(ARM64_VM_PACKAGES) cpio"
	scripts/arm64-footprint
