// swift-tools-version:6.0
import PackageDescription

// authload ships with no package dependencies: the toolchain and the OS are all it needs.
// Import direction (docs/architecture.md): Core ← Wire ← Transport/Flows/Staging/Report ← CLI.
// Release builds (benchmarks, real runs, simulations) optimize across the package's modules, so that generic code
// in AuthloadCore is specialized where the flows and services call it, and check exclusivity only statically: the
// dynamic checks stay in debug builds, which `swift test` runs. Together about 10 % of a simulated day's CPU
// (docs/development.md, "Release flags"); `unsafeFlags` only keeps this package from being someone's dependency.
let release: [SwiftSetting] = [
    .unsafeFlags(["-cross-module-optimization", "-enforce-exclusivity=unchecked"], .when(configuration: .release))
]
let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")] + release
// Where users' flows run (the engine, the flows, the services and the simulation): a nonisolated async function runs
// on its caller's executor (SE-0461) rather than hopping to the global one. A simulated user's task then stays isolated
// to the simulation's executor with no task-executor preference, which the runtime would look up under the task's
// status lock at every executor check (docs/development.md, "A simulated user's task prefers no executor").
let inherited: [SwiftSetting] = strict + [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]

let package = Package(
    name: "authload",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "authload", targets: ["authload"])
    ],
    targets: [
        .target(name: "CSystem"),
        // TLS, SHA-1/SHA-256 and random bytes come from the system OpenSSL (Debian/Ubuntu: libssl-dev).
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        .target(name: "AuthloadCore", swiftSettings: inherited),
        .target(name: "AuthloadWire", dependencies: ["AuthloadCore", "COpenSSL"], swiftSettings: inherited),
        .target(name: "AuthloadTransport", dependencies: ["AuthloadCore", "AuthloadWire", "CSystem", "COpenSSL"], swiftSettings: strict),
        .target(name: "AuthloadFlows", dependencies: ["AuthloadCore", "AuthloadWire"], swiftSettings: inherited),
        .target(name: "AuthloadStaging", dependencies: ["AuthloadCore", "AuthloadWire"], swiftSettings: inherited),
        .target(name: "AuthloadReport", dependencies: ["AuthloadCore"], swiftSettings: strict),
        // Virtual-time rehearsals (`run --simulate`): one thread, a clock that jumps, the staging services in process.
        .target(name: "AuthloadSimulation", dependencies: ["AuthloadCore", "AuthloadStaging", "CSystem"], swiftSettings: inherited),
        .target(
            name: "AuthloadCLI",
            dependencies: [
                "AuthloadCore", "AuthloadWire", "AuthloadTransport", "AuthloadFlows", "AuthloadStaging", "AuthloadReport",
                "AuthloadSimulation", "CSystem"
            ],
            swiftSettings: strict
        ),
        .executableTarget(name: "authload", dependencies: ["AuthloadCLI"], swiftSettings: strict),
        .target(name: "AuthloadTesting", dependencies: ["AuthloadCore"], swiftSettings: strict),

        .testTarget(name: "AuthloadCoreTests", dependencies: ["AuthloadCore", "AuthloadTesting"]),
        .testTarget(name: "AuthloadWireTests", dependencies: ["AuthloadWire"]),
        .testTarget(name: "AuthloadReportTests", dependencies: ["AuthloadReport"]),
        .testTarget(name: "AuthloadTransportTests", dependencies: ["AuthloadTransport", "AuthloadWire"]),
        .testTarget(name: "AuthloadFlowsTests", dependencies: ["AuthloadFlows", "AuthloadStaging", "AuthloadTesting", "AuthloadWire"]),
        .testTarget(
            name: "AuthloadEndToEndTests",
            dependencies: [
                "AuthloadCLI", "AuthloadTesting", "AuthloadFlows", "AuthloadStaging", "AuthloadTransport", "AuthloadWire",
                "AuthloadSimulation"
            ],
            // Python scripts for the WebSocket interop tests, found through #filePath.
            exclude: ["Interop"]
        )
    ],
    swiftLanguageModes: [.v6]
)
