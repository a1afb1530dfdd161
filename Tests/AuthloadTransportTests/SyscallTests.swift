import AuthloadCore
import Foundation
import Testing

@testable import AuthloadTransport

/// The one path of the transport's system calls (`System.swift`), and how a failed socket call becomes a typed
/// transport error.
@Suite("System calls: EINTR, would-block and errors")
struct SyscallTests {
    /// A connected pair of non-blocking stream sockets; the caller closes both.
    static func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        try #require(socketpair(AF_UNIX, type, 0, &fds) == 0)
        return (fds[0], fds[1])
    }

    @Test("a call interrupted by a signal is made again, and its result returned")
    func interruptedCallIsMadeAgain() throws {
        var calls = 0
        let result = try syscall(blocking: false, where: "test") { () -> Int32 in
            calls += 1
            guard calls < 3 else { return 7 }
            errno = EINTR
            return -1
        }
        #expect(result == .processed(7))
        #expect(calls == 3)
    }

    @Test("a non-blocking socket with nothing to read would block, as a value, and reads once there is something")
    func wouldBlockIsAValue() throws {
        let (a, b) = try Self.socketPair()
        defer {
            SystemCalls.close(a)
            SystemCalls.close(b)
        }
        var buffer = [UInt8](repeating: 0, count: 16)
        let empty = try buffer.withUnsafeMutableBytes { raw in
            try syscall(blocking: true, where: "recv") { recv(a, raw.baseAddress, raw.count, 0) }
        }
        #expect(empty == .wouldBlock)

        let sent = try [UInt8]("hi".utf8).withUnsafeBytes { raw in
            try syscall(blocking: true, where: "send") { send(b, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL)) }
        }
        #expect(sent == .processed(2))
        let read = try buffer.withUnsafeMutableBytes { raw in
            try syscall(blocking: true, where: "recv") { recv(a, raw.baseAddress, raw.count, 0) }
        }
        #expect(read == .processed(2))
        #expect(Array(buffer.prefix(2)) == Array("hi".utf8))
    }

    @Test("would-block is an error for a call not made as one that may block")
    func wouldBlockOnlyWhenAsked() throws {
        let (a, b) = try Self.socketPair()
        defer {
            SystemCalls.close(a)
            SystemCalls.close(b)
        }
        var byte: UInt8 = 0
        #expect(throws: IOError(EAGAIN, call: "recv")) {
            try syscall(blocking: false, where: "recv") { recv(a, &byte, 1, 0) }
        }
    }

    @Test("a failed call throws its errno and its name")
    func errorKeepsErrnoAndCall() throws {
        let (a, b) = try Self.socketPair()
        SystemCalls.close(a)
        SystemCalls.close(b)
        var byte: UInt8 = 0
        let error = try #require(throws: IOError.self) {
            try syscall(blocking: true, where: "recv") { recv(a, &byte, 1, 0) }
        }
        #expect(error == IOError(EBADF, call: "recv"))
        #expect(error.description == "recv: EBADF (Bad file descriptor)")
        #expect(error.systemCall == TransportError.SystemCall("recv", code: EBADF))
        #expect(throws: IOError(EBADF, call: "setsockopt(TCP_NODELAY)")) {
            try SystemCalls.setOption(a, Int32(IPPROTO_TCP), TCP_NODELAY, 1, "setsockopt(TCP_NODELAY)")
        }
    }

    @Test("a setsockopt that fails is an error, not dropped")
    func setOptionFailure() throws {
        let (a, b) = try Self.socketPair()
        defer {
            SystemCalls.close(a)
            SystemCalls.close(b)
        }
        // TCP_NODELAY means nothing to a Unix-domain socket.
        let error = try #require(throws: IOError.self) {
            try SystemCalls.setOption(a, Int32(IPPROTO_TCP), TCP_NODELAY, 1, "setsockopt(TCP_NODELAY)")
        }
        #expect(error.call == "setsockopt(TCP_NODELAY)")
        #expect(error.code != 0)
        try SystemCalls.setOption(a, SOL_SOCKET, SO_KEEPALIVE, 1, "setsockopt(SO_KEEPALIVE)")
        #expect(try SystemCalls.pendingError(a) == 0)
    }

    @Test("a write to a peer that is gone is a reset, typed, with the call and errno")
    func writeToClosedPeer() throws {
        let (a, b) = try Self.socketPair()
        defer { SystemCalls.close(a) }
        SystemCalls.close(b)
        let stream = PlainStream(fd: a)
        let result = [UInt8]("GET".utf8).withUnsafeBytes { stream.write($0) }
        guard case .failed(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.reason == .reset && error.kind == .connectionReset)
        #expect(error.systemCall == TransportError.SystemCall("send", code: EPIPE))
        // The same failure on a first write while connecting is the connect's.
        guard case .failed(let connecting) = [UInt8]("GET".utf8).withUnsafeBytes({ stream.writeWhileConnecting($0) }) else {
            Issue.record("expected a failure")
            return
        }
        #expect(connecting.detail == "connect" && connecting.systemCall?.name == "send")
    }

    @Test(
        "each errno a load generator meets maps to its typed reason, by the step it failed in",
        arguments: [
            (ECONNREFUSED, SocketStep.connecting, TransportError.Reason.refused),
            (ECONNRESET, .transferring, .reset),
            (EPIPE, .transferring, .reset),
            (ETIMEDOUT, .connecting, .timedOut(.connecting)),
            (EADDRNOTAVAIL, .connecting, .noFreeLocalPort),
            (EADDRNOTAVAIL, .opening, .sourceAddressNotLocal),
            (EMFILE, .opening, .outOfFileDescriptors),
            (ENFILE, .opening, .outOfFileDescriptors),
            (ENOBUFS, .opening, .outOfSocketMemory),
            (ENOMEM, .transferring, .outOfSocketMemory),
            (ENETUNREACH, .connecting, .unreachable),
            (EHOSTUNREACH, .connecting, .unreachable),
            (EACCES, .connecting, .unreachable),
            (EHOSTUNREACH, .transferring, .systemCallFailed),
            (EINVAL, .opening, .systemCallFailed)
        ])
    func errnoToReason(code: Int32, step: SocketStep, reason: TransportError.Reason) {
        let error = TransportError.socket(IOError(code, call: "call"), step)
        #expect(error.reason == reason)
        #expect(error.kind == TransportError(reason).kind)
        #expect(error.systemCall == TransportError.SystemCall("call", code: code))
    }
}
