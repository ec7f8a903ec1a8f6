// swift-tools-version:6.1
import PackageDescription

// Kite's code and the tests that .ci/tsan-suites.txt runs, under ThreadSanitizer, kept apart as the fuzz targets are
// (Fuzz/Package.swift). Build and run from the repository root in the tests' build folder, as .ci/run does:
//
//   swift build --package-path TSan --scratch-path .build --build-tests --disable-build-manifest-caching
//   swift test --package-path TSan --scratch-path .build --skip-build --no-parallel --filter SUITE
//
// (Without --disable-build-manifest-caching, SwiftPM can reuse the plan of the package the folder built last and
// build none of this one; .ci/run says when that was seen.)
//
// The modules are links to Sources/ and Tests/, compiled here under names of their own (the build folder is shared)
// with `-sanitize=thread`. The sources still say `import Kite`: `-module-alias Kite=KiteUnderTSan` points them at this
// build, as SwiftPM's own module aliasing does for a dependency's product.
//
// Kite's dependencies are compiled as the library's build compiles them, without instrumentation, so this build
// reuses the tests' and compiles only the five modules below: minutes instead of a second build of async-http-client,
// Hummingbird, NIO's TLS and two copies of BoringSSL. The price (RELIABILITY.md): ThreadSanitizer sees every access
// in Kite's code and its tests, and the dependencies' locks (it intercepts the pthread calls), but no longer an
// access inside NIO, async-http-client or Hummingbird; a race between two of their threads in their own code is not
// found here.
let tsan = ["-sanitize=thread"]
let aliases = [
    "-module-alias", "Kite=KiteUnderTSan",
    "-module-alias", "KiteOpenAPI=KiteOpenAPIUnderTSan",
    "-module-alias", "KiteTestServer=KiteTestServerUnderTSan",
]
let instrumented: [SwiftSetting] = [.unsafeFlags(tsan + aliases)]
// ThreadSanitizer's runtime, in the test binary.
let runtime: [LinkerSetting] = [.unsafeFlags(tsan)]

let package = Package(
    name: "KiteTSan",
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
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.3.0"),
        .package(url: "https://github.com/vapor/multipart-kit.git", from: "4.7.1"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
    ],
    targets: [
        .target(
            name: "KiteUnderTSan",
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
        .target(
            name: "KiteOpenAPIUnderTSan",
            dependencies: [
                "KiteUnderTSan",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: instrumented
        ),
        .target(
            name: "KiteTestServerUnderTSan",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: instrumented
        ),
        .testTarget(
            name: "KiteTestsUnderTSan",
            dependencies: [
                "KiteUnderTSan", "KiteTestServerUnderTSan", "KiteOpenAPIUnderTSan",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOSOCKS", package: "swift-nio-extras"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: instrumented,
            linkerSettings: runtime
        ),
        .testTarget(
            name: "KiteOpenAPITestsUnderTSan",
            dependencies: [
                "KiteUnderTSan", "KiteOpenAPIUnderTSan", "KiteTestServerUnderTSan",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: instrumented,
            linkerSettings: runtime
        ),
    ]
)
