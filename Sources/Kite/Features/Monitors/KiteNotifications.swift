import Dispatch
import Foundation

extension BaseRequest {
    /// Posted when a request starts or continues (Alamofire 5's `Request.didResumeNotification`).
    public static let didResumeNotification = Notification.Name("dev.kite.notification.name.request.didResume")
    /// Posted when a request is suspended.
    public static let didSuspendNotification = Notification.Name("dev.kite.notification.name.request.didSuspend")
    /// Posted when a request is cancelled.
    public static let didCancelNotification = Notification.Name("dev.kite.notification.name.request.didCancel")
    /// Posted when a request is over, with its response, data or error set.
    public static let didFinishNotification = Notification.Name("dev.kite.notification.name.request.didFinish")
    /// The `userInfo` key of the request in these notifications.
    public static let notificationKey = "dev.kite.notification.key.request"
}

/// Posts ``BaseRequest/didResumeNotification``, ``BaseRequest/didSuspendNotification``,
/// ``BaseRequest/didCancelNotification`` and ``BaseRequest/didFinishNotification`` on
/// `NotificationCenter.default`, with the request in `userInfo[BaseRequest.notificationKey]`.
///
/// Alamofire's sessions post these by default; a Kite session posts them when given this monitor, so a
/// request nobody observes pays nothing for them. (Kite's request class is ``BaseRequest``: a type named
/// `Request` would clash with Vapor's and Hummingbird's in server code.)
///
/// ```swift
/// let session = Session(configuration: .default, eventMonitors: [KiteNotifications()])
/// let observer = NotificationCenter.default.addObserver(
///     forName: BaseRequest.didFinishNotification, object: nil, queue: nil
/// ) { notification in
///     let request = notification.userInfo?[BaseRequest.notificationKey] as? BaseRequest
///     print(request?.response?.status.code as Any)
/// }
/// ```
public struct KiteNotifications: EventMonitor {
    public let queue = DispatchQueue(label: "dev.kite.notifications")

    /// Creates the monitor.
    public init() {}

    public func requestDidResume(_ request: BaseRequest) { Self.post(BaseRequest.didResumeNotification, request) }
    public func requestDidSuspend(_ request: BaseRequest) { Self.post(BaseRequest.didSuspendNotification, request) }
    public func requestDidCancel(_ request: BaseRequest) { Self.post(BaseRequest.didCancelNotification, request) }
    public func requestDidFinish(_ request: BaseRequest) { Self.post(BaseRequest.didFinishNotification, request) }

    private static func post(_ name: Notification.Name, _ request: BaseRequest) {
        NotificationCenter.default.post(name: name, object: request, userInfo: [BaseRequest.notificationKey: request])
    }
}
