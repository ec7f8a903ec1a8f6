import Kite

extension Session {
    /// The session the suite's tests share where any session will do: ``Session/default`` with room for the suite.
    ///
    /// Swift Testing starts hundreds of requests to the one in-process server at once. With the default 8
    /// connections per host they queue, and async-http-client bounds a request's wait in that queue by the connect
    /// timeout (10 s): on a loaded 2-core machine, requests at the back of the queue once failed with it (about
    /// one full run in two, measured on cb293e9; none in three runs with 64). The tests of ``Session/default``
    /// itself still use it.
    static let suite: Session = {
        var configuration = Session.Configuration()
        configuration.maximumConnectionsPerHost = 64
        return Session(configuration: configuration)
    }()
}
