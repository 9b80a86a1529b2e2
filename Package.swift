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
    ],
    dependencies: [
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        .package(url: "https://github.com/ordo-one/malloc-interposer.git", from: "1.6.0"),
    ],
    targets: [
        // MARK: KioskInput — pure input model and filter (no fds, no clock, no logging)
        .target(
            name: "KioskInput",
            dependencies: [.product(name: "Yams", package: "Yams")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KioskInputTests",
            dependencies: ["KioskInput"],
            resources: [.copy("Fixtures"), .copy("Scenarios")],
            swiftSettings: swiftSettings
        ),

        // MARK: InputFilterBench — release-mode throughput and allocation figures (`make bench-input`)
        .executableTarget(
            name: "InputFilterBench",
            dependencies: ["KioskInput", .product(name: "MallocInterposerSwift", package: "malloc-interposer")],
            path: "Benchmarks/InputFilterBench",
            swiftSettings: swiftSettings
        ),

        // MARK: KioskCore — pure model (ids, registry, profiles, session, throttle)
        .target(
            name: "KioskCore",
            dependencies: ["KioskInput", .product(name: "TOMLKit", package: "TOMLKit")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KioskCoreTests",
            dependencies: ["KioskCore", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: swiftSettings
        ),

        // MARK: kioskctl — the admin CLI
        .executableTarget(
            name: "kioskctl",
            dependencies: ["KioskCore", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
