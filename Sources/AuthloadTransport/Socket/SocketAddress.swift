import AuthloadCore
import CSystem
import Foundation

/// An IPv4 or IPv6 socket address, ready for `connect` or `bind`.
struct SocketAddress: Sendable {
    var storage = sockaddr_storage()
    var length: socklen_t = 0

    var family: Int32 { Int32(storage.ss_family) }

    /// Parses a numeric IPv4 or IPv6 address without touching the resolver.
    init?(numericHost host: String, port: Int) {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            self.init(copying: &v4)
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            self.init(copying: &v6)
            return
        }
        return nil
    }

    init<T>(copying address: inout T) {
        length = socklen_t(MemoryLayout<T>.size)
        withUnsafeMutableBytes(of: &storage) { target in
            withUnsafeBytes(of: &address) { target.copyMemory(from: $0) }
        }
    }

    init(raw: UnsafePointer<sockaddr>, length: socklen_t) {
        self.length = length
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: raw, count: Int(length)))
        }
    }

    func withSockaddr<R, E: Error>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws(E) -> R) throws(E) -> R {
        try withUnsafeBytes(of: storage) { raw throws(E) in try body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length) }
    }

    /// The numeric host, e.g. `127.0.0.2` or `::1`.
    var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        withUnsafeBytes(of: storage) { raw in
            let offset = family == AF_INET6 ? 8 : 4
            _ = inet_ntop(family, raw.baseAddress! + offset, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The port in host byte order.
    var port: Int {
        withUnsafeBytes(of: storage) { raw in
            // sin_port and sin6_port sit at the same offset, right after the family.
            Int(UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self)))
        }
    }

    /// The same address with another port.
    func withPort(_ port: Int) -> SocketAddress {
        var copy = self
        withUnsafeMutableBytes(of: &copy.storage) { raw in
            raw.storeBytes(of: UInt16(port).bigEndian, toByteOffset: 2, as: UInt16.self)
        }
        return copy
    }
}

/// Where in a connection's life a socket call failed: the same errno means another thing in each.
