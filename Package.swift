// swift-tools-version: 6.1
// kioskd: guided access for Linux kiosks. Layout and contract: README.md § Architecture.

import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "kioskd",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "kioskctl", targets: ["kioskctl"]),
        .executable(name: "kioskd", targets: ["kioskd"]),
        .executable(name: "kioskctl-replay", targets: ["kioskctl-replay"]),
        .executable(name: "kioskctl-profile-png", targets: ["kioskctl-profile-png"]),
        .executable(name: "kioskd-multicall", targets: ["kioskd-multicall"]),
        .library(name: "KioskClient", targets: ["KioskClient"]),
        .executable(name: "kioskd-prompt", targets: ["kioskd-prompt"]),
        .executable(name: "kioskd-bridge", targets: ["kioskd-bridge"]),
    ],
    dependencies: [
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.11.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        .package(url: "https://github.com/ordo-one/malloc-interposer.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.4.0"),
    ],
    targets: [
        // MARK: KioskAPI — what apps and the daemon agree on: wire names, ids and their rules, states, errors, limits, time (no dependencies)
        .target(
            name: "KioskAPI",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KioskAPITests",
            dependencies: ["KioskAPI"],
            swiftSettings: swiftSettings
        ),

        // MARK: KioskInput — pure input model and filter (no fds, no clock, no logging)
        .target(
            name: "KioskInput",
            dependencies: ["KioskAPI"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KioskInputTests",
            dependencies: ["KioskInput"],
            resources: [.copy("Scenarios")],
            swiftSettings: swiftSettings
        ),

        // MARK: KioskTraces — recordings: evemu and `libinput record` parsers, the offline Replay (the only module with Yams; never in kioskd)
        .target(
            name: "KioskTraces",
            dependencies: ["KioskInput", "KioskCore", .product(name: "Yams", package: "Yams")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KioskTracesTests",
            dependencies: ["KioskTraces", "KioskInput", "KioskCore"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),

        // MARK: Fuzz — libFuzzer harnesses, one per parser and for the filter's raw input (`make fuzz`, docs/testing.md § Fuzzing); a plain build replays the files it is given
        .target(
            name: "FuzzSupport",
            path: "Fuzz/FuzzSupport",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "FilterFuzz",
            dependencies: ["FuzzSupport", "KioskInput"],
            path: "Fuzz/FilterFuzz",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "ProfileFuzz",
            dependencies: ["FuzzSupport", "KioskCore"],
            path: "Fuzz/ProfileFuzz",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "StateFuzz",
            dependencies: ["FuzzSupport", "KioskCore", "KioskStore"],
            path: "Fuzz/StateFuzz",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "TraceFuzz",
            dependencies: ["FuzzSupport", "KioskInput", "KioskTraces"],
            path: "Fuzz/TraceFuzz",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "BusFuzz",
            dependencies: [
                "FuzzSupport", "KioskAPI", "KioskDaemon", "SystemdKit", "CSystemd",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Fuzz/BusFuzz",
            swiftSettings: swiftSettings
        ),

        // MARK: InputFilterBench — release-mode throughput and allocation figures (`make bench-input`)
        .executableTarget(
            name: "InputFilterBench",
            dependencies: [
                "KioskInput", "KioskTraces", .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ],
            path: "Benchmarks/InputFilterBench",
            swiftSettings: swiftSettings
        ),

        // MARK: KioskCore — pure model (registry, profiles, session, throttle) on KioskAPI's types
        .target(
            name: "KioskCore",
            dependencies: ["KioskAPI", "KioskInput", .product(name: "TOMLKit", package: "TOMLKit")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KioskCoreTests",
            dependencies: [
                "KioskCore", "KioskTestSupport", .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: KioskFiles — the one file layer: regular files read with their stat, atomic replace, private directories
        .target(
            name: "KioskFiles",
            dependencies: [.product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: swiftSettings
        ),

        .testTarget(
            name: "KioskFilesTests",
            dependencies: ["KioskFiles", .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: swiftSettings
        ),

        // MARK: KioskStore — the crash-safe state file (atomic writes, fsync)
        .target(
            name: "KioskStore",
            dependencies: ["KioskCore", "KioskFiles", .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KioskStoreTests",
            dependencies: [
                "KioskStore", "KioskCore", "KioskTestSupport", "kiosk-store-writer",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: swiftSettings
        ),
        // A child process for the crash test: writes states in a loop until killed.
        .executableTarget(
            name: "kiosk-store-writer",
            dependencies: ["KioskStore", "KioskTestSupport"],
            path: "Tests/Support/kiosk-store-writer",
            swiftSettings: swiftSettings
        ),

        // MARK: KioskTestSupport — fakes and fixtures for tests and benchmarks (a manual clock, sample states)
        .target(
            name: "KioskTestSupport",
            dependencies: ["KioskCore"],
            path: "Tests/Support/KioskTestSupport",
            swiftSettings: swiftSettings
        ),

        // MARK: Benchmarks — release-mode executables printing the figures the issues ask for
        .executableTarget(
            name: "StoreBench",
            dependencies: ["KioskStore", "KioskCore", "KioskTestSupport"],
            path: "Benchmarks/StoreBench",
            swiftSettings: swiftSettings
        ),

        // MARK: CEvdev — system library: libevdev and libevdev-uinput, plus ioctl shims
        .systemLibrary(
            name: "CEvdev",
            pkgConfig: "libevdev",
            providers: [.apt(["libevdev-dev"])]
        ),

        // MARK: LinuxInput — evdev devices, their uinput clones and the broker on the sd_event loop (fds, no decisions)
        .target(
            name: "LinuxInput",
            dependencies: [
                "CEvdev", "KioskInput", "KioskFiles", "SystemdKit", .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LinuxInputTests",
            dependencies: [
                "LinuxInput", "KioskInput", "InputTestSupport", "KioskTestSupport", "SystemdKit",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: InputTestSupport — fake input devices and python-evdev probes for the VM tests
        .target(
            name: "InputTestSupport",
            dependencies: ["LinuxInput", "KioskInput", "KioskTestSupport"],
            path: "Tests/Support/InputTestSupport",
            swiftSettings: swiftSettings
        ),

        // MARK: KioskctlCommands — the admin CLI's verbs (the kioskctl executable and the multi-call binary run them)
        .target(
            name: "KioskctlCommands",
            dependencies: [
                "KioskCore", "KioskInput", "KioskClient", "KioskFiles", "CTerminal",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: kioskctl — the admin CLI (arguments only; the work is in KioskctlCommands)
        .executableTarget(
            name: "kioskctl",
            dependencies: ["KioskctlCommands"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KioskctlTests",
            dependencies: [
                "kioskctl", "KioskctlCommands", "kioskctl-replay", "kioskctl-profile-png", "KioskTestSupport",
                "KioskdProcessTestSupport", "BusTestSupport", "KioskClient", "KioskCore", "kioskd", "KioskDaemonTestSupport",
                "KioskInput",
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: kioskctl-replay — what `kioskctl replay` execs (kioskd-tools): the trace parsers need Yams, and Yams all of Foundation
        .executableTarget(
            name: "kioskctl-replay",
            dependencies: [
                "KioskCore", "KioskInput", "KioskTraces", "KioskCrypt", "KioskFiles",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: CCairo — system library: cairo through pkg-config (libcairo2-dev), for kioskctl-profile-png alone
        .systemLibrary(
            name: "CCairo",
            pkgConfig: "cairo",
            providers: [.apt(["libcairo2-dev"])]
        ),

        // MARK: kioskctl-profile-png — what `kioskctl profile show --png` execs (kioskd-tools): cairo draws ProfilePicture's shapes
        .executableTarget(
            name: "kioskctl-profile-png",
            dependencies: [
                "KioskCore", "KioskFiles", "CCairo", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: CTerminal — system library: glibc's wcwidth(3), which Swift's Glibc module leaves out (kioskctl's column widths)
        .systemLibrary(name: "CTerminal"),

        // MARK: CSystemd — libsystemd through pkg-config (sd-bus, sd-event, sd-daemon, sd-journal)
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),

        // MARK: SystemdKit — thin typed Swift over libsystemd; the only module that calls CSystemd
        .target(
            name: "SystemdKit",
            dependencies: [
                "CSystemd", .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: BusTestSupport — private dbus-daemon (and polkitd) harness for bus tests
        .target(
            name: "BusTestSupport",
            dependencies: [
                "SystemdKit", "KioskTestSupport", .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Tests/Support/BusTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SystemdKitTests",
            dependencies: [
                "SystemdKit", "BusTestSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: CCrypt — libcrypt (libxcrypt) through pkg-config: crypt_r, crypt_gensalt_rn (yescrypt)
        .systemLibrary(
            name: "CCrypt",
            pkgConfig: "libxcrypt",
            providers: [.apt(["libcrypt-dev"])]
        ),

        // MARK: KioskCrypt — passcode hashing and checking with libcrypt (kioskd, kioskctl-replay)
        .target(name: "KioskCrypt", dependencies: ["KioskCore", "CCrypt"], swiftSettings: swiftSettings),

        // MARK: CMalloc — system library: glibc's malloc.h (malloc_trim), which Swift's Glibc module leaves out
        .systemLibrary(name: "CMalloc"),

        // MARK: KioskDaemon — the Manager bus object and the service wiring (loop, store, bus, notify)
        .target(
            name: "KioskDaemon",
            dependencies: [
                "KioskCore", "KioskInput", "KioskStore", "KioskFiles", "SystemdKit", "LinuxInput", "KioskCrypt", "CMalloc",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: KioskDaemonTestSupport — fakes for ManagerObject's seams (an in-memory store with a gate, an authorizer that answers what the test says, a fixed caller uid) and ManagerObject in process on a private bus
        .target(
            name: "KioskDaemonTestSupport",
            dependencies: [
                "KioskDaemon", "KioskCore", "KioskInput", "KioskTestSupport", "BusTestSupport", "SystemdKit",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Support/KioskDaemonTestSupport",
            swiftSettings: swiftSettings
        ),

        // MARK: BusBench — kioskd on a private bus: round trips, signal latency, fan-out, READY and RSS (`make bench-bus`)
        .executableTarget(
            name: "BusBench",
            dependencies: ["SystemdKit", "BusTestSupport", "KioskCore", "KioskStore", "KioskTestSupport"],
            path: "Benchmarks/BusBench",
            swiftSettings: swiftSettings
        ),

        // MARK: LatencyBench — physical event → clone through kioskd next to a plain read→write loop, in the VM (`make bench-latency`)
        .executableTarget(
            name: "LatencyBench",
            dependencies: ["BusTestSupport", "KioskCore", "KioskInput", "LinuxInput", "SystemdKit"],
            path: "Benchmarks/LatencyBench",
            swiftSettings: swiftSettings
        ),

        // MARK: HotplugBench — a new input node: created → grabbed by the broker, release build, in the VM (`make bench-hotplug`)
        .executableTarget(
            name: "HotplugBench",
            dependencies: ["KioskInput", "LinuxInput", "SystemdKit", .product(name: "Logging", package: "swift-log")],
            path: "Benchmarks/HotplugBench",
            swiftSettings: swiftSettings
        ),

        // MARK: KioskdCommand — kioskd's flags, handed to KioskService (the kioskd executable and the multi-call binary run it)
        .target(
            name: "KioskdCommand",
            dependencies: [
                "KioskDaemon", "SystemdKit", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: kioskd — the daemon executable (arguments only; the work is in KioskDaemon)
        .executableTarget(
            name: "kioskd",
            dependencies: ["KioskdCommand"],
            swiftSettings: swiftSettings
        ),

        // MARK: kioskd-multicall — kioskd and kioskctl as one binary, by the name it is run as (what `make install` ships)
        .executableTarget(
            name: "kioskd-multicall",
            dependencies: ["KioskdCommand", "KioskctlCommands"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KioskDaemonTests",
            dependencies: [
                "KioskDaemon", "KioskCore", "KioskCrypt", "KioskInput", "KioskStore", "KioskTraces", "BusTestSupport",
                "KioskTestSupport", "KioskdProcessTestSupport", "KioskDaemonTestSupport", "BrowserTestSupport", "kioskd",
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: KioskdEnforcementTests — kioskd enforcing sessions: input in the VM, logind's inhibitor on a private bus
        .testTarget(
            name: "KioskdEnforcementTests",
            dependencies: [
                "KioskDaemon", "KioskCore", "KioskInput", "LinuxInput", "SystemdKit", "BusTestSupport",
                "KioskTestSupport", "KioskdProcessTestSupport", "InputTestSupport", "kioskd", "kioskctl",
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: KioskClient — the library apps and kioskctl use: a typed proxy, the app API, reconnects
        .target(
            name: "KioskClient",
            dependencies: ["KioskAPI", "SystemdKit", .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KioskClientTests",
            dependencies: [
                "KioskClient", "KioskCore", "KioskTestSupport", "KioskdProcessTestSupport", "kioskd", "museum-map-app",
                "exam-app",
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: BrowserTestSupport — Debian's chromium, headless, in namespaces of its own: its managed policy and web the test's, over the DevTools pipe
        .target(
            name: "BrowserTestSupport",
            dependencies: ["BusTestSupport", "KioskTestSupport"],
            path: "Tests/Support/BrowserTestSupport",
            swiftSettings: swiftSettings
        ),

        // MARK: KioskdProcessTestSupport — the built kioskd on a private bus, for every test target that needs one
        .target(
            name: "KioskdProcessTestSupport",
            dependencies: ["BusTestSupport", "KioskCore", "KioskTestSupport", "SystemdKit"],
            path: "Tests/Support/KioskdProcessTestSupport",
            swiftSettings: swiftSettings
        ),

        // MARK: CGtk — system library: GTK 4 through pkg-config (libgtk-4-dev), for kioskd-prompt alone
        // (its own Debian package: GTK never lands on a kiosk without a display)
        .systemLibrary(
            name: "CGtk",
            pkgConfig: "gtk4",
            providers: [.apt(["libgtk-4-dev"])]
        ),

        // MARK: PromptScreen — what kioskd-prompt shows, from KioskClient's status (pure: no GTK, no bus)
        .target(
            name: "PromptScreen",
            dependencies: ["KioskClient"],
            swiftSettings: swiftSettings
        ),

        // MARK: kioskd-prompt — the display of kioskd's passcode prompt at the kiosk (GTK 4; passive: it never sees a key)
        .executableTarget(
            name: "kioskd-prompt",
            dependencies: ["PromptScreen", "KioskClient", "CGtk"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KioskdPromptTests",
            dependencies: ["PromptScreen", "KioskClient", "BusTestSupport", "KioskTestSupport", "kioskd-prompt"],
            swiftSettings: swiftSettings
        ),

        // MARK: CMicroHTTPD — system library: libmicrohttpd through pkg-config (libmicrohttpd-dev), for kioskd-bridge alone
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),

        // MARK: BridgeCore — the web bridge's decisions (pure): origin check, routes, event ids, what a page is sent
        .target(
            name: "BridgeCore",
            dependencies: ["KioskAPI", "KioskCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "BridgeCoreTests",
            dependencies: ["BridgeCore", "KioskAPI", "KioskCore"],
            swiftSettings: swiftSettings
        ),

        // MARK: KioskBridge — the web bridge's edge: libmicrohttpd, the listening sockets, the feed from kioskd (KioskClient)
        .target(
            name: "KioskBridge",
            dependencies: [
                "BridgeCore", "CMicroHTTPD", "KioskClient", "KioskCore", "KioskFiles", "SystemdKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: kioskd-bridge — the web bridge executable (its own package; the work is in KioskBridge)
        .executableTarget(
            name: "kioskd-bridge",
            dependencies: ["KioskBridge"],
            swiftSettings: swiftSettings
        ),

        .testTarget(
            name: "KioskBridgeTests",
            dependencies: [
                "BridgeCore", "KioskTestSupport", "KioskdProcessTestSupport", "BusTestSupport", "BrowserTestSupport",
                "kioskd", "kioskd-bridge", "kioskctl",
            ],
            exclude: ["kioskd-js-client.mjs"],
            swiftSettings: swiftSettings
        ),

        // MARK: Examples — apps that show how to use KioskClient (`make demo` runs museum-map-app)
        .executableTarget(
            name: "exam-app",
            dependencies: ["KioskClient"],
            path: "Examples/exam-app",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "museum-map-app",
            dependencies: ["KioskClient"],
            path: "Examples/museum-map-app",
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
