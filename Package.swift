// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Strata",
    products: [
        .library(name: "Strata", targets: ["Strata"]),
        .library(name: "CCore", targets: ["CCore"]),
        // The command-line tool (`strata info|schema|query|export|import|dump|load|check|...`).
        .executable(name: "strata", targets: ["StrataCLI"]),
    ],
    // Only the `strata` tool uses these: SwiftPM fetches a package's dependencies only for the
    // products in use, so an app that depends on the Strata library never fetches them.
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/vapor/console-kit", from: "4.16.2"),
        .package(url: "https://github.com/ordo-one/TextTable", from: "0.0.2"),
        .package(url: "https://github.com/swiftcsv/SwiftCSV", from: "0.10.0"),
    ],
    targets: [
        // The C core: storage engine and the whole C ABI (CCore/include/strata.h).
        .target(
            name: "CCore",
            path: "CCore",
            exclude: ["examples", "FORMAT.md"],
            sources: ["src"],
            publicHeadersPath: "include",
            cSettings: [
                .define("_GNU_SOURCE"),
                // The layers include each other's doors as "<layer>/<door>.h".
                .headerSearchPath("src"),
                // Internal assertions (ST_ASSERT) in debug builds, as in the Makefile's test builds.
                .define("ST_DEBUG", .when(configuration: .debug)),
            ],
            linkerSettings: [
                .linkedLibrary("xxhash"),
                .linkedLibrary("lz4"),
                .linkedLibrary("utf8proc"),
                .linkedLibrary("pthread"),
            ]
        ),
        // The Swift module.
        .target(name: "Strata", dependencies: ["CCore"], path: "Sources/Strata"),
        // The 张三 example through `import Strata` (`make demo`).
        .executableTarget(name: "StrataDemo", dependencies: ["Strata"], path: "Sources/StrataDemo"),
        // The `strata` tool: any file, any schema, through the C ABI (dynamic access), with the
        // Swift module's value types (Decimal128, ObjectId) for their text forms.
        .executableTarget(
            name: "StrataCLI",
            dependencies: [
                "Strata", "CCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ConsoleKitTerminal", package: "console-kit"),
                .product(name: "TextTable", package: "TextTable"),
                .product(name: "SwiftCSV", package: "SwiftCSV"),
            ],
            path: "Sources/StrataCLI"
        ),
        .testTarget(name: "StrataTests", dependencies: ["Strata", "CCore"], path: "Tests/StrataTests"),
    ],
    // Swift 6: strict concurrency checking, data races are compile errors (module and tests).
    swiftLanguageModes: [.v6],
    cLanguageStandard: .c11
)
