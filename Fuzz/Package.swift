// swift-tools-version:6.1
import PackageDescription

// Kite's libFuzzer targets, kept apart so the library's build never builds them. One binary holds every target
// (`KITE_FUZZ_TARGET` chooses one); build and run them from the repository root with `Fuzz/fuzz.sh`.
//
// The parsers under test are Kite's own sources (Sources/KiteUnderFuzz is a link to Sources/Kite), compiled here as
// a module of their own with coverage and AddressSanitizer. Kite's dependencies are compiled as the library's build
// compiles them, without instrumentation, so a build in the tests' build folder (`Fuzz/fuzz.sh build`, as CI does)
// reuses them and compiles only the two modules below: minutes instead of another build of async-http-client, NIO's
// TLS and two copies of BoringSSL. The price: coverage and AddressSanitizer stop at Kite's code (zlib, NIO and
// Foundation were never under AddressSanitizer; libFuzzer's edges inside them are no longer counted).
//
// `-enable-testing` lets the targets' `@testable import` reach Kite's internal parsers in a release build too
// (`Fuzz/fuzz.sh build-release`: the dependencies optimised, for long runs of the whole-client targets).
let instrumented: [SwiftSetting] = [.unsafeFlags(["-sanitize=fuzzer,address", "-enable-testing"])]

let package = Package(
    name: "KiteFuzz",
    // Kite's dependencies, as Package.swift at the root names them.
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.3.0"),
    ],
    targets: [
        .target(
            name: "KiteUnderFuzz",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSOCKS", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HTTPTypesFoundation", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Atomics", package: "swift-atomics"),
            ],
            exclude: ["Kite.docc"],
            swiftSettings: instrumented
        ),
        .executableTarget(
            name: "KiteFuzz",
            dependencies: [
                "KiteUnderFuzz",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Sources/KiteFuzz",
            // libFuzzer brings `main`: the module must not make one.
            swiftSettings: [.unsafeFlags(["-parse-as-library"])] + instrumented,
            // libFuzzer's driver and AddressSanitizer's runtime.
            linkerSettings: [.unsafeFlags(["-sanitize=fuzzer,address"])]
        ),
    ]
)
