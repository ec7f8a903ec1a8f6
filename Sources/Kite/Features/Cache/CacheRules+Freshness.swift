import Foundation
import HTTPTypes

extension CacheRules {
    /// How a stored response may be used for a request (RFC 9111 §4).
    enum Reuse: Equatable, Sendable {
        /// Fresh (§4.2): use it without contacting the origin.
        case fresh
        /// Stale, but allowed to be served (§4.2.4) for the reason given.
        case stale(Staleness)
        /// Use it only after a successful validation (§4.3).
        case mustValidate
    }

    /// What allows a stale response to be served.
    enum Staleness: Equatable, Sendable {
        /// The request's `max-stale` (RFC 9111 §5.2.1.2).
        case maxStale
        /// The response's `stale-while-revalidate` (RFC 5861 §3): serve it, and validate in the background.
        case whileRevalidate
    }

    /// How long the stored response is fresh for, in seconds (RFC 9111 §4.2.1).
    ///
    /// The first rule that applies: a shared cache's `s-maxage`; `max-age`; `Expires` less `Date` (the time the
    /// head arrived when `Date` is missing or invalid, RFC 9110 §6.6.1); and otherwise a heuristic (§4.2.2). An
    /// `Expires` that is not a valid HTTP-date (such as `0`) is in the past (§5.3), and several `Expires` lines make
    /// the response stale (§4.2.1), so both give 0. The heuristic applies only to a heuristically cacheable status,
    /// or to a response marked cacheable by `public` (or, in a private cache, by `private`, which §3 also accepts
    /// there): 10 % of the time from `Last-Modified` to `Date`, at most a day (86,400 s); 0 without a valid
    /// `Last-Modified` or when it is after `Date`. Never negative.
    ///
    /// - Parameters:
    ///   - stored: The stored response.
    ///   - shared: Whether the cache is shared.
    /// - Returns: The freshness lifetime in seconds, at least 0.
    static func freshnessLifetime(of stored: StoredResponseInfo, shared: Bool) -> Double {
        let fields = stored.response.headerFields
        let directives = CacheControl(fields)
        if shared, let sharedMaxAge = directives.sharedMaxAge { return Double(sharedMaxAge) }
        if let maxAge = directives.maxAge { return Double(maxAge) }
        let date = Self.dateValue(of: stored)
        let expires = fields[values: .expires]
        if !expires.isEmpty {
            guard expires.count == 1, let expiry = Self.httpDate(expires[0], now: stored.responseTime) else { return 0 }
            return Self.nonNegative(expiry.timeIntervalSince(date))
        }
        let markedCacheable =
            directives.isPublic || (!shared && (directives.isPrivate || !directives.privateFields.isEmpty))
        guard Self.heuristicallyCacheableStatuses.contains(stored.response.status.code) || markedCacheable,
            let lastModified = Self.date(.lastModified, in: fields, now: stored.responseTime)
        else { return 0 }
        return min(Self.heuristicLimit, Self.nonNegative(date.timeIntervalSince(lastModified)) / 10)
    }

    /// The stored response's current age, in seconds (RFC 9111 §4.2.3).
    ///
    /// Exactly §4.2.3: `age_value` from `Age` (0 when missing or invalid), `date_value` from `Date` (the response
    /// time when missing or invalid), `apparent_age = max(0, response_time - date_value)`,
    /// `response_delay = response_time - request_time`, `corrected_age_value = age_value + response_delay`,
    /// `corrected_initial_age = max(apparent_age, corrected_age_value)`, `resident_time = now - response_time`,
    /// and `current_age = corrected_initial_age + resident_time`. `Age` is a singleton: of several members (or
    /// lines) only the first counts, and when it is not delta-seconds the field is ignored (§5.1). Arithmetic is in
    /// `Double`, so no value overflows; a result below 0 (a clock gone backwards) is 0.
    ///
    /// - Parameters:
    ///   - stored: The stored response.
    ///   - now: The current time.
    /// - Returns: The age in seconds, at least 0.
    static func currentAge(of stored: StoredResponseInfo, now: Date) -> Double {
        let ageValue = Double(Self.ageValue(of: stored.response.headerFields))
        let apparentAge = max(0, stored.responseTime.timeIntervalSince(Self.dateValue(of: stored)))
        let responseDelay = stored.responseTime.timeIntervalSince(stored.requestTime)
        let correctedAgeValue = ageValue + responseDelay
        let correctedInitialAge = max(apparentAge, correctedAgeValue)
        let residentTime = now.timeIntervalSince(stored.responseTime)
        return Self.nonNegative(correctedInitialAge + residentTime)
    }

