// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Strata",
    products: [
        .library(name: "Strata", targets: ["Strata"]),
        .library(name: "CCore", targets: ["CCore"]),
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
                .linkedLibrary("crypto"),
                .linkedLibrary("uring"),
                .linkedLibrary("pthread"),
                .linkedLibrary("m"),
            ]
        ),
        // The Swift module.
        .target(name: "Strata", dependencies: ["CCore"], path: "Sources/Strata"),
        // The 张三 example through `import Strata` (`make demo`).
        .executableTarget(name: "StrataDemo", dependencies: ["Strata"], path: "Sources/StrataDemo"),
        .testTarget(name: "StrataTests", dependencies: ["Strata", "CCore"], path: "Tests/StrataTests"),
    ],
    // Swift 6: strict concurrency checking, data races are compile errors (module and tests).
    swiftLanguageModes: [.v6],
    cLanguageStandard: .c11
)
