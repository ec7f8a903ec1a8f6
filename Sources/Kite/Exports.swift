// `import Kite` is all a user writes: methods, header fields and response heads are swift-http-types.
@_exported import HTTPTypes