    /// How the stored response may be used for `request` at `now` (RFC 9111 §4, §4.2, §4.2.4, §5.2; RFC 5861 §3).
    ///
    /// The caller has already matched the target URI, the method and the variant (``matchesVariant(_:request:)``).
    /// In order:
    /// 1. The request's `no-cache` (or `Pragma: no-cache` without `Cache-Control`, §5.4) asks for validation.
    /// 2. The response's `no-cache` requires validation (§5.2.2.4). With field names, the simplest conforming
    ///    reading is taken: when the stored head has one of the named fields, it is validated before reuse.
    /// 3. The request's `max-age` requires `age <= max-age` (§5.2.1.1), and its `min-fresh` requires
    ///    `lifetime - age >= min-fresh` (§5.2.1.3); otherwise validation.
    /// 4. `age < lifetime`: fresh (§4.2).
    /// 5. Stale: `must-revalidate`, and in a shared cache `proxy-revalidate` or `s-maxage`, forbid any stale use
    ///    (§4.2.4, §5.2.2.2, §5.2.2.8, §5.2.2.10). The request's `max-stale` allows staleness (`age - lifetime`) up
    ///    to its value. Then the response's `stale-while-revalidate` allows it up to its value, unless the request
    ///    said it wants no stale response: `max-age` without `max-stale` (§5.2.1.1), or `min-fresh`. Otherwise
    ///    validation.
    ///
    /// `immutable` (RFC 8246) changes nothing here: it only tells a client not to reload a fresh response, and a
    /// request's `no-cache` is such an explicit reload. Neither does the request's `no-store` ("does not apply to
    /// the already stored response", §5.2.1.5) or `only-if-cached` (§5.2.1.7): with it, the caller answers 504
    /// instead of contacting the origin when the result is not `.fresh` or `.stale`. `stale-if-error` applies only
    /// after an error: see ``staleIfErrorAllows(_:request:now:shared:)``.
    ///
    /// - Parameters:
    ///   - stored: The stored response.
    ///   - request: The request being answered.
    ///   - now: The current time.
    ///   - shared: Whether the cache is shared.
    /// - Returns: Fresh, stale but usable, or in need of validation.
    static func reuse(of stored: StoredResponseInfo, for request: HTTPRequest, now: Date, shared: Bool) -> Reuse {
        let requested = CacheControl(request.headerFields)
        if requested.noCache || !requested.noCacheFields.isEmpty || CacheControl.pragmaNoCache(request.headerFields) {
            return .mustValidate
        }
        let directives = CacheControl(stored.response.headerFields)
        guard !Self.noCacheApplies(directives, to: stored.response) else { return .mustValidate }
        let lifetime = Self.freshnessLifetime(of: stored, shared: shared)
        let age = Self.currentAge(of: stored, now: now)
        if let maxAge = requested.maxAge, age > Double(maxAge) { return .mustValidate }
        if let minFresh = requested.minFresh, lifetime - age < Double(minFresh) { return .mustValidate }
        if age < lifetime { return .fresh }
        guard !Self.forbidsStale(directives, shared: shared) else { return .mustValidate }
        let staleness = age - lifetime
        if let maxStale = requested.maxStale, staleness <= Double(maxStale) { return .stale(.maxStale) }
        let clientRefusesStale = (requested.maxAge != nil && requested.maxStale == nil) || requested.minFresh != nil
        if !clientRefusesStale, let window = directives.staleWhileRevalidate, staleness <= Double(window) {
            return .stale(.whileRevalidate)
        }
        return .mustValidate
    }

    /// Whether the stored response may be served after validation failed with an error (RFC 5861 §4).
    ///
    /// An error is what would give a 500, 502, 503 or 504 response, or no response at all; the caller decides that.
    /// `stale-if-error=N` in the request or the response allows a response whose staleness (`age - lifetime`, 0 when
    /// fresh) is at most N; with both, the smaller N (each party's limit is kept). Never when the stored response
    /// forbids stale use (RFC 9111 §4.2.4): `must-revalidate`, in a shared cache `proxy-revalidate` or `s-maxage`,
    /// or a `no-cache` that applies (see ``reuse(of:for:now:shared:)``).
    ///
    /// - Parameters:
    ///   - stored: The stored response.
    ///   - request: The request being answered.
    ///   - now: The current time.
    ///   - shared: Whether the cache is shared.
    /// - Returns: `true` when the stored response may stand in for the error.
    static func staleIfErrorAllows(
        _ stored: StoredResponseInfo,
        request: HTTPRequest,
        now: Date,
        shared: Bool
    ) -> Bool {
        let directives = CacheControl(stored.response.headerFields)
        guard !Self.forbidsStale(directives, shared: shared), !Self.noCacheApplies(directives, to: stored.response)
        else { return false }
        let requested = CacheControl(request.headerFields).staleIfError
        let limit: Int
        switch (requested, directives.staleIfError) {
        case (let request?, let response?): limit = min(request, response)
        case (let request?, nil): limit = request
        case (nil, let response?): limit = response
        case (nil, nil): return false
        }
        let staleness = Self.currentAge(of: stored, now: now) - Self.freshnessLifetime(of: stored, shared: shared)
        return max(0, staleness) <= Double(limit)
    }

    /// The most a heuristic freshness lifetime may be: a day (RFC 9111 §4.2.2 leaves the choice to the cache).
    static let heuristicLimit: Double = 86_400

    /// `date_value`: the valid `Date`, or the time the head arrived (RFC 9111 §4.2.3, RFC 9110 §6.6.1).
    private static func dateValue(of stored: StoredResponseInfo) -> Date {
        Self.date(.date, in: stored.response.headerFields, now: stored.responseTime) ?? stored.responseTime
    }

    /// `age_value`: the first member of `Age` when it is delta-seconds, else 0 (RFC 9111 §5.1).
    private static func ageValue(of fields: HTTPFields) -> Int {
        guard let line = fields[values: .age].first,
            let first = line.split(separator: ",", omittingEmptySubsequences: false).first
        else { return 0 }
        return CacheControl.deltaSeconds(CacheControl.trimmed(first)) ?? 0
    }

    /// Whether the response's directives forbid serving it stale (RFC 9111 §4.2.4).
    private static func forbidsStale(_ directives: CacheControl, shared: Bool) -> Bool {
        directives.mustRevalidate || (shared && (directives.proxyRevalidate || directives.sharedMaxAge != nil))
    }

    /// Whether the response's `no-cache` requires validation: unqualified, or naming a field the head has.
    private static func noCacheApplies(_ directives: CacheControl, to response: HTTPResponse) -> Bool {
        directives.noCache
            || response.headerFields.contains { directives.noCacheFields.contains($0.name.canonicalName) }
    }

    /// `value`, or 0 when it is negative or not a number.
    private static func nonNegative(_ value: Double) -> Double {
        value > 0 ? value : 0
    }
}
