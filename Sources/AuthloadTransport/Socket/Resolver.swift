import AuthloadCore
import CSystem
import Foundation

/// Resolves host names off the event loops, once per name and port for the life of the transport.
///
/// A load test targets a handful of names; re-resolving per request would measure the resolver.
final class Resolver: Sendable {
    private let cache = Locked<[String: SocketAddress]>([:])
    private let queue = DispatchQueue(label: "authload.resolver")

    /// - Parameter isolation: the caller's; a cached name is answered without leaving it.
    func resolve(host: String, port: Int, isolation: isolated (any Actor)? = #isolation) async throws(TransportError) -> SocketAddress {
        let key = "\(host):\(port)"
        if let cached = cache.withLock({ $0[key] }) { return cached }
        if let numeric = SocketAddress(numericHost: host, port: port) {
            cache.withLock { $0[key] = numeric }
            return numeric
        }
        let result: Result<SocketAddress, TransportError> = await withCheckedContinuation(isolation: isolation) { continuation in
            queue.async { continuation.resume(returning: Self.lookUp(host: host, port: port)) }
        }
        let address = try result.get()
        cache.withLock { $0[key] = address }
        return address
    }

    private static func lookUp(host: String, port: Int) -> Result<SocketAddress, TransportError> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            return .failure(TransportError(.unresolvedHost, "\(host): \(String(cString: gai_strerror(status)))"))
        }
        defer { freeaddrinfo(list) }
        return .success(SocketAddress(raw: first.pointee.ai_addr, length: first.pointee.ai_addrlen))
    }
}
