import AuthloadCore
import Foundation
import Testing

@testable import AuthloadTransport

/// The loop's own queue: work its thread submits (a user's task resuming on a response) takes no lock and no
/// wake-up, and must still run in order, and run even when the loop stops under it.
@Suite("Event loop", .timeLimit(.minutes(1)))
struct EventLoopTests {
    @Test("work the loop's own thread submits runs in the order submitted, after the work that submitted it")
    func ownThreadOrder() async throws {
        let loop = try EventLoop(name: "test-loop")
        defer {
            loop.shutdown()
            loop.waitUntilStopped()
        }
        let order = Locked<[String]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            loop.execute {
                precondition(loop.inLoop)
                for step in ["first", "second", "third"] {
                    loop.execute { order.withLock { $0.append(step) } }
                }
                loop.execute { done.resume() }
                order.withLock { $0.append("submitter") }
            }
        }
        #expect(order.withLock { $0 } == ["submitter", "first", "second", "third"])
    }

    @Test("a task on the loop that stops it still runs to its end: what it enqueues after the stop runs elsewhere")
    func taskOutlivesStop() async throws {
        let loop = try EventLoop(name: "test-loop")
        let result = await Task(executorPreference: loop) { () async -> Int in
            precondition(loop.inLoop)
            loop.shutdown()
            // Each yield enqueues the task again from the loop's thread: before the stop takes effect, then after.
            for _ in 0..<3 { await Task.yield() }
            return 42
        }.value
        loop.waitUntilStopped()
        #expect(result == 42)
        #expect(loop.hasStopped)
    }

    @Test("a pause on the loop's timers ends when the loop stops before its deadline: its timers never fire again")
    func pauseEndsAtStop() async throws {
        let loop = try EventLoop(name: "test-loop")
        let paused = await Task(executorPreference: loop) { () async -> Bool in
            precondition(loop.inLoop)
            // The stop runs after this job, with the pause's timer an hour away.
            loop.shutdown()
            await loop.pause(for: .seconds(3_600), isolation: nil)
            return true
        }.value
        loop.waitUntilStopped()
        #expect(paused)
    }

    @Test("a pause asked for from another thread ends when the loop stops before starting it, or has stopped")
    func pauseFromElsewhereEndsAtStop() async throws {
        let loop = try EventLoop(name: "test-loop")
        // Queued behind the stop: the loop stops with the pause not yet started.
        loop.shutdown()
        await loop.pause(for: .seconds(3_600), isolation: nil)
        loop.waitUntilStopped()
        #expect(loop.hasStopped)
        await loop.pause(for: .seconds(3_600), isolation: nil)
    }

    @Test("a stopped loop's eventfd stays open while the loop exists, and closes when it is released")
    func wakeDescriptorOutlivesStop() throws {
        let descriptor: Int32
        let count: String
        do {
            let loop = try EventLoop(name: "test-loop")
            descriptor = loop.wakeFD
            loop.shutdown()
            loop.waitUntilStopped()
            // A submitter that saw the loop running may write once it has stopped: the loop's eventfd must take it.
            // The value marks this eventfd's counter, which the stopped loop no longer reads.
            var mark: UInt64 = 0x5EED_0001
            #expect(write(descriptor, &mark, 8) == 8)
            count = try #require(Self.eventCount(of: descriptor))
            #expect(UInt64(count, radix: 16).map { $0 >= mark } == true)
        }
        // Released: closed, or the number now names another file (not an eventfd with this counter).
        #expect(Self.eventCount(of: descriptor) != count)
    }

    /// The counter of the eventfd `descriptor` names (hex, as /proc shows it), nil when it names no eventfd.
    private static func eventCount(of descriptor: Int32) -> String? {
        guard let info = try? String(contentsOfFile: "/proc/self/fdinfo/\(descriptor)", encoding: .utf8) else { return nil }
        let line = info.split(separator: "\n").first { $0.hasPrefix("eventfd-count:") }
        return line.map { $0.dropFirst("eventfd-count:".count).trimmingCharacters(in: .whitespaces) }
    }
}
