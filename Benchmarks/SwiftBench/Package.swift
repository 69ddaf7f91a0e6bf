// swift-tools-version:6.1
// The Swift-side benchmark: the same Person workloads through Strata's Swift API, Strata's C API
// and GRDB, in one run (`make bench-swift`). A package of its own, so that users of Strata never
// fetch GRDB.
import PackageDescription

let package = Package(
    name: "StrataSwiftBench",
    dependencies: [
        .package(name: "Strata", path: "../.."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "bench-swift",
            dependencies: [
                .product(name: "Strata", package: "Strata"),
                .product(name: "CCore", package: "Strata"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources"
        ),
    ],
    swiftLanguageModes: [.v5]
)
