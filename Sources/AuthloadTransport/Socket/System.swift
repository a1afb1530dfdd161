import AuthloadCore
import CSystem
import Foundation

// The one path of every system call the transport makes, after NIO's `System.swift`: a call interrupted by a
// signal is made again, a call that would block says so as a value, and a call that fails throws an `IOError`
// with its errno and its name. errno is read in this file only, right after the call that set it, so no other
// call in between (a log line, an allocation's `madvise`) can overwrite it, and no caller has to remember
// `EINTR` or compare against `EINPROGRESS`.

/// What a system call that did not fail came to.
enum IOResult<T: Equatable>: Equatable {
    /// It did its work and returned this.
    case processed(T)
    /// A non-blocking descriptor was not ready (EAGAIN, EWOULDBLOCK, or EINPROGRESS for a connect under way):
    /// try again when epoll says so.
    case wouldBlock
}

/// A system call that failed: its errno and its name.
struct IOError: Error, Equatable, CustomStringConvertible {
    /// The errno the call left.
    let code: Int32
    /// The call, e.g. `connect` or `setsockopt(TCP_NODELAY)`.
    let call: String

    init(_ code: Int32, call: String) {
        self.code = code
        self.call = call
    }

    /// `connect: ECONNREFUSED (Connection refused)`: the call, the errno by name, and its text.
    var description: String { "\(call): \(SystemErrno.name(code)) (\(SystemErrno.text(code)))" }

    /// The failure as the value errors carry above the transport.
    var systemCall: TransportError.SystemCall { TransportError.SystemCall(call, code: code) }
}

/// Makes the call `body` until it is not interrupted by a signal.
///
/// - Parameters:
///   - blocking: the call is made on a non-blocking descriptor and might have blocked: EAGAIN, EWOULDBLOCK and
///     EINPROGRESS come back as ``IOResult/wouldBlock``. Otherwise they are errors like any other.
///   - call: its name, for the error (a static string, so a call that succeeds builds no text).
/// - Throws: ``IOError`` when `body` returned -1 for any other reason.
@inline(__always)
func syscall<T: FixedWidthInteger>(blocking: Bool, where call: StaticString, _ body: () -> T) throws(IOError) -> IOResult<T> {
    while true {
        let result = body()
        guard result == -1 else { return .processed(result) }
        let code = errno
        if code == EINTR { continue }
        if blocking && (code == EAGAIN || code == EWOULDBLOCK || code == EINPROGRESS) { return .wouldBlock }
        throw IOError(code, call: call.description)
    }
}

/// The errno a library call left behind, for the calls that do their own system calls and report only that one
/// failed (OpenSSL's `SSL_ERROR_SYSCALL`): read here, right after, so errno stays in this file.
func lastErrno() -> Int32 { errno }

/// The calls the transport makes on sockets and descriptors, each through ``syscall(blocking:where:_:)``.
enum SystemCalls {
    /// Sets an integer socket option; its failure is an error, never dropped.
    static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32, _ call: StaticString) throws(IOError) {
        var value = value
        _ = try syscall(blocking: false, where: call) { setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) }
    }

    /// Sets a socket option held in a struct (SO_LINGER).
    static func setOption<V: BitwiseCopyable>(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: V, _ call: StaticString) throws(IOError)
    {
        var value = value
        _ = try syscall(blocking: false, where: call) { setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<V>.size)) }
    }

    /// The error pending on a socket (SO_ERROR): why a non-blocking connect failed, 0 when it did not.
    static func pendingError(_ fd: Int32) throws(IOError) -> Int32 {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = try syscall(blocking: false, where: "getsockopt(SO_ERROR)") { getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) }
        return code
    }

    /// Closes `fd`, the one call whose failure is left unread: not made again after EINTR, since Linux has released
    /// the descriptor by then and a second close might close one another thread has just been given; and any other
    /// failure leaves nothing to do, the descriptor being gone either way.
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }
}

/// errno values by name and text, for messages.
enum SystemErrno {
    static func text(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// The errno's name (`EADDRNOTAVAIL`) for the errors a load generator meets, else its number.
    static func name(_ code: Int32) -> String {
        switch code {
        case EADDRNOTAVAIL: "EADDRNOTAVAIL"
        case EADDRINUSE: "EADDRINUSE"
        case EMFILE: "EMFILE"
        case ENFILE: "ENFILE"
        case ENOBUFS: "ENOBUFS"
        case ENOMEM: "ENOMEM"
        case ECONNREFUSED: "ECONNREFUSED"
        case ECONNRESET: "ECONNRESET"
        case ECONNABORTED: "ECONNABORTED"
        case EPIPE: "EPIPE"
        case ETIMEDOUT: "ETIMEDOUT"
        case EHOSTUNREACH: "EHOSTUNREACH"
        case ENETUNREACH: "ENETUNREACH"
        case ENETDOWN: "ENETDOWN"
        case EACCES: "EACCES"
        case EPERM: "EPERM"
        case EINVAL: "EINVAL"
        case EAFNOSUPPORT: "EAFNOSUPPORT"
        case EBADF: "EBADF"
        case ENOTSOCK: "ENOTSOCK"
        default: "errno \(code)"
        }
    }
}
