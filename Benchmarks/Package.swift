// swift-tools-version:6.1
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, so Kite's package identity is the name of the
// folder the repository was cloned into.
let kite = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent.lowercased()

// Kite's benchmarks, kept apart so the main package's build stays lean. Run from the repository root:
//     swift package --package-path Benchmarks benchmark
let package = Package(
    name: "KiteBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(
            url: "https://github.com/ordo-one/package-benchmark.git",
            from: "1.38.1",
            traits: ["MallocInterposer"]
        ),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
    ],
    targets: [
        // The client swift-openapi-generator made for Kite's tests (Tests/KiteOpenAPITests/Generated, reached through
        // the symlink Benchmarks/KiteBenchmarks/Generated, not copied), in a module of its own: its `Client` would clash
        // with the benchmarks' `Client` enum. Its declarations are `internal`, so the module is compiled for
        // `@testable import`.
        .target(
            name: "GeneratedOpenAPIClient",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Benchmarks/KiteBenchmarks/Generated",
            swiftSettings: [.unsafeFlags(["-enable-testing"])]
        ),
        .executableTarget(
            name: "KiteBenchmarks",
            dependencies: [
                "GeneratedOpenAPIClient",
                .product(name: "Kite", package: kite),
                .product(name: "KiteOpenAPI", package: kite),
                .product(name: "KiteTestServer", package: kite),
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
            ],
            path: "Benchmarks/KiteBenchmarks",
            exclude: ["Generated"],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
    ]
)
