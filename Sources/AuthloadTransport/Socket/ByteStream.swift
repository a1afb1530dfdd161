import AuthloadCore
import CSystem
import Foundation

/// What a non-blocking read, write or handshake on a stream came to.
enum StreamResult: Equatable {
    /// This many bytes moved (for a handshake: it finished).
    case done(Int)
    /// Nothing moved now; try again when the socket is ready for `interest` (EPOLLIN or EPOLLOUT).
    /// TLS may need to write to read, or read to write, so the interest is not always the obvious one.
    case wouldBlock(interest: UInt32)
    /// The peer ended the stream (a read returned 0, or TLS `close_notify`).
    case end
    case failed(TransportError)
}

/// How a connection moves bytes on its socket: in the clear, or through TLS.
///
/// Connections talk to a stream instead of calling `recv`/`send` themselves, so every connection
/// (HTTP client, HTTP server, WebSocket) works the same over TCP and over TLS. A stream belongs to
/// one loop and is touched only on its thread; closing the socket stays with the loop (`loop.close`).
protocol ByteStream: AnyObject {
    var fd: Int32 { get }

    /// True when bytes are encrypted on the wire (TLS), so a handshake is worth timing.
    var isSecure: Bool { get }

    /// Drives the security handshake one step; `.done` once the stream is ready for data.
    /// Plain TCP is ready at once.
    func handshake() -> StreamResult

    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamResult

    /// Input already taken off the socket and waiting inside the stream (TLS records decrypted ahead).
    /// epoll cannot see it, so a reader must not stop while this is true. Loops are level-triggered:
    /// otherwise a short read may end the turn, and epoll reports the socket again if more is there.
    var hasBufferedInput: Bool { get }

    func write(_ bytes: UnsafeRawBufferPointer) -> StreamResult

    /// Says goodbye at the stream level before the socket closes (TLS `close_notify`); best effort.
    func shutdown()

    /// The application protocol the peer agreed to in the handshake (TLS ALPN: `h2`, `http/1.1`); nil when none was.
    var negotiatedProtocol: String? { get }
}

extension ByteStream {
    /// Plain TCP negotiates nothing.
    var negotiatedProtocol: String? { nil }

    /// Writes `bytes` from offset `written` on, as far as the socket takes them now; `written` advances by what went.
    ///
    /// The one write loop of every connection (HTTP client and server, WebSocket client and frames).
    ///
    /// - Returns: `.done` with the total once all of `bytes` is written; otherwise what stopped the writing.
    func write(_ bytes: [UInt8], from written: inout Int) -> StreamResult {
        while written < bytes.count {
            let offset = written
            let result = bytes.withUnsafeBytes { write(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
            guard case .done(let count) = result else { return result }
            written += count
        }
        return .done(written)
    }

    /// Reads what the socket holds into `buffer`, handing each chunk to `consume` for as long as it returns true.
    ///
    /// The one read loop of every connection. A short read ends it (the socket is drained: the next `recv` would
    /// only say EAGAIN) unless TLS holds decrypted input that epoll cannot see.
    func read(into buffer: UnsafeMutableRawBufferPointer, while consume: (UnsafeRawBufferPointer) -> Bool) -> ReadStop {
        while true {
            switch read(into: buffer) {
            case .done(let count):
                guard consume(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) else { return .stopped }
                if count < buffer.count && !hasBufferedInput { return .drained }
            case .wouldBlock(let interest):
                // TLS may need the socket writable to go on reading.
                return interest == EPOLLIN.rawValue ? .drained : .wants(interest)
            case .end: return .end
            case .failed(let error): return .failed(error)
            }
        }
    }
}

/// Why ``ByteStream/read(into:while:)`` stopped.
enum ReadStop {
    /// The consumer had enough (it may have closed the connection).
    case stopped
    /// Nothing more to read now; epoll reports the socket when there is.
    case drained
    /// TLS needs the socket ready for this (EPOLLOUT) to go on reading.
    case wants(UInt32)
    case end
    case failed(TransportError)
}

/// A TCP socket in the clear.
final class PlainStream: ByteStream {
    let fd: Int32

    init(fd: Int32) { self.fd = fd }

    var isSecure: Bool { false }

    func handshake() -> StreamResult { .done(0) }

    var hasBufferedInput: Bool { false }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamResult {
        do throws(IOError) {
            switch try syscall(blocking: true, where: "recv", { recv(fd, buffer.baseAddress, buffer.count, 0) }) {
            case .processed(0): return .end
            case .processed(let count): return .done(count)
            case .wouldBlock: return .wouldBlock(interest: EPOLLIN.rawValue)
            }
        } catch {
            return .failed(TransportError.socket(error, .transferring))
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> StreamResult { write(bytes, .transferring) }

    /// Writes on a socket whose connect may still be under way. Until it is up the socket takes nothing (`EAGAIN`);
    /// a connect that failed fails the write, and the error is named as the connect's.
    func writeWhileConnecting(_ bytes: UnsafeRawBufferPointer) -> StreamResult { write(bytes, .connecting) }

    private func write(_ bytes: UnsafeRawBufferPointer, _ step: SocketStep) -> StreamResult {
        do throws(IOError) {
            switch try syscall(blocking: true, where: "send", { Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }) {
            case .processed(let count): return .done(count)
            case .wouldBlock: return .wouldBlock(interest: EPOLLOUT.rawValue)
            }
        } catch {
            return .failed(TransportError.socket(error, step, operation: step == .connecting ? "connect" : nil))
        }
    }

    func shutdown() {}
}

extension TransportError {
    static let closedDuringHandshake = TransportError(.tls, "the server closed the connection during the TLS handshake")

    /// How a failure of a stream's handshake is reported: a reset is the server closing with our
    /// ClientHello unread, the same failed handshake as a close.
    func duringHandshake() -> TransportError { reason == .reset ? .closedDuringHandshake : self }
}
