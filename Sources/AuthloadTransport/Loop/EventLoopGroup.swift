import AuthloadCore
import CSystem
import Foundation

/// The event loops of a process: one per core by default, shared by the client and the server side.
public final class EventLoopGroup: Sendable {
    public let loops: [EventLoop]
    private let counter = Locked(0)

    public init(loops count: Int = Machine.coreCount) throws(TransportError) {
        Sockets.raiseFileLimit()
        var loops: [EventLoop] = []
        for index in 0..<max(1, count) { loops.append(try EventLoop(name: "authload-loop-\(index)")) }
        self.loops = loops
    }

    /// The loop whose thread this is, if any.
    var current: EventLoop? { loops.first { $0.inLoop } }

    /// The next loop, round-robin.
    public func next() -> EventLoop {
        loops[
            counter.withLock { value in
                defer { value = (value + 1) % loops.count }
                return value
            }]
    }

    /// Stops every loop and waits until their threads have closed their sockets and released their
    /// connections, so a process that exits next does not tear its runtime down under a loop still
    /// releasing thousands of them (a run of 15,000 WebSockets once ended in SIGABRT after its report).
    public func shutdown() {
        for loop in loops { loop.shutdown() }
        for loop in loops { loop.waitUntilStopped() }
    }
}
